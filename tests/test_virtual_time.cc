// Simulation in virtual time (--clock virtual) and bounded staleness (--bounded-staleness), in
// simulation and in threads: orders, costs, time windows and the staleness bound, each against
// what the protocol implies.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/report.h"
#include "hogwild/schedule.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;

namespace {

// Seeded data with a planted hyperplane, and a test set from the same distribution.
SparseProblem problem(std::size_t rows) { return test::sparse_problem(rows, 400, 12, 5, 1000); }

// The report as JSON without wall-clock times, and without the keys that name the clock.
nlohmann::json comparable(const Report& report) {
  auto json = nlohmann::json::parse(to_json(report));
  test::strip_timings(json);
  json["config"].erase("clock");
  json["config"].erase("sample_cost");
  for (auto& e : json["epochs"]) e.erase("virtual_seconds");
  for (auto& p : json["curve"]) p.erase("virtual_seconds");
  json["final"].erase("virtual_seconds");
  return json;
}

TrainConfig simulated(int workers, const ModelSpec& model) {
  TrainConfig c;
  c.model = model;
  c.simulate = workers;
  c.virtual_time = true;
  c.epochs = 2;
  c.optimizer.step = 0.1;
  c.staleness_sample = 1;
  return c;
}

// The staleness stale synchronous parallel allows: between an update's read and its write
// each other worker applies at most 2S + 1 updates.
std::uint64_t ssp_limit(int workers, int bound) {
  return static_cast<std::uint64_t>(workers - 1) * static_cast<std::uint64_t>(2 * bound + 1);
}

}  // namespace

TEST_CASE("virtual time with equal costs trains as rounds do, for both kernels") {
  const auto p = problem(1200);
  for (const ModelSpec& model : {ModelSpec{LinearModel{}}, ModelSpec{SoftmaxModel{}}}) {
    for (const int workers : {1, 3, 8}) {
      CAPTURE(workers);
      TrainConfig c = simulated(workers, model);
      c.schedule = ScheduleSpec::parse("fixed:1");
      c.delay = DelaySpec::parse("uniform:4");
      const Report virtual_run = train(c, p.train, &p.test);
      c.virtual_time = false;
      const Report rounds = train(c, p.train, &p.test);
      CHECK(comparable(virtual_run) == comparable(rounds));
      // Every worker takes rows / K samples at 1 us each per epoch.
      const double epoch_seconds = static_cast<double>(1200 / workers) * 1e-6;
      CHECK(*virtual_run.epochs.back().virtual_seconds == doctest::Approx(2 * epoch_seconds));
    }
  }
}

TEST_CASE("a virtual-time run with stragglers, pauses and time windows repeats bit for bit") {
  const auto p = problem(3000);
  for (const ModelSpec& model : {ModelSpec{LinearModel{}}, ModelSpec{SoftmaxModel{}}}) {
    TrainConfig c = simulated(16, model);
    c.schedule = ScheduleSpec::parse("time:20us");
    c.speed.parse_speeds("0.25,1,0.5");
    c.speed.parse_straggler("shifted-exp:200ns:1us");
    c.speed.parse_pause("0.01:30us");
    c.sample_cost_ns = 700;
    const Report first = train(c, p.train, &p.test);
    const Report second = train(c, p.train, &p.test);
    auto a = nlohmann::json::parse(to_json(first));
    auto b = nlohmann::json::parse(to_json(second));
    // Wall-clock keys only differ; virtual times and their histograms are part of the result.
    for (auto* j : {&a, &b}) {
      for (const char* key : {"train_seconds", "samples_per_second"}) j->erase(key);
      for (auto& e : (*j)["epochs"]) e.erase("seconds"), e.erase("elapsed");
      (*j)["final"].erase("seconds"), (*j)["final"].erase("elapsed");
      for (auto& point : (*j)["curve"]) point.erase("seconds");
    }
    CHECK(a == b);
    CHECK(a["staleness"]["micros"]["mean"].get<double>() > 0);
    CHECK(a["epochs"].back()["virtual_seconds"].get<double>() > 0);
  }
}

TEST_CASE("time windows in virtual time hold samples in proportion to each worker's speed") {
  const auto p = problem(3000);
  for (const ModelSpec& model : {ModelSpec{LinearModel{}}, ModelSpec{SoftmaxModel{}}}) {
    TrainConfig c = simulated(3, model);
    c.epochs = 1;
    c.schedule = ScheduleSpec::parse("time:16us");
    c.speed.parse_speeds("1,0.5,0.25");
    const Report r = train(c, p.train, nullptr);
    REQUIRE(r.workers.size() == 3);
    // A sample costs 1 us / speed: a 16 us window holds 16, 8 and 4 samples, every window but
    // the one the epoch's end cuts short (1000 = 62 x 16 + 8).
    const std::uint64_t expected[] = {16, 8, 4};
    const std::uint64_t windows[] = {63, 125, 250};
    for (std::size_t k = 0; k < 3; ++k) {
      CAPTURE(k);
      CHECK(r.workers[k].samples == 1000);
      CHECK(r.workers[k].updates == windows[k]);
      CHECK(r.workers[k].batch_sizes.quantile(0.5) == expected[k]);
      CHECK(r.workers[k].batch_sizes.max() == expected[k]);
    }
    // The epoch ends when the slowest worker's 1000 samples at 4 us are done.
    CHECK(*r.epochs.back().virtual_seconds == doctest::Approx(4e-3));
  }
}

TEST_CASE("bounded staleness holds exactly in simulation, and a straggler makes the others wait") {
  const auto p = problem(4000);
  // Dynamic sharding and loss evaluations within the epoch end workers' shares with partly
  // filled minibatches, which count against the bound as any other update.
  for (const int workers : {2, 4, 8}) {
    for (const bool dynamic : {false, true}) {
      TrainConfig c = simulated(workers, LinearModel{});
      c.epochs = 1;
      c.schedule = ScheduleSpec::parse("fixed:4");
      c.speed.parse_speeds("0.25");
      c.dynamic_sharding = dynamic;
      c.evals_per_epoch = dynamic ? 3 : 1;
      const Report free_run = train(c, p.train, nullptr);
      CAPTURE(workers);
      CAPTURE(dynamic);
      // Unbounded, each of the straggler's updates misses several of every fast worker's.
      CHECK(free_run.staleness.updates.max() > ssp_limit(workers, 0));
      for (const int bound : {0, 1, 4}) {
        CAPTURE(bound);
        c.bounded_staleness = bound;
        const Report r = train(c, p.train, nullptr);
        CHECK(r.staleness.updates.max() <= ssp_limit(workers, bound));
        CHECK(r.updates_applied == r.updates_computed);
        CHECK(r.samples == 4000);
        std::uint64_t waits = 0;
        for (const auto& w : r.workers) waits += w.bound_waits;
        CHECK(waits > 0);
        CHECK(r.workers[0].bound_waits == 0);  // the straggler is never ahead
        // Waiting costs virtual time: the fast workers end with the straggler, not before.
        CHECK(*r.epochs.back().virtual_seconds >= *free_run.epochs.back().virtual_seconds);
      }
    }
  }
}

TEST_CASE("bounded staleness holds in threads") {
  const auto p = problem(6000);
  for (const int threads : {2, 3, 4}) {
    for (const int bound : {0, 2}) {
      CAPTURE(threads);
      CAPTURE(bound);
      TrainConfig c;
      c.threads = threads;
      c.epochs = 2;
      c.optimizer.step = 0.1;
      c.schedule = ScheduleSpec::parse("fixed:3");
      c.staleness_sample = 1;
      c.bounded_staleness = bound;
      const Report r = train(c, p.train, &p.test);
      CHECK(r.staleness.updates.max() <= ssp_limit(threads, bound));
      CHECK(r.samples == 12000);
      CHECK(r.updates_applied == r.updates_computed);
      CHECK(r.epochs.back().test->accuracy.value_or(0) > 0.8);
    }
  }
}

TEST_CASE("dynamic sharding in virtual time: workers claim samples in proportion to their speed") {
  const auto p = problem(25600);
  for (const ModelSpec& model : {ModelSpec{LinearModel{}}, ModelSpec{SoftmaxModel{}}}) {
    TrainConfig c = simulated(2, model);
    c.epochs = 1;
    c.schedule = ScheduleSpec::parse("fixed:1");
    c.dynamic_sharding = true;
    c.speed.parse_speeds("1,0.25");
    const Report r = train(c, p.train, nullptr);
    REQUIRE(r.workers.size() == 2);
    // A sample takes 1 us at full speed and 4 us at a quarter: 4 samples against 1, to the
    // one sample the last claim decides.
    CHECK(r.workers[0].samples >= 20479);
    CHECK(r.workers[0].samples <= 20481);
    CHECK(r.workers[0].samples + r.workers[1].samples == 25600);
    CHECK(*r.epochs.back().virtual_seconds == doctest::Approx(20480e-6).epsilon(1e-3));
    c.bounded_staleness = 0;  // bulk-synchronous: the fast worker waits for every update
    const Report synchronous = train(c, p.train, nullptr);
    CHECK(synchronous.workers[0].samples + synchronous.workers[1].samples == 25600);
    CHECK(synchronous.workers[0].bound_waits > 0);
    CHECK(*synchronous.epochs.back().virtual_seconds > *r.epochs.back().virtual_seconds);
  }
}

TEST_CASE("a measured sample cost is the model's own time per sample, and virtual time uses it") {
  const auto p = problem(4000);
  TrainConfig c = simulated(4, LinearModel{});
  c.epochs = 1;
  c.measure_sample_cost = true;
  const Report r = train(c, p.train, nullptr);
  CHECK(r.config.measure_sample_cost);
  CHECK(r.config.sample_cost_ns >= 1);
  // Equal workers, 1000 samples each at the measured cost.
  CHECK(*r.epochs.back().virtual_seconds ==
        doctest::Approx(1000.0 * static_cast<double>(r.config.sample_cost_ns) * 1e-9));
  const auto json = nlohmann::json::parse(to_json(r));
  CHECK(json["config"]["sample_cost"].get<std::string>().ends_with("ns (measured)"));
  TrainConfig threads;
  threads.measure_sample_cost = true;
  CHECK_THROWS_WITH_AS(train(threads, p.train, nullptr),
                       "--sample-cost: expected measured only with --clock virtual", InputError);
}

TEST_CASE("write latency: updates land a fixed time after they are sent, for both kernels") {
  // Equal workers step in lockstep at 0, c, 2c, ...; with a latency of j samples' cost, the
  // update worker k sends at its m-th step lands after j more steps, behind the other
  // workers' updates sent before it: it misses min(m, j - 1) steps of every other worker and
  // the k updates sent with it by lower workers.
  const auto p = problem(1200);
  for (const ModelSpec& model : {ModelSpec{LinearModel{}}, ModelSpec{SoftmaxModel{}}}) {
    for (const int workers : {2, 4, 8}) {
      for (const std::int64_t j : {1, 2, 5}) {
        CAPTURE(workers);
        CAPTURE(j);
        TrainConfig c = simulated(workers, model);
        c.epochs = 1;
        c.schedule = ScheduleSpec::parse("fixed:1");
        c.write_latency_ns = j * c.sample_cost_ns;
        const Report r = train(c, p.train, nullptr);
        Histogram expected;
        const auto k_max = static_cast<std::uint64_t>(workers);
        for (std::uint64_t m = 0; m < 1200 / k_max; ++m) {
          for (std::uint64_t k = 0; k < k_max; ++k) {
            expected.record(std::min<std::uint64_t>(m, j - 1) * (k_max - 1) + k);
          }
        }
        CHECK(r.staleness.updates.buckets() == expected.buckets());
        // In time, every update is exactly the latency old when it lands.
        CHECK(r.staleness.nanos.count() == 1200);
        CHECK(r.staleness.nanos.mean() == static_cast<double>(j * c.sample_cost_ns));
        CHECK(r.staleness.nanos.max() == static_cast<std::uint64_t>(j * c.sample_cost_ns));
        CHECK(r.updates_applied == 1200);
      }
    }
  }
}

TEST_CASE("read latency lengthens each worker's cycle and changes no order among equal workers") {
  const auto p = problem(1200);
  for (const ModelSpec& model : {ModelSpec{LinearModel{}}, ModelSpec{SoftmaxModel{}}}) {
    for (const std::uint32_t batch : {1u, 4u}) {
      CAPTURE(batch);
      TrainConfig c = simulated(3, model);
      c.schedule = ScheduleSpec::parse("fixed:" + std::to_string(batch));
      const Report plain = train(c, p.train, &p.test);
      c.read_latency_ns = 3000;
      const Report slow = train(c, p.train, &p.test);
      auto slow_json = comparable(slow);
      slow_json["config"].erase("read_latency");
      CHECK(slow_json == comparable(plain));
      // Each worker's 400 samples per epoch: 400 / B updates of B x 1 us, each followed by
      // 3 us waiting for the parameters.
      const double per_epoch = (400.0 / batch) * (batch * 1e-6 + 3e-6);
      CHECK(*slow.epochs.back().virtual_seconds == doctest::Approx(2 * per_epoch));
    }
  }
}

TEST_CASE("latency with delays, stragglers and time windows repeats bit for bit") {
  const auto p = problem(2000);
  for (const ModelSpec& model : {ModelSpec{LinearModel{}}, ModelSpec{SoftmaxModel{}}}) {
    for (const bool global : {false, true}) {
      CAPTURE(global);
      TrainConfig c = simulated(12, model);
      c.schedule = ScheduleSpec::parse("time:5us");
      c.speed.parse_straggler("shifted-exp:200ns:1us");
      c.delay = DelaySpec::parse("uniform:3");
      c.global_delay = global;
      c.read_latency_ns = 1500;
      c.write_latency_ns = 7000;
      c.evals_per_epoch = 3;
      const Report a = train(c, p.train, &p.test);
      const Report b = train(c, p.train, &p.test);
      CHECK(comparable(a) == comparable(b));
      CHECK(a.epochs.back().virtual_seconds == b.epochs.back().virtual_seconds);
      // Every update computed lands, and none before the latency has passed.
      CHECK(a.updates_applied == a.updates_computed);
      CHECK(a.samples == 4000);
      CHECK(a.staleness.nanos.count() == a.updates_applied);
      CHECK(a.staleness.nanos.quantile(0) >= 7000 * 97 / 100);  // histogram buckets: within 3%
    }
  }
}
