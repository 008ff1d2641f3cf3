// Minibatch schedules (fixed:B, time:W), the speed model and sharding, in the linear and the
// model kernels.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "engine/rng.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/model_trainer.h"
#include "hogwild/ratings.h"
#include "hogwild/report.h"
#include "hogwild/schedule.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;

namespace {
SparseProblem problem(std::size_t rows) { return test::sparse_problem(rows, 2000, 30, 9); }
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

// ---- The model trainer (softmax, MLP, factorisation) ----

namespace {

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

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
        ModelConfig c;
        c.model = ModelKind::kSoftmax;
        c.threads = threads;
        c.epochs = 2;
        c.schedule = ScheduleSpec::parse("fixed:" + std::to_string(b));
        c.dynamic_sharding = dynamic;
        const auto r = train_model(c, dense, nullptr);
        CHECK(r.config.batch == b);
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
  ModelConfig c;
  c.model = ModelKind::kFactorisation;
  c.threads = 2;
  c.epochs = 1;
  c.batch = 4;
  const auto r = train_model(c, mf, nullptr);
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
        ModelConfig c;
        c.model = ModelKind::kSoftmax;
        c.threads = 1;
        c.epochs = 3;
        c.seed = 11;
        c.optimizer.schedule = Schedule::kConstant;
        c.schedule = ScheduleSpec::parse("time:3600s");
        c.schedule.max_batch = static_cast<std::uint32_t>(n);
        c.schedule.mean = mean;
        c.evals_per_epoch = segments;
        const double eta = 0.5;
        const std::size_t window = n / static_cast<std::size_t>(segments);
        // A sum update with step eta / window is the mean update with step eta.
        c.optimizer.step = mean ? eta : eta / static_cast<double>(window);
        const auto r =
            is_sparse ? train_model(c, problem.train, nullptr) : train_model(c, data, nullptr);
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
                for (std::size_t j = 0; j < d; ++j) pairs.emplace_back(j, data.row(i)[j]);
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

TEST_CASE("model trainer, time windows: a worker at half speed fills half the batch") {
  // Softmax on dense data and an MLP, 2 threads, each on its own slice. Stated tolerance: the
  // ratio of the slow worker's mean batch to the fast one's in [0.3, 0.8]. Wider than the
  // linear trainer's 0.5 +- 0.15: every window close writes the whole dense model, whose cache
  // lines both workers share, and this slows the fast worker by a varying amount. On this
  // 2-core machine, idle, the half-speed worker's batch held at 320-400 samples while the fast
  // one's ranged from 425 to 800 (single-run ratios 0.33 to 0.93), so a run is tried up to
  // five times.
  const auto data = blobs(40000, 40, 5, 2);
  for (const auto model : {ModelKind::kSoftmax, ModelKind::kMlp}) {
    CAPTURE(to_string(model));
    ModelConfig c;
    c.model = model;
    c.hidden = {128};
    c.threads = 2;
    c.epochs = 1;
    // The window holds some 400 samples of the fast worker (and lasts at least 100 us),
    // whatever a sample costs on this build (a sanitizer makes them many times dearer, and a
    // chunk's fixed cost more so: windows of a few samples would measure that, not speed).
    ModelConfig probe = c;
    probe.threads = 1;
    probe.schedule = ScheduleSpec::parse("fixed:32");
    const auto timing = train_model(probe, data, nullptr);
    const double per_sample_ns = timing.train_seconds * 1e9 / static_cast<double>(timing.samples);
    c.schedule = ScheduleSpec::parse(
        "time:" + std::to_string(std::max<long long>(100000, std::llround(400 * per_sample_ns))) +
        "ns");
    c.schedule.max_batch = 1 << 16;
    c.speed.parse_speeds("1,0.5");
    double ratio = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {
      const auto r = train_model(c, data, nullptr);
      REQUIRE(r.workers.size() == 2);
      CHECK(r.workers[0].samples == 20000);  // static slices: both finish their own
      CHECK(r.workers[1].samples == 20000);
      const double fast = r.workers[0].batch_sizes.mean();
      const double slow = r.workers[1].batch_sizes.mean();
      MESSAGE(to_string(model) << " (" << c.schedule.text << "): mean batch: fast worker " << fast
                               << ", half-speed worker " << slow);
      ratio = slow / fast;
      if (ratio > 0.3 && ratio < 0.8) break;
    }
    if (kThreadSanitizer) {
      // Instrumented shared-memory accesses cost what they cost whatever the worker's speed,
      // so under ThreadSanitizer only the direction is checked; the run itself is for races.
      CHECK(ratio < 0.9);
    } else {
      CHECK(ratio > 0.3);
      CHECK(ratio < 0.8);
    }
  }
}

TEST_CASE("model trainer, time windows are respected: W plus one sample and a stated slack") {
  // One thread. Each chunk is sized to take half the time left in the window, so a window
  // overshoots W by about one sample (under 1 us here) when the time per sample holds steady.
  // Stated slack: W/8 (a chunk that runs slower than predicted) plus 50 us (the clock, a short
  // interruption). p90, not max: a window during which the OS preempts the thread keeps no
  // bound. Up to three attempts, as above.
  const auto dense = blobs(30000, 20, 4, 3);
  const auto mf = ratings(2000, 1000);
  for (const auto model : {ModelKind::kSoftmax, ModelKind::kFactorisation}) {
    CAPTURE(to_string(model));
    ModelConfig c;
    c.model = model;
    c.threads = 1;
    c.epochs = 2;
    c.schedule = ScheduleSpec::parse("time:200us");
    c.schedule.max_batch = 1 << 20;  // cheap samples: W, not the count, closes the windows
    const double bound = 200e3 * (1 + 1.0 / 8) + 50e3;
    ModelReport r;
    for (int attempt = 0; attempt < 3; ++attempt) {
      r = model == ModelKind::kSoftmax ? train_model(c, dense, nullptr)
                                       : train_model(c, mf, nullptr);
      if (static_cast<double>(r.windows_ns.quantile(0.9)) < bound) break;
    }
    const auto& w = r.windows_ns;
    REQUIRE(w.count() > 10);
    MESSAGE(to_string(model) << " windows: p50 " << w.quantile(0.5) << " ns, p90 "
                             << w.quantile(0.9) << " ns, max " << w.max() << " ns; mean batch "
                             << r.batch_sizes.mean());
    CHECK(static_cast<double>(w.quantile(0.9)) < bound);
    // The last window of each epoch closes early; the median must reach W.
    CHECK(static_cast<double>(w.quantile(0.5)) >= 200e3 * 0.97);
    CHECK(r.batch_sizes.count() == w.count());
  }
}

TEST_CASE("model trainer: delayed windows, dynamic sharding and the curve lose no sample") {
  const auto data = blobs(6000, 10, 3, 4);
  for (const char* schedule : {"fixed:16", "time:100us"}) {
    for (const bool dynamic : {false, true}) {
      CAPTURE(schedule);
      CAPTURE(dynamic);
      ModelConfig c;
      c.model = ModelKind::kSoftmax;
      c.threads = 2;
      c.epochs = 2;
      c.schedule = ScheduleSpec::parse(schedule);
      c.delay = DelaySpec::parse("uniform:6");
      c.staleness_sample = 1;
      c.dynamic_sharding = dynamic;
      c.evals_per_epoch = 4;
      const auto r = train_model(c, data, nullptr);
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
  // A quarter-speed worker under dynamic sharding takes fewer samples (expected about 4:1,
  // stated bound 2:1), up to three attempts.
  const auto larger = blobs(40000, 40, 5, 8);
  ModelConfig c;
  c.model = ModelKind::kSoftmax;
  c.threads = 2;
  c.epochs = 2;
  c.dynamic_sharding = true;
  c.speed.parse_speeds("1,0.25");
  std::uint64_t fast = 0, slow = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const auto r = train_model(c, larger, nullptr);
    fast = r.workers[0].samples;
    slow = r.workers[1].samples;
    CHECK(fast + slow == 80000);
    MESSAGE("samples: fast " << fast << ", quarter-speed " << slow);
    if (fast > 2 * slow && slow > 0) break;
  }
  CHECK(fast > 2 * slow);
  CHECK(slow > 0);
}

TEST_CASE("model trainer: schedule options are checked, and both reports name batches alike") {
  const auto data = blobs(200, 4, 2, 7);
  auto expect = [&](ModelConfig c, const char* text) {
    CHECK_THROWS_WITH_AS(train_model(c, data, nullptr), doctest::Contains(text), InputError);
  };
  ModelConfig c;
  c.model = ModelKind::kSoftmax;
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
  expect(c, "--sharding: expected static with --simulate");
  c = {};
  c.evals_per_epoch = 0;
  expect(c, "--evals-per-epoch: expected a count in [1, 1000], found 0");
  c = {};
  c.schedule = ScheduleSpec::parse("time:1ms");
  c.schedule.max_batch = 0;
  expect(c, "--max-batch: expected a sample count in [1, 1048576], found 0");
  c = {};
  c.batch = 8;
  c.schedule = ScheduleSpec::parse("fixed:4");
  expect(c, "--batch: expected either --batch or --schedule, found both");

  // Simulation with fixed minibatches is reproducible, with or without curve points.
  c = {};
  c.model = ModelKind::kSoftmax;
  c.simulate = 3;
  c.epochs = 2;
  c.evals_per_epoch = 3;
  c.delay = DelaySpec::parse("const:2");
  const auto a = train_model(c, data, nullptr);
  const auto b = train_model(c, data, nullptr);
  CHECK(a.weights == b.weights);
  CHECK(a.curve.size() == 7);

  // The model report's batch_size and window_micros have the linear report's keys.
  ModelConfig m;
  m.model = ModelKind::kSoftmax;
  m.threads = 2;
  m.epochs = 1;
  m.schedule = ScheduleSpec::parse("time:50us");
  const auto model_json = nlohmann::json::parse(to_json(train_model(m, data, nullptr)));
  const auto p = sparse(400);
  TrainConfig l;
  l.threads = 2;
  l.epochs = 1;
  l.schedule = ScheduleSpec::parse("time:50us");
  const auto linear_json = nlohmann::json::parse(to_json(train(l, p.train, nullptr)));
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
