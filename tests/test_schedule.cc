// Minibatch schedules (fixed:B, time:W), the speed model and sharding, in the linear and the
// model kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "engine/rng.h"
#include "engine/samplers.h"
#include "hogwild/clock.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/ratings.h"
#include "hogwild/report.h"
#include "hogwild/schedule.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;

namespace {
SparseProblem problem(std::size_t rows) { return test::sparse_problem(rows, 2000, 30, 9); }

// One manual clock per worker, on which a sample costs `sample_ns`; kept to be read after the
// run.
struct ManualClocks {
  explicit ManualClocks(std::int64_t sample_ns) : sample_ns(sample_ns) {}
  // Callbacks (of either trainer) that give each worker its clock.
  template <class Callbacks>
  Callbacks callbacks() {
    Callbacks callbacks;
    callbacks.clock = [this](int worker) {
      auto clock = std::make_shared<ManualClock>(sample_ns);
      const auto w = static_cast<std::size_t>(worker);
      if (made.size() <= w) made.resize(w + 1);
      made[w] = clock;
      return clock;
    };
    return callbacks;
  }
  std::int64_t sample_ns;
  std::vector<std::shared_ptr<ManualClock>> made;
};

// Each worker of a run on 1 us-a-sample manual clocks with W = 100 us, `samples` samples in
// all in equal static slices: at speed s, every window holds exactly 100 s samples and lasts
// exactly W, and the worker waited exactly (1/s - 1) us per sample.
template <class Report>
void check_speeds(const Report& r, const std::vector<double>& speeds, const ManualClocks& clocks,
                  std::uint64_t samples) {
  for (std::size_t w = 0; w < r.workers.size(); ++w) {
    CAPTURE(w);
    const double speed = speeds[w];
    const auto& worker = r.workers[w];
    CHECK(worker.samples == samples / r.workers.size());
    CHECK(worker.batch_sizes.mean() == 100 * speed);
    CHECK(static_cast<double>(worker.batch_sizes.max()) == 100 * speed);
    CHECK(worker.windows_ns.mean() == 100e3);
    CHECK(worker.windows_ns.max() == 100000);
    CHECK(static_cast<double>(clocks.made[w]->waited_ns()) ==
          static_cast<double>(worker.samples) * 1000 * (1 / speed - 1));
  }
}

// Each worker's windows in a run of `epochs` on manual clocks: all of `full` samples and
// `full` x `sample_ns` long, but the last of each epoch, which holds the rest of the worker's
// slice; so all time on the clock is in windows.
template <class Report>
void check_windows(const Report& r, std::uint64_t full, std::int64_t sample_ns, int epochs) {
  for (const auto& worker : r.workers) {
    const std::uint64_t slice = worker.samples / static_cast<std::uint64_t>(epochs);
    REQUIRE(slice * static_cast<std::uint64_t>(epochs) == worker.samples);
    CHECK(worker.batch_sizes.max() == full);
    CHECK(worker.windows_ns.max() == full * static_cast<std::uint64_t>(sample_ns));
    CHECK(worker.windows_ns.count() ==
          static_cast<std::uint64_t>(epochs) * ((slice + full - 1) / full));
    CHECK(worker.windows_ns.mean() * static_cast<double>(worker.windows_ns.count()) ==
          static_cast<double>(worker.samples) * static_cast<double>(sample_ns));
  }
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
      const auto r = hogwild::train(c, p.train, nullptr);
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
  const auto mean = hogwild::train(c, p.train, nullptr);
  c.schedule->mean = false;
  c.optimizer.step = 0.05;  // the linear default 0.5 over the batch of 10
  const auto sum = hogwild::train(c, p.train, nullptr);
  for (std::size_t j = 0; j < mean.weights.size(); ++j) {
    REQUIRE(sum.weights[j] == doctest::Approx(mean.weights[j]).epsilon(1e-4));
  }
}

TEST_CASE("time windows on a manual clock: a worker at speed s fills exactly s of the batch") {
  // A sample costs 1 us on each worker's clock and W = 100 us: a window of a full-speed worker
  // holds exactly 100 samples, at half speed 50, at quarter speed 25, every window lasts
  // exactly W, and what a worker waited is its slowdown, (1/s - 1) us per sample; whatever
  // the OS does with the threads.
  const auto p = problem(20000);
  for (const char* speeds : {"1,0.5", "1,0.5,0.25,1"}) {
    CAPTURE(speeds);
    TrainConfig c;
    c.speed.parse_speeds(speeds);
    c.threads = static_cast<int>(c.speed.speeds.size());
    c.epochs = 2;
    c.schedule = ScheduleSpec::parse("time:100us");
    ManualClocks clocks(1000);
    const auto r = hogwild::train(c, p.train, nullptr, clocks.callbacks<Callbacks>());
    REQUIRE(r.workers.size() == c.speed.speeds.size());
    check_speeds(r, c.speed.speeds, clocks, 2 * 20000);
  }
}

TEST_CASE("time windows on a manual clock end at the first sample at or past W") {
  // A sample costs 3 us and W = 200 us: every window holds 67 samples and lasts 201 us, W plus
  // less than one sample, except the last of each worker's epoch, which ends with its slice.
  const auto p = problem(30000);
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    TrainConfig c;
    c.threads = threads;
    c.epochs = 2;
    c.schedule = ScheduleSpec::parse("time:200us");
    ManualClocks clocks(3000);
    const auto r = hogwild::train(c, p.train, nullptr, clocks.callbacks<Callbacks>());
    check_windows(r, 67, 3000, 2);
  }
}

TEST_CASE("the speed model's injected costs follow their distributions") {
  SpeedModel m;
  m.parse_speeds("1,0.25");
  m.parse_straggler("shifted-exp:2us:5us");
  detail::SpeedSampler fast(m, 0, 77);
  detail::SpeedSampler slow(m, 1, 78);
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
  detail::SpeedSampler sampler(pauses, 0, 5);
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
      const auto r = hogwild::train(c, p.train, nullptr);
      CHECK(r.updates_applied == r.updates_computed);
      CHECK(r.batch_sizes.count() == r.updates_applied);
      std::uint64_t samples = 0;
      for (const auto& w : r.workers) samples += w.samples;
      CHECK(samples == 2 * p.train.rows());
      CHECK(r.curve.size() == 3);
    }
  }
}

TEST_CASE("dynamic sharding: every sample once, at several thread counts") {
  // How many samples each worker takes depends on how fast it runs, a timing question
  // (bench/dynamic_sharding.sh); that each sample is taken exactly once holds for every
  // interleaving.
  const auto p = problem(20000);
  for (const int threads : {2, 3, 4}) {
    CAPTURE(threads);
    TrainConfig c;
    c.threads = threads;
    c.epochs = 2;
    c.dynamic_sharding = true;
    const auto r = hogwild::train(c, p.train, nullptr);
    REQUIRE(r.workers.size() == static_cast<std::size_t>(threads));
    std::uint64_t samples = 0;
    for (const auto& w : r.workers) samples += w.samples;
    CHECK(samples == 40000);
    CHECK(r.updates_applied == 40000);  // logistic, one sample per update
  }
}

// ---- The model trainer (softmax, MLP, factorisation) ----

namespace {

// `classes` Gaussian classes in `cols` dimensions (class c centred at 2 e_c).
DenseDataset blobs(std::size_t rows, std::size_t cols, std::size_t classes, std::uint64_t seed) {
  DenseDataset d;
  d.cols = cols;
  detail::Rng rng(seed);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto label = static_cast<std::int32_t>(rng.below(classes));
    for (std::size_t j = 0; j < cols; ++j) {
      const double centre = j == static_cast<std::size_t>(label) ? 2.0 : 0.0;
      d.features.push_back(static_cast<float>(centre + 0.7 * rng.normal()));
    }
    d.labels.push_back(label);
  }
  return d;
}

SparseProblem sparse(std::size_t rows) { return test::sparse_problem(rows, 500, 12, 6); }

Ratings ratings(std::size_t users, std::size_t items) {
  RatingsGeneratorConfig c;
  c.users = users;
  c.items = items;
  c.rank = 4;
  c.density = 0.2;
  c.seed = 3;
  return generate_ratings(c).train;
}

// Independent reference: softmax regression (weights k x d column-major as the model keeps
// them, then k biases), one step of plain SGD on the mean gradient of `samples` taken at `w`.
// Features come from `x(i)` as (index, value) pairs.
template <class Features>
void softmax_step(std::vector<double>& w, std::size_t d, std::size_t k,
                  const std::vector<std::int32_t>& y, const std::vector<std::uint32_t>& samples,
                  double eta, const Features& x) {
  std::vector<double> grad(w.size(), 0.0);
  std::vector<double> z(k);
  for (const auto i : samples) {
    const auto pairs = x(i);
    for (std::size_t c = 0; c < k; ++c) z[c] = w[d * k + c];
    for (const auto& [j, v] : pairs) {
      for (std::size_t c = 0; c < k; ++c) z[c] += w[j * k + c] * v;
    }
    const double top = *std::max_element(z.begin(), z.end());
    double sum = 0;
    for (auto& v : z) sum += (v = std::exp(v - top));
    for (std::size_t c = 0; c < k; ++c) {
      const double dz = z[c] / sum - (static_cast<std::int32_t>(c) == y[i] ? 1.0 : 0.0);
      for (const auto& [j, v] : pairs) grad[j * k + c] += dz * v;
      grad[d * k + c] += dz;
    }
  }
  for (std::size_t p = 0; p < w.size(); ++p) {
    w[p] -= eta * grad[p] / static_cast<double>(samples.size());
  }
}

// The trainer's shuffle of epoch `epoch` (it reshuffles the previous epoch's order).
void shuffle(std::vector<std::uint32_t>& order, std::uint64_t seed, int epoch) {
  detail::Rng rng(detail::derive_seed(seed, static_cast<std::uint64_t>(epoch)));
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
}

}  // namespace

TEST_CASE("model trainer, fixed:B: every update has exactly B samples") {
  const auto dense = blobs(5120, 6, 3, 1);  // 20 x 256: no partial batch, static or dynamic
  const auto mf = ratings(200, 150);
  for (const int threads : {1, 2}) {
    for (const std::uint32_t b : {1u, 8u, 32u}) {
      for (const bool dynamic : {false, true}) {
        CAPTURE(threads);
        CAPTURE(b);
        CAPTURE(dynamic);
        TrainConfig c;
        c.model = hogwild::SoftmaxModel{};
        c.threads = threads;
        c.epochs = 2;
        c.schedule = ScheduleSpec::parse("fixed:" + std::to_string(b));
        c.dynamic_sharding = dynamic;
        const auto r = hogwild::train(c, dense, nullptr);
        CHECK(r.config.schedule->batch == b);
        CHECK(r.batch_sizes.count() == 2 * 5120 / b);
        CHECK(r.batch_sizes.buckets().size() == 1);
        CHECK(r.batch_sizes.quantile(0) == b);
        CHECK(r.batch_sizes.max() == b);
        CHECK(r.updates_applied == 2 * 5120 / b);
        std::uint64_t samples = 0;
        for (const auto& w : r.workers) samples += w.samples;
        CHECK(samples == 2 * 5120);
      }
    }
  }
  // Factorisation (sparse rows): batches of 4 within each worker's slice, the last one of a
  // slice holding what is left.
  TrainConfig c;
  c.model = hogwild::FactorisationModel{};
  c.threads = 2;
  c.epochs = 1;
  c.schedule = hogwild::ScheduleSpec{.batch = static_cast<std::uint32_t>(4)};
  const auto r = hogwild::train(c, mf, nullptr);
  const std::size_t n = mf.size();
  const std::size_t slices[] = {n / 2, n - n / 2};
  std::uint64_t expected = 0;
  for (const auto s : slices) expected += (s + 3) / 4;
  CHECK(r.batch_sizes.count() == expected);
  CHECK(r.batch_sizes.quantile(0.5) == 4);
  CHECK(r.batch_sizes.max() == 4);
}

TEST_CASE("model trainer: a mean time window on one thread is the serial full-window step") {
  // A window of an hour never closes by time: it closes at the end of each evaluation segment,
  // so with S segments per epoch each update is the mean gradient over the segment's samples
  // at the parameters the segment started from. The window is computed in chunks (1 sample at
  // first, then 1/16 of the previous window), so this checks the accumulation across chunks
  // against a serial reference that knows nothing of chunks: full-batch gradient steps of
  // softmax regression, in double precision.
  const std::size_t n = 480, d = 7, k = 3;
  const auto data = blobs(n, d, k, 5);
  const auto problem = sparse(n);
  std::vector<std::int32_t> sparse_y;
  for (const float label : problem.train.labels) sparse_y.push_back(label > 0 ? 1 : 0);
  for (const int segments : {1, 3}) {
    for (const bool is_sparse : {false, true}) {
      for (const bool mean : {true, false}) {
        CAPTURE(segments);
        CAPTURE(is_sparse);
        CAPTURE(mean);
        TrainConfig c;
        c.model = hogwild::SoftmaxModel{};
        c.threads = 1;
        c.epochs = 3;
        c.seed = 11;
        c.optimizer.schedule = Schedule::kConstant;
        c.schedule = ScheduleSpec::parse("time:3600s");
        c.schedule->max_batch = static_cast<std::uint32_t>(n);
        c.schedule->mean = mean;
        c.evals_per_epoch = segments;
        const double eta = 0.5;
        const std::size_t window = n / static_cast<std::size_t>(segments);
        // A sum update with step eta / window is the mean update with step eta.
        c.optimizer.step = mean ? eta : eta / static_cast<double>(window);
        const auto r = is_sparse ? hogwild::train(c, problem.train, nullptr)
                                 : hogwild::train(c, data, nullptr);
        REQUIRE(r.batch_sizes.count() == static_cast<std::uint64_t>(3 * segments));
        CHECK(r.batch_sizes.mean() == doctest::Approx(static_cast<double>(window)));
        CHECK(r.batch_sizes.max() == window);
        CHECK(r.curve.size() == static_cast<std::size_t>(1 + 3 * segments));

        const std::size_t dim = is_sparse ? problem.train.num_features : d;
        const std::size_t classes = is_sparse ? 2 : k;
        std::vector<double> w((dim + 1) * classes, 0.0);
        std::vector<std::uint32_t> order(n);
        std::iota(order.begin(), order.end(), 0u);
        for (int epoch = 1; epoch <= 3; ++epoch) {
          shuffle(order, c.seed, epoch);
          for (int s = 0; s < segments; ++s) {
            const std::vector<std::uint32_t> part(order.begin() + s * window,
                                                  order.begin() + (s + 1) * window);
            if (is_sparse) {
              softmax_step(w, dim, classes, sparse_y, part, eta, [&](std::uint32_t i) {
                std::vector<std::pair<std::size_t, double>> pairs;
                const auto row = problem.train.row(i);
                for (std::size_t q = 0; q < row.indices.size(); ++q)
                  pairs.emplace_back(row.indices[q], row.values[q]);
                return pairs;
              });
            } else {
              softmax_step(w, dim, classes, data.labels, part, eta, [&](std::uint32_t i) {
                std::vector<std::pair<std::size_t, double>> pairs;
                std::vector<float> row(d);
                data.copy_row(i, row.data());
                for (std::size_t j = 0; j < d; ++j) pairs.emplace_back(j, row[j]);
                return pairs;
              });
            }
          }
        }
        REQUIRE(r.weights.size() == w.size());
        double worst = 0;
        for (std::size_t p = 0; p < w.size(); ++p) {
          worst = std::max(worst, std::abs(r.weights[p] - w[p]) / (1e-3 + std::abs(w[p])));
        }
        MESSAGE("largest relative difference from the serial reference: " << worst);
        CHECK(worst < 1e-3);
      }
    }
  }
}

TEST_CASE("model trainer, time windows on a manual clock: speed s fills exactly s of the batch") {
  // As for the linear kernel: 1 us a sample, W = 100 us; a window's chunks are sized from the
  // time per sample so far and still end exactly at W.
  const auto data = blobs(8000, 20, 5, 2);
  for (const hogwild::ModelSpec& model :
       {hogwild::ModelSpec{hogwild::SoftmaxModel{}}, hogwild::ModelSpec{hogwild::MlpModel{{32}}}}) {
    for (const char* speeds : {"1,0.5", "1,0.5,0.25,1"}) {
      CAPTURE(hogwild::model_name(model));
      CAPTURE(speeds);
      TrainConfig c;
      c.model = model;
      c.speed.parse_speeds(speeds);
      c.threads = static_cast<int>(c.speed.speeds.size());
      c.epochs = 1;
      c.schedule = ScheduleSpec::parse("time:100us");
      ManualClocks clocks(1000);
      const auto r = hogwild::train(c, data, nullptr, clocks.callbacks<Callbacks>());
      REQUIRE(r.workers.size() == c.speed.speeds.size());
      check_speeds(r, c.speed.speeds, clocks, 8000);
    }
  }
}

TEST_CASE("model trainer, time windows on a manual clock end at the first sample at or past W") {
  // 3 us a sample, W = 200 us: 67 samples and 201 us a window, as in the linear kernel, for a
  // dense and a sparse-gradient model, at one and two threads.
  const auto dense = blobs(6000, 20, 4, 3);
  const auto mf = ratings(300, 200);
  for (const hogwild::ModelSpec& model : {hogwild::ModelSpec{hogwild::SoftmaxModel{}},
                                          hogwild::ModelSpec{hogwild::FactorisationModel{}}}) {
    for (const int threads : {1, 2}) {
      CAPTURE(hogwild::model_name(model));
      CAPTURE(threads);
      TrainConfig c;
      c.model = model;
      c.threads = threads;
      c.epochs = 2;
      c.schedule = ScheduleSpec::parse("time:200us");
      ManualClocks clocks(3000);
      const auto callbacks = clocks.callbacks<Callbacks>();
      const auto r = std::holds_alternative<hogwild::SoftmaxModel>(model)
                         ? hogwild::train(c, dense, nullptr, callbacks)
                         : hogwild::train(c, mf, nullptr, callbacks);
      check_windows(r, 67, 3000, 2);
    }
  }
}

TEST_CASE("pauses and stragglers on a manual clock cost what was drawn, in both kernels") {
  // --pause 0.1:1ms stalls a sample with probability 0.1 for exactly 1 ms: a worker waits a
  // whole number of ms, Binomial(n, 0.1) of them (5 standard deviations either side, fixed
  // seeds). --straggler shifted-exp:2us:5us adds 2 us + Exp(mean 5 us) per sample: at least
  // 2 us each, a mean of 7 us within 5 standard errors.
  const auto p = problem(6000);
  const auto dense = blobs(6000, 10, 3, 4);
  for (const bool linear : {true, false}) {
    for (const char* schedule : {"fixed:1", "fixed:16"}) {
      CAPTURE(linear);
      CAPTURE(schedule);
      SpeedModel pauses, stragglers;
      pauses.parse_pause("0.1:1ms");
      stragglers.parse_straggler("shifted-exp:2us:5us");
      for (const SpeedModel* speed : {&pauses, &stragglers}) {
        ManualClocks clocks(1000);
        std::vector<std::uint64_t> samples;
        if (linear) {
          TrainConfig c;
          c.threads = 2;
          c.schedule = ScheduleSpec::parse(schedule);
          c.speed = *speed;
          for (const auto& w :
               hogwild::train(c, p.train, nullptr, clocks.callbacks<Callbacks>()).workers)
            samples.push_back(w.samples);
        } else {
          TrainConfig c;
          c.model = hogwild::SoftmaxModel{};
          c.threads = 2;
          c.schedule = ScheduleSpec::parse(schedule);
          c.speed = *speed;
          for (const auto& w :
               hogwild::train(c, dense, nullptr, clocks.callbacks<Callbacks>()).workers)
            samples.push_back(w.samples);
        }
        REQUIRE(samples.size() == 2);
        for (std::size_t w = 0; w < 2; ++w) {
          const auto n = static_cast<double>(samples[w]);
          const auto waited = clocks.made[w]->waited_ns();
          if (speed == &pauses) {
            CHECK(waited % 1000000 == 0);
            const double stalls = static_cast<double>(waited / 1000000);
            CHECK(std::abs(stalls - 0.1 * n) < 5 * std::sqrt(n * 0.1 * 0.9));
          } else {
            CHECK(static_cast<double>(waited) >= 2000 * n);
            CHECK(std::abs(static_cast<double>(waited) / n - 7000) < 5 * 5000 / std::sqrt(n));
          }
        }
      }
    }
  }
}

TEST_CASE("model trainer: delayed windows, dynamic sharding and the curve lose no sample") {
  const auto data = blobs(6000, 10, 3, 4);
  for (const char* schedule : {"fixed:16", "time:100us"}) {
    for (const bool dynamic : {false, true}) {
      CAPTURE(schedule);
      CAPTURE(dynamic);
      TrainConfig c;
      c.model = hogwild::SoftmaxModel{};
      c.threads = 2;
      c.epochs = 2;
      c.schedule = ScheduleSpec::parse(schedule);
      c.delay = DelaySpec::parse("uniform:6");
      c.staleness_sample = 1;
      c.dynamic_sharding = dynamic;
      c.evals_per_epoch = 4;
      const auto r = hogwild::train(c, data, nullptr);
      CHECK(r.updates_applied == r.updates_computed);
      CHECK(r.batch_sizes.count() == r.updates_applied);
      CHECK(r.staleness.updates.count() == r.updates_applied);
      std::uint64_t samples = 0, updates = 0;
      for (const auto& w : r.workers) {
        samples += w.samples;
        updates += w.updates;
      }
      CHECK(samples == 12000);
      CHECK(updates == r.updates_applied);
      // The batch sizes add up to the samples.
      CHECK(r.batch_sizes.mean() * static_cast<double>(r.batch_sizes.count()) ==
            doctest::Approx(12000));
      // 1 + 4 points per epoch, time and updates never going back.
      REQUIRE(r.curve.size() == 9);
      for (std::size_t i = 1; i < r.curve.size(); ++i) {
        CHECK(r.curve[i].seconds >= r.curve[i - 1].seconds);
        CHECK(r.curve[i].updates >= r.curve[i - 1].updates);
      }
      CHECK(r.curve.back().updates == r.updates_applied);
    }
  }
}

TEST_CASE("model trainer: schedule options are checked, and both reports name batches alike") {
  const auto data = blobs(200, 4, 2, 7);
  auto expect = [&](TrainConfig c, const char* text) {
    CHECK_THROWS_WITH_AS(hogwild::train(c, data, nullptr), doctest::Contains(text), InputError);
  };
  TrainConfig c;
  c.model = hogwild::SoftmaxModel{};
  c.threads = 2;
  c.speed.parse_speeds("1,1,1");
  expect(c, "--worker-speed: expected 2 speeds, one per worker, found 3");
  c = {};
  c.simulate = 4;
  c.schedule = ScheduleSpec::parse("time:1ms");
  expect(c, "--schedule: expected fixed:B with --simulate");
  c = {};
  c.simulate = 2;
  c.dynamic_sharding = true;
  expect(c, "--sharding: expected static with --simulate in rounds");
  c = {};
  c.evals_per_epoch = 0;
  expect(c, "--evals-per-epoch: expected a count in [1, 1000], found 0");
  c = {};
  c.schedule = ScheduleSpec::parse("time:1ms");
  c.schedule->max_batch = 0;
  expect(c, "--max-batch: expected a sample count in [1, 1048576], found 0");

  // Simulation with fixed minibatches is reproducible, with or without curve points.
  c = {};
  c.model = hogwild::SoftmaxModel{};
  c.simulate = 3;
  c.epochs = 2;
  c.evals_per_epoch = 3;
  c.delay = DelaySpec::parse("const:2");
  const auto a = hogwild::train(c, data, nullptr);
  const auto b = hogwild::train(c, data, nullptr);
  CHECK(a.weights == b.weights);
  CHECK(a.curve.size() == 7);

  // The model report's batch_size and window_micros have the linear report's keys.
  TrainConfig m;
  m.model = hogwild::SoftmaxModel{};
  m.threads = 2;
  m.epochs = 1;
  m.schedule = ScheduleSpec::parse("time:50us");
  const auto model_json = nlohmann::json::parse(to_json(hogwild::train(m, data, nullptr)));
  const auto p = sparse(400);
  TrainConfig l;
  l.threads = 2;
  l.epochs = 1;
  l.schedule = ScheduleSpec::parse("time:50us");
  const auto linear_json = nlohmann::json::parse(to_json(hogwild::train(l, p.train, nullptr)));
  const auto keys = [](const nlohmann::json& j) {
    std::set<std::string> out;
    for (const auto& [key, _] : j.items()) out.insert(key);
    return out;
  };
  for (const char* key : {"batch_size", "window_micros"}) {
    CAPTURE(key);
    REQUIRE(model_json.contains(key));
    CHECK(keys(model_json[key]) == keys(linear_json[key]));
  }
  CHECK(keys(model_json["batch_size"]["per_worker"][0]) ==
        keys(linear_json["batch_size"]["per_worker"][0]));
  CHECK(keys(model_json["curve"][0]) == keys(linear_json["curve"][0]));
  for (const char* key : {"schedule", "batch_reduce", "max_batch", "worker_speed", "straggler",
                          "pause", "evals_per_epoch", "sharding"}) {
    CAPTURE(key);
    CHECK(model_json["config"].contains(key));
    CHECK(linear_json["config"].contains(key));
  }
  CHECK(model_json["config"]["schedule"] == "time:50us");
  CHECK(model_json["batch_size"]["per_worker"].size() == 2);
}
