// Minibatch schedules (fixed size and fixed time) and the speed model.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/schedule.h"
#include "hogwild/trainer.h"

using namespace hogwild;

namespace {
SparseProblem problem(std::size_t rows) {
  SparseGeneratorConfig c;
  c.rows = rows;
  c.features = 2000;
  c.nnz_per_row = 30;
  c.seed = 9;
  return generate_sparse(c);
}
}  // namespace

TEST_CASE("schedule and speed-model options parse, and bad ones say what was expected") {
  CHECK(ScheduleSpec::parse("fixed:32").batch == 32);
  CHECK(ScheduleSpec::parse("time:200us").window_ns == 200000);
  CHECK(ScheduleSpec::parse("time:2ms").window_ns == 2000000);
  CHECK(ScheduleSpec::parse("time:1.5s").window_ns == 1500000000);
  CHECK_THROWS_WITH_AS(ScheduleSpec::parse("fixed:0"),
                       "--schedule: expected fixed:B with B a batch size in [1, 1048576], found "
                       "'fixed:0'",
                       InputError);
  CHECK_THROWS_WITH_AS(ScheduleSpec::parse("time:200"), doctest::Contains("with a unit"),
                       InputError);
  CHECK_THROWS_WITH_AS(ScheduleSpec::parse("time:-1ms"), doctest::Contains("positive"), InputError);
  CHECK_THROWS_WITH_AS(ScheduleSpec::parse("sometimes"),
                       "--schedule: expected fixed:B or time:DURATION (e.g. time:200us), found "
                       "'sometimes'",
                       InputError);
  SpeedModel m;
  m.parse_speeds("1,0.5,0.25");
  CHECK(m.speeds == std::vector<double>{1, 0.5, 0.25});
  CHECK_THROWS_WITH_AS(m.parse_speeds("1,2"), doctest::Contains("--worker-speed"), InputError);
  CHECK_THROWS_WITH_AS(m.parse_speeds("1,,0.5"), doctest::Contains("--worker-speed"), InputError);
  CHECK_THROWS_WITH_AS(m.parse_straggler("exp:1us"), doctest::Contains("--straggler"), InputError);
  CHECK_THROWS_WITH_AS(m.parse_pause("2:1ms"), doctest::Contains("--pause"), InputError);
  TrainConfig c;
  c.threads = 2;
  c.speed.parse_speeds("1,1,1");
  CHECK_THROWS_WITH_AS(c.validate(), "--worker-speed: expected 2 speeds, one per worker, found 3",
                       InputError);
  c = {};
  c.simulate = 4;
  c.schedule = ScheduleSpec::parse("time:1ms");
  CHECK_THROWS_WITH_AS(
      c.validate(), doctest::Contains("--schedule: expected fixed:B with --simulate"), InputError);
}

TEST_CASE("fixed:B: every update has exactly B samples") {
  const auto p = problem(4800);  // divisible by B x workers: no partial batch at epoch ends
  for (const int threads : {1, 2, 4}) {
    for (const std::uint32_t b : {1u, 8u, 40u}) {
      CAPTURE(threads);
      CAPTURE(b);
      TrainConfig c;
      c.threads = threads;
      c.epochs = 2;
      c.schedule = ScheduleSpec::parse("fixed:" + std::to_string(b));
      const auto r = train(c, p.train, nullptr);
      CHECK(r.batch_sizes.count() == 2 * 4800 / b);
      CHECK(r.batch_sizes.buckets().size() == 1);
      CHECK(r.batch_sizes.quantile(0) == b);
      CHECK(r.batch_sizes.max() == b);
      CHECK(r.updates_applied == 2 * 4800 / b);
    }
  }
}

TEST_CASE("a sum update with step eta/B equals a mean update with step eta") {
  const auto p = problem(2000);
  TrainConfig c;
  c.policy = Policy::kSerial;
  c.epochs = 2;
  c.schedule = ScheduleSpec::parse("fixed:10");
  const auto mean = train(c, p.train, nullptr);
  c.schedule.mean = false;
  c.step /= 10;
  const auto sum = train(c, p.train, nullptr);
  for (std::size_t j = 0; j < mean.weights.size(); ++j) {
    REQUIRE(sum.weights[j] == doctest::Approx(mean.weights[j]).epsilon(1e-4));
  }
}

TEST_CASE("time windows: a worker at half speed fills half the batch") {
  const auto p = problem(20000);
  TrainConfig c;
  c.threads = 2;
  c.epochs = 2;
  c.schedule = ScheduleSpec::parse("time:300us");  // well below --max-batch samples
  c.speed.parse_speeds("1,0.5");
  // Stated tolerance: the ratio in [0.3, 0.8] (without the speed model it is 1). The slow
  // worker waits in proportion to its measured compute time, and the per-sample costs it does
  // not measure (clock reads, window checks) are a large share under AddressSanitizer, which
  // pushes the ratio up: 0.45-0.67 there on an idle machine, up to 0.79 in a CI run. Both
  // workers must also really run at once; on a machine whose cores are busy with other work
  // the OS may starve one of them, so the run is tried up to five times and passes if one
  // attempt is within the tolerance.
  double ratio = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const auto r = train(c, p.train, nullptr);
    REQUIRE(r.workers.size() == 2);
    CHECK(r.workers[0].samples == 20000);  // both finish their equal slices
    CHECK(r.workers[1].samples == 20000);
    const double fast = r.workers[0].batch_sizes.mean();
    const double slow = r.workers[1].batch_sizes.mean();
    MESSAGE("mean batch: fast worker " << fast << ", half-speed worker " << slow);
    ratio = slow / fast;
    if (ratio > 0.3 && ratio < 0.8) break;
  }
  CHECK(ratio > 0.3);
  CHECK(ratio < 0.8);
}

TEST_CASE("time windows are respected: at most W plus one clock stride and one sample") {
  const auto p = problem(30000);
  TrainConfig c;
  c.threads = 1;
  c.epochs = 2;
  c.schedule = ScheduleSpec::parse("time:200us");
  // Up to three attempts: a busy machine may preempt the worker in many windows.
  Report r;
  for (int attempt = 0; attempt < 3; ++attempt) {
    r = train(c, p.train, nullptr);
    if (static_cast<double>(r.windows_ns.quantile(0.9)) < 200e3 * (1 + 1.0 / 8) + 50e3) break;
  }
  const auto& w = r.windows_ns;
  REQUIRE(w.count() > 10);
  MESSAGE("windows: p50 " << w.quantile(0.5) << " ns, p99 " << w.quantile(0.99) << " ns, max "
                          << w.max() << " ns; mean batch " << r.batch_sizes.mean());
  // The clock is read every batch/32 samples, so a window overshoots by at most 1/32 of its
  // samples plus the one in flight; stated slack: W/8 (the stride, with samples slower than
  // the previous window's) plus 50 us (a sample, the clock, a short interruption).
  // p90, not max: a window during which the OS preempts the thread cannot keep any bound,
  // and on a shared 2-core machine a few of ~100 windows are preempted.
  CHECK(static_cast<double>(w.quantile(0.9)) < 200e3 * (1 + 1.0 / 8) + 50e3);
  // Windows end at epoch boundaries too (a partial window is closed there), so the median is
  // the meaningful lower check.
  CHECK(static_cast<double>(w.quantile(0.5)) >= 200e3 * 0.97);
}

TEST_CASE("the speed model's injected costs follow their distributions") {
  SpeedModel m;
  m.parse_speeds("1,0.25");
  m.parse_straggler("shifted-exp:2us:5us");
  SpeedSampler fast(m, 0, 77);
  SpeedSampler slow(m, 1, 78);
  constexpr int kDraws = 20000;
  std::vector<double> draws;
  for (int i = 0; i < kDraws; ++i) draws.push_back(fast.extra_ns(0.0));
  // The slowdown part is exact: cost x (1/speed - 1), on top of a straggler draw >= shift.
  CHECK(slow.extra_ns(1000.0) >= 3000.0 + 2000.0);
  // Kolmogorov-Smirnov against shift + Exp(mean): D < 1.63 / sqrt(n) at the 1% level.
  std::sort(draws.begin(), draws.end());
  double d = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double x = draws[static_cast<std::size_t>(i)];
    const double cdf = x < 2000.0 ? 0.0 : 1.0 - std::exp(-(x - 2000.0) / 5000.0);
    d = std::max({d, std::abs(cdf - static_cast<double>(i) / kDraws),
                  std::abs(cdf - static_cast<double>(i + 1) / kDraws)});
  }
  CHECK(d < 1.63 / std::sqrt(static_cast<double>(kDraws)));
  // Pauses: a Bernoulli(P) stall of exactly DURATION; 5 standard deviations either side.
  SpeedModel pauses;
  pauses.parse_pause("0.1:1ms");
  SpeedSampler sampler(pauses, 0, 5);
  int stalls = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double pause = sampler.pause_ns();
    CHECK((pause == 0.0 || pause == 1e6));
    stalls += pause > 0;
  }
  const double sd = std::sqrt(kDraws * 0.1 * 0.9);
  CHECK(std::abs(stalls - kDraws * 0.1) < 5 * sd);
}

TEST_CASE("delayed minibatches: every computed update is applied") {
  const auto p = problem(6000);
  for (const char* schedule : {"fixed:16", "time:100us"}) {
    for (const int threads : {1, 2}) {
      CAPTURE(schedule);
      CAPTURE(threads);
      TrainConfig c;
      c.threads = threads;
      c.epochs = 2;
      c.schedule = ScheduleSpec::parse(schedule);
      c.delay = DelaySpec::parse("uniform:6");
      c.staleness_sample = 1;
      const auto r = train(c, p.train, nullptr);
      CHECK(r.updates_applied == r.updates_computed);
      CHECK(r.batch_sizes.count() == r.updates_applied);
      std::uint64_t samples = 0;
      for (const auto& w : r.workers) samples += w.samples;
      CHECK(samples == 2 * p.train.rows());
      CHECK(r.curve.size() == 3);
    }
  }
}

TEST_CASE("dynamic sharding: every sample once, and a slow worker takes fewer") {
  const auto p = problem(20000);
  TrainConfig c;
  c.threads = 2;
  c.epochs = 2;
  c.dynamic_sharding = true;
  const auto even = train(c, p.train, nullptr);
  REQUIRE(even.workers.size() == 2);
  CHECK(even.workers[0].samples + even.workers[1].samples == 40000);
  CHECK(even.updates_applied == 40000);  // logistic, one sample per update
  c.speed.parse_speeds("1,0.25");
  // Expected about 4:1; stated bound 2:1 (the slow worker busy-waits 3x its compute time).
  // Up to three attempts, as above: the OS may starve a worker on a busy machine.
  std::uint64_t fast = 0, slow = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto skewed = train(c, p.train, nullptr);
    CHECK(skewed.workers[0].samples + skewed.workers[1].samples == 40000);
    fast = skewed.workers[0].samples;
    slow = skewed.workers[1].samples;
    MESSAGE("samples: fast " << fast << ", quarter-speed " << slow);
    if (fast > 2 * slow) break;
  }
  CHECK(fast > 2 * slow);
}
