// The delay layer (specs, samplers, the delay line), staleness and coherence measurement and
// simulation mode, in the linear and the model kernels.
#include <doctest/doctest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/delay_layer.h"
#include "engine/delay_line.h"
#include "engine/rng.h"
#include "engine/samplers.h"
#include "hogwild/delay.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/ratings.h"
#include "hogwild/report.h"
#include "hogwild/staleness.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;
using hogwild::test::strip_timings;

namespace {

// Upper critical value of chi-square with `df` degrees of freedom at z standard deviations
// (Wilson-Hilferty); z = 3.09 is the 0.1% level.
double chi2_critical(int df, double z = 3.09) {
  const double k = df;
  return k * std::pow(1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k)), 3);
}

// Pearson's statistic of observed counts against `spec`, pooling the tail so that every
// expected count is at least 5; returns (statistic, degrees of freedom).
std::pair<double, int> chi_square(const std::vector<std::uint64_t>& observed,
                                  const DelaySpec& spec) {
  double total = 0;
  for (const auto c : observed) total += static_cast<double>(c);
  double stat = 0, pooled_obs = 0, pooled_exp = 0;
  int bins = 0;
  for (std::uint32_t k = 0; k <= spec.max_delay(); ++k) {
    pooled_obs += k < observed.size() ? static_cast<double>(observed[k]) : 0.0;
    pooled_exp += total * spec.probability(k);
    if (pooled_exp >= 5 || k == spec.max_delay()) {
      if (pooled_exp > 0) {
        stat += (pooled_obs - pooled_exp) * (pooled_obs - pooled_exp) / pooled_exp;
        ++bins;
      }
      pooled_obs = pooled_exp = 0;
    }
  }
  return {stat, bins - 1};
}

SparseProblem problem(std::size_t rows, std::size_t features = 400) {
  return test::sparse_problem(rows, features, 12, 5);
}

std::string fmt_const(std::uint32_t s) { return "const:" + std::to_string(s); }

}  // namespace

TEST_CASE("delay specs parse, and bad ones name what was expected") {
  CHECK(DelaySpec::parse("none").max_delay() == 0);
  CHECK(DelaySpec::parse("const:5").max_delay() == 5);
  CHECK(DelaySpec::parse("uniform:8").mean() == doctest::Approx(4.0));
  const auto g = DelaySpec::parse("geometric:0.25:30");
  CHECK(g.max_delay() == 30);
  CHECK(g.probability(0) > g.probability(1));
  // Untruncated mean (1-p)/p = 3; truncation at 30 changes it by far less than 1%.
  CHECK(g.mean() == doctest::Approx(3.0).epsilon(0.01));
  CHECK(DelaySpec::parse("geometric:0.5").max_delay() >= 19);  // default cap: tail < 1e-6
  const char* bad[][2] = {
      {"sometimes",
       "--delay: expected none, const:S, uniform:S, geometric:P[:CAP] or trace:FILE, "
       "found 'sometimes'"},
      {"const:-1", "--delay: expected const:S with S an integer in [0, 65536], found 'const:-1'"},
      {"uniform:x",
       "--delay: expected uniform:S with S an integer in [0, 65536], found 'uniform:x'"},
      {"geometric:0",
       "--delay: expected geometric:P[:CAP] with P a probability in (0, 1], found "
       "'geometric:0'"},
      {"geometric:0.5:x",
       "--delay: expected geometric:P:CAP with CAP an integer in [0, 65536], "
       "found 'geometric:0.5:x'"},
      {"none:3",
       "--delay: expected none, const:S, uniform:S, geometric:P[:CAP] or trace:FILE, "
       "found 'none:3'"},
  };
  for (const auto& bad_case : bad) {
    const auto& [spec, message] = bad_case;
    CAPTURE(bad_case[0]);
    CHECK_THROWS_WITH_AS(DelaySpec::parse(spec), message, InputError);
  }
}

TEST_CASE("trace delays replay cyclically, and bad traces name the line") {
  const auto path = std::filesystem::temp_directory_path() / "hogwild_test_trace.txt";
  std::ofstream(path) << "3\n# comment\n0\n\n7\n";
  const auto spec = DelaySpec::parse("trace:" + path.string());
  CHECK(spec.trace == std::vector<std::uint32_t>{3, 0, 7});
  CHECK(spec.max_delay() == 7);
  detail::DelaySampler sampler(spec, 1);
  for (const std::uint32_t expected : {3u, 0u, 7u, 3u, 0u, 7u}) CHECK(sampler.next() == expected);
  std::ofstream(path) << "3\n-1\n";
  CHECK_THROWS_WITH_AS(DelaySpec::parse("trace:" + path.string()),
                       (path.string() + ":2: expected a delay in [0, 65536], found '-1'").c_str(),
                       InputError);
  std::filesystem::remove(path);
  CHECK_THROWS_AS(DelaySpec::parse("trace:" + path.string()), SystemError);
}

TEST_CASE("sampled delays pass a chi-square goodness-of-fit test") {
  for (const char* text : {"uniform:7", "geometric:0.3:20", "geometric:0.05"}) {
    CAPTURE(text);
    const auto spec = DelaySpec::parse(text);
    detail::DelaySampler sampler(spec, 12345);
    std::vector<std::uint64_t> counts(spec.max_delay() + 1, 0);
    for (int i = 0; i < 50000; ++i) ++counts[sampler.next()];
    const auto [stat, df] = chi_square(counts, spec);
    CHECK(df > 3);
    CHECK(stat < chi2_critical(df));
  }
}

TEST_CASE("the delays a run injects pass the chi-square test too") {
  const auto p = problem(6000);
  for (const char* text : {"uniform:6", "geometric:0.4:12"}) {
    CAPTURE(text);
    TrainConfig c;
    c.simulate = 4;
    c.epochs = 2;
    c.delay = DelaySpec::parse(text);
    const auto r = hogwild::train(c, p.train, nullptr);
    const auto [stat, df] = chi_square(r.injected_delays, c.delay);
    CHECK(stat < chi2_critical(df));
  }
}

TEST_CASE(
    "simulation with const:s measures exactly the staleness the protocol implies, in rounds and "
    "in virtual time with equal speeds") {
  // K virtual workers, R rounds, one update per step, every update measured. Worker k reads at
  // round t and writes at round t + s (after its own read there), or in the final flush, which
  // runs worker by worker. Counting the other workers' writes in between:
  //   t + s < R, t >= s:  s (K - 1)
  //   t + s < R, t <  s:  t (K - 1) + k           (others write only from round s on)
  //   t + s >= R:         (K - 1 - k) + (R - 1 - t)(K - 1) + k s   (flushed; needs R >= 2s)
  // Virtual time with equal constant costs orders the workers as rounds do (ties go to the
  // lower worker).
  for (const int k_workers : {2, 4, 5}) {
    for (const std::uint32_t s : {0u, 1u, 3u}) {
      for (const bool virtual_time : {false, true}) {
        CAPTURE(k_workers);
        CAPTURE(s);
        CAPTURE(virtual_time);
        constexpr std::size_t kRounds = 10;
        const auto p = problem(kRounds * static_cast<std::size_t>(k_workers));
        TrainConfig c;
        c.simulate = k_workers;
        c.virtual_time = virtual_time;
        c.epochs = 1;
        c.delay = DelaySpec::parse(fmt_const(s));
        c.staleness_sample = 1.0;
        const auto r = hogwild::train(c, p.train, nullptr);
        REQUIRE(r.staleness_per_worker.size() == static_cast<std::size_t>(k_workers));
        const std::uint64_t K = k_workers, R = kRounds;
        for (std::uint64_t k = 0; k < K; ++k) {
          std::map<std::uint64_t, std::uint64_t> expected;
          for (std::uint64_t t = 0; t < R; ++t) {
            std::uint64_t staleness;
            if (t + s < R) {
              staleness = t >= s ? s * (K - 1) : t * (K - 1) + k;
            } else {
              staleness = (K - 1 - k) + (R - 1 - t) * (K - 1) + k * s;
            }
            ++expected[staleness];
          }
          std::map<std::uint64_t, std::uint64_t> measured;
          for (const auto& [value, count] : r.staleness_per_worker[k].updates.buckets()) {
            measured[value] = count;
          }
          CAPTURE(k);
          CHECK(measured == expected);
        }
      }
    }
  }
}

TEST_CASE("flush loses no update: every computed update is applied") {
  const auto p = problem(5000);
  for (const char* delay : {"none", "const:7", "uniform:20", "geometric:0.1"}) {
    for (const int threads : {1, 2, 4}) {
      CAPTURE(delay);
      CAPTURE(threads);
      TrainConfig c;
      c.threads = threads;
      c.epochs = 3;
      c.delay = DelaySpec::parse(delay);
      const auto r = hogwild::train(c, p.train, nullptr);
      CHECK(r.updates_computed == 3 * p.train.rows());  // logistic: every step has an update
      CHECK(r.updates_applied == r.updates_computed);
      std::uint64_t injected = 0;
      for (const auto n : r.injected_delays) injected += n;
      CHECK(injected == (c.delay.kind == DelaySpec::Kind::kNone ? 0 : r.updates_computed));
    }
  }
}

TEST_CASE("single-sample updates held by a delay under a speed model are kept and all applied") {
  // The speed model's clock takes the linear models' minibatch path, one sample a batch: its
  // delayed updates need the pending payloads' slots too (they had none, and the run crashed).
  const auto p = problem(3000);
  struct Run {
    int threads, simulate;
    bool virtual_time;
  };
  for (const Run run : {Run{1, 0, false}, Run{1, 3, true}, Run{2, 0, false}}) {
    for (const std::string delay : {"const:0", "const:2", "uniform:5"}) {
      CAPTURE(run.threads);
      CAPTURE(run.simulate);
      CAPTURE(delay);
      TrainConfig c;
      c.policy = run.threads == 1 && run.simulate == 0 ? Policy::kSerial : Policy::kRacy;
      c.threads = run.threads;
      c.simulate = run.simulate;
      c.virtual_time = run.virtual_time;
      c.epochs = 2;
      c.optimizer.step = 0.1;
      c.delay = DelaySpec::parse(delay);
      const auto plain = hogwild::train(c, p.train, nullptr);
      c.speed.parse_speeds(run.simulate > 0 ? "1,1,1" : run.threads == 2 ? "1,1" : "1");
      const auto timed = hogwild::train(c, p.train, nullptr);
      CHECK(timed.updates_computed == 2 * p.train.rows());
      CHECK(timed.updates_applied == timed.updates_computed);
      // One worker, or virtual workers at speed 1: the same updates in the same order as
      // without a speed model.
      if (run.threads == 1) CHECK(timed.weights == plain.weights);
    }
  }
}

TEST_CASE("simulation mode is bit-reproducible") {
  const auto p = problem(4000);
  TrainConfig c;
  c.simulate = 8;
  c.epochs = 3;
  c.delay = DelaySpec::parse("geometric:0.2");
  c.staleness_sample = 0.5;
  c.coherence_sample = 0.5;
  c.l2 = 1e-4;
  const auto a = hogwild::train(c, p.train, &p.train);
  const auto b = hogwild::train(c, p.train, &p.train);
  CHECK(a.weights == b.weights);
  auto ja = nlohmann::json::parse(to_json(a));
  auto jb = nlohmann::json::parse(to_json(b));
  CHECK(ja["staleness"]["samples"].get<std::uint64_t>() > 0);
  strip_timings(ja);
  strip_timings(jb);
  CHECK(ja.dump() == jb.dump());
  c.seed = 2;
  CHECK(hogwild::train(c, p.train, nullptr).weights != a.weights);
}

TEST_CASE("delayed least squares still converges to the optimum with a small step") {
  auto p = problem(3000, 40);
  const double l2 = 1e-3;
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(3000, static_cast<Eigen::Index>(p.train.num_features));
  Eigen::VectorXd y(3000);
  for (std::size_t i = 0; i < p.train.rows(); ++i) {
    const auto row = p.train.row(i);
    for (std::size_t k = 0; k < row.indices.size(); ++k)
      x(static_cast<Eigen::Index>(i), row.indices[k]) = row.values[k];
    y(static_cast<Eigen::Index>(i)) = p.train.labels[i];
  }
  const double n = 3000;
  const Eigen::MatrixXd a =
      x.transpose() * x / n + l2 * Eigen::MatrixXd::Identity(x.cols(), x.cols());
  const Eigen::VectorXd w_star = a.ldlt().solve(x.transpose() * y / n);
  auto objective = [&](const std::vector<float>& wf) {
    Eigen::VectorXd w(x.cols());
    for (Eigen::Index j = 0; j < w.size(); ++j) w(j) = wf[static_cast<std::size_t>(j)];
    return 0.5 * (x * w - y).squaredNorm() / n + 0.5 * l2 * w.squaredNorm();
  };
  const double f_star = 0.5 * (x * w_star - y).squaredNorm() / n + 0.5 * l2 * w_star.squaredNorm();
  TrainConfig c;
  c.model = hogwild::LinearModel{hogwild::LossKind::kSquared};
  c.l2 = l2;
  c.simulate = 8;
  c.delay = DelaySpec::parse("const:8");
  c.epochs = 200;
  c.optimizer.step = 0.05;
  c.optimizer.decay = 0.985;
  const auto r = hogwild::train(c, p.train, nullptr);
  const double gap = (objective(r.weights) - f_star) / f_star;
  MESSAGE("delayed least squares: relative objective gap " << gap << ", mean staleness "
                                                           << r.staleness.updates.mean());
  CHECK(r.staleness.updates.mean() > 50);  // 8 x 7 in steady state
  CHECK(gap < 2e-3);
}

TEST_CASE("coherence: consecutive gradients of one worker are measured and bounded") {
  const auto p = problem(4000);
  TrainConfig c;
  c.threads = 2;
  c.epochs = 2;
  c.coherence_sample = 1.0;
  const auto r = hogwild::train(c, p.train, nullptr);
  REQUIRE(r.coherence.size() == 20);  // 10 windows per epoch
  for (const auto& point : r.coherence) {
    CHECK(point.cosine >= -1.0);
    CHECK(point.cosine <= 1.0);
    CHECK(point.samples > 0);
  }
  CHECK(r.coherence.back().update == 2 * p.train.rows());
  c.coherence_sample = 0;
  CHECK(hogwild::train(c, p.train, nullptr).coherence.empty());
}

TEST_CASE("sampling between plain stretches picks the same updates as stepping one by one") {
  // One thread runs the plain loop between sampled updates; one virtual worker steps sample by
  // sample through the full path. Same seed: the same updates must be sampled, so staleness
  // counts and coherence (which depend only on which updates were picked) agree exactly.
  const auto p = problem(5000);
  for (const auto loss : {LossKind::kLogistic, LossKind::kHinge}) {
    for (const double rate : {0.01, 0.2, 1.0}) {
      for (const int lag : {1, 7}) {
        CAPTURE(static_cast<int>(loss));
        CAPTURE(rate);
        CAPTURE(lag);
        TrainConfig c;
        c.model = hogwild::LinearModel{loss};
        c.epochs = 2;
        c.staleness_sample = rate;
        c.coherence_sample = rate / 2;
        c.coherence_lag = lag;
        c.threads = 1;
        const auto threaded = hogwild::train(c, p.train, nullptr);
        c.threads = 0;
        c.simulate = 1;
        const auto stepped = hogwild::train(c, p.train, nullptr);
        CHECK(threaded.weights == stepped.weights);
        CHECK(threaded.staleness.updates.count() == stepped.staleness.updates.count());
        CHECK(threaded.staleness.updates.count() > 0);
        REQUIRE(threaded.coherence.size() == stepped.coherence.size());
        for (std::size_t i = 0; i < threaded.coherence.size(); ++i) {
          CHECK(threaded.coherence[i].samples == stepped.coherence[i].samples);
          CHECK(threaded.coherence[i].cosine == stepped.coherence[i].cosine);
        }
      }
    }
  }
}

TEST_CASE("histogram quantiles are exact below 64 and within 3% above") {
  Histogram h;
  for (std::uint64_t v = 0; v < 100; ++v) h.record(v);
  CHECK(h.quantile(0.5) == 49);
  CHECK(h.max() == 99);
  CHECK(h.mean() == doctest::Approx(49.5));
  Histogram big;
  for (std::uint64_t v = 1000; v < 2000; ++v) big.record(v * 1000);
  const double p90 = static_cast<double>(big.quantile(0.9));
  CHECK(p90 == doctest::Approx(1900000.0).epsilon(0.03));
  for (std::size_t b = 0; b < 1400; ++b) {  // up to 2^47
    CHECK(Histogram::bucket_of(Histogram::lower_bound_of(b)) == b);
  }
}

namespace {

// One worker's use of a delay line over `steps` steps: at each step an update with a delay
// drawn from [0, cap] (or none, one step in five), then release; returns (step computed,
// step applied) in the order applied, after a final flush.
std::vector<std::pair<std::uint64_t, std::uint64_t>> run_line(std::uint32_t cap,
                                                              std::uint64_t steps,
                                                              std::uint64_t seed) {
  detail::DelayLine<std::uint64_t> line(cap);
  detail::Rng rng(seed);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> applied;
  std::vector<std::uint32_t> in_use(line.capacity(), 0);
  std::uint64_t step = 0;
  const auto apply = [&](const std::uint64_t& computed, std::uint32_t slot) {
    REQUIRE(slot < line.capacity());
    CHECK(in_use[slot] == 1);
    in_use[slot] = 0;
    applied.emplace_back(computed, step);
  };
  for (; step < steps; ++step) {
    if (rng.below(5) != 0) {
      const std::uint32_t slot = line.push(step + rng.below(cap + 1), step);
      REQUIRE(slot < line.capacity());
      CHECK(in_use[slot] == 0);  // a slot is never handed out twice
      in_use[slot] = 1;
    }
    line.release(step, apply);
    CHECK(line.size() <= cap);  // what is left is due later
  }
  line.flush(apply);
  CHECK(line.empty());
  return applied;
}

}  // namespace

TEST_CASE("the delay line releases updates by due step, ties in order of computation") {
  for (const std::uint32_t cap : {0u, 1u, 7u, 64u}) {
    CAPTURE(cap);
    // The reference: every update's due step, then a stable sort by it.
    detail::Rng rng(12 + cap);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> due;  // (due, computed)
    const std::uint64_t steps = 2000;
    for (std::uint64_t step = 0; step < steps; ++step) {
      if (rng.below(5) != 0) due.emplace_back(step + rng.below(cap + 1), step);
    }
    std::stable_sort(due.begin(), due.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const auto applied = run_line(cap, steps, 12 + cap);
    REQUIRE(applied.size() == due.size());
    for (std::size_t i = 0; i < due.size(); ++i) {
      CHECK(applied[i].first == due[i].second);
      // Released at its due step, or by the flush after the last step.
      CHECK(applied[i].second == std::min(due[i].first, steps));
    }
  }
}

TEST_CASE("the delay line holds cap + 1 updates at once and refuses a due step outside its ring") {
  detail::DelayLine<int> line(3);
  CHECK(line.capacity() == 4);
  for (int k = 0; k < 4; ++k) line.push(3, k);  // four updates, all due at step 3
  CHECK(line.size() == 4);
  CHECK_THROWS_AS(line.push(3, 4), std::logic_error);  // no free slot
  std::vector<int> order;
  line.release(2, [&](int k, std::uint32_t) { order.push_back(k); });
  CHECK(order.empty());
  line.release(3, [&](int k, std::uint32_t) { order.push_back(k); });
  CHECK(order == std::vector<int>{0, 1, 2, 3});
  CHECK_THROWS_AS(line.push(3, 0), std::logic_error);  // step 3 was released
  CHECK_THROWS_AS(line.push(8, 0), std::logic_error);  // beyond 4 + cap
  line.push(7, 9);
  line.flush([&](int k, std::uint32_t) { order.push_back(k); });
  CHECK(order.back() == 9);
  CHECK(line.empty());
}

// ---- The model trainer (softmax, MLP, factorisation) ----

namespace {

SparseProblem softmax_problem(std::size_t rows) { return test::sparse_problem(rows, 300, 10, 4); }

}  // namespace

TEST_CASE(
    "model trainer, simulation with const:s: staleness is exactly what the protocol implies, in "
    "rounds and in virtual time with equal speeds") {
  // Same protocol as the linear trainer (see test_delay.cc): one-example minibatches, worker k
  // reads at round t and writes at round t + s or in the final flush, worker by worker.
  for (const int k_workers : {2, 4}) {
    for (const std::uint32_t s : {1u, 3u}) {
      for (const bool virtual_time : {false, true}) {
        CAPTURE(k_workers);
        CAPTURE(s);
        CAPTURE(virtual_time);
        constexpr std::uint64_t R = 10;
        const auto p = softmax_problem(R * static_cast<std::size_t>(k_workers));
        TrainConfig c;
        c.model = hogwild::SoftmaxModel{};
        c.simulate = k_workers;
        c.virtual_time = virtual_time;
        c.schedule = hogwild::ScheduleSpec{.batch = static_cast<std::uint32_t>(1)};
        c.epochs = 1;
        c.delay = DelaySpec::parse("const:" + std::to_string(s));
        c.staleness_sample = 1;
        const auto r = hogwild::train(c, p.train, nullptr);
        REQUIRE(r.staleness_per_worker.size() == static_cast<std::size_t>(k_workers));
        const std::uint64_t K = static_cast<std::uint64_t>(k_workers);
        for (std::uint64_t k = 0; k < K; ++k) {
          std::map<std::uint64_t, std::uint64_t> expected, measured;
          for (std::uint64_t t = 0; t < R; ++t) {
            ++expected[t + s < R ? (t >= s ? s * (K - 1) : t * (K - 1) + k)
                                 : (K - 1 - k) + (R - 1 - t) * (K - 1) + k * s];
          }
          for (const auto& [value, count] : r.staleness_per_worker[k].updates.buckets()) {
            measured[value] = count;
          }
          CAPTURE(k);
          CHECK(measured == expected);
        }
      }
    }
  }
}

TEST_CASE("model trainer: every computed update is applied, at several thread counts") {
  const auto p = softmax_problem(3000);
  for (const auto model : {hogwild::SoftmaxModel{}}) {
    for (const char* delay : {"none", "const:5", "geometric:0.3"}) {
      for (const int threads : {1, 2, 4}) {
        CAPTURE(delay);
        CAPTURE(threads);
        TrainConfig c;
        c.model = model;
        c.threads = threads;
        c.epochs = 2;
        c.delay = DelaySpec::parse(delay);
        const auto r = hogwild::train(c, p.train, nullptr);
        const std::uint64_t expected = 2 * ((3000 + 16 * threads - 1) / 16);  // >= batches
        CHECK(r.updates_computed > 0);
        CHECK(r.updates_computed <= expected);
        CHECK(r.updates_applied == r.updates_computed);
      }
    }
  }
  // Factorisation (sparse row updates) too.
  RatingsGeneratorConfig g;
  g.users = 100;
  g.items = 80;
  g.rank = 4;
  g.density = 0.2;
  const auto ratings = generate_ratings(g);
  TrainConfig c;
  c.model = hogwild::FactorisationModel{};
  std::get<hogwild::FactorisationModel>(c.model).rank = 4;
  c.threads = 2;
  c.epochs = 2;
  c.delay = DelaySpec::parse("uniform:8");
  const auto r = hogwild::train(c, ratings.train, nullptr);
  CHECK(r.updates_applied == r.updates_computed);
  CHECK(r.updates_computed == 2 * ratings.train.size());
}

TEST_CASE("model trainer: simulation mode is bit-reproducible and measures coherence") {
  const auto p = softmax_problem(2000);
  TrainConfig c;
  c.model = hogwild::SoftmaxModel{};
  c.simulate = 8;
  c.epochs = 2;
  c.optimizer.kind = OptimizerKind::kAdam;
  c.delay = DelaySpec::parse("geometric:0.2");
  c.staleness_sample = 0.5;
  c.coherence_sample = 0.5;
  const auto a = hogwild::train(c, p.train, nullptr);
  const auto b = hogwild::train(c, p.train, nullptr);
  CHECK(a.weights == b.weights);
  auto ja = nlohmann::json::parse(to_json(a));
  auto jb = nlohmann::json::parse(to_json(b));
  strip_timings(ja);
  strip_timings(jb);
  CHECK(ja.dump() == jb.dump());
  REQUIRE(!a.coherence.empty());
  for (const auto& point : a.coherence) {
    CHECK(point.cosine >= -1.0);
    CHECK(point.cosine <= 1.0);
  }
  CHECK(ja["delay"]["injected"].size() > 3);
  CHECK(ja["staleness"]["mean"].get<double>() > 7);  // 8 workers, mean delay 4
}

TEST_CASE("the delay layer applies an update d of its worker's steps after it, counting d") {
  detail::DelayLayer<int> off;
  CHECK_FALSE(off.on());
  const DelaySpec spec = DelaySpec::parse("const:3");  // the layer reads it: it outlives it
  detail::DelayLayer<int> layer(spec, 5);
  REQUIRE(layer.on());
  std::vector<std::uint64_t> injected(4, 0);
  std::vector<std::pair<int, int>> applied;  // (computed at, applied at)
  int step = 0;
  for (; step < 10; ++step) {
    if (step % 2 == 0) layer.hold(step, injected);  // an update every other step
    layer.end_step([&](int computed, std::uint32_t) { applied.emplace_back(computed, step); });
  }
  layer.flush([&](int computed, std::uint32_t) { applied.emplace_back(computed, step); });
  CHECK(injected == std::vector<std::uint64_t>{0, 0, 0, 5});
  const std::vector<std::pair<int, int>> expected = {{0, 3}, {2, 5}, {4, 7}, {6, 9}, {8, 10}};
  CHECK(applied == expected);  // the last one by the flush after step 9
}

TEST_CASE("delays in global steps: const:s measures exactly the staleness the protocol implies") {
  // K workers in turn, one update per step: the update computed at global step g (worker
  // g mod K) is applied at the end of global step g + s; the end of each step t applies the
  // update of step t - s. Its staleness counts the other workers' updates applied in between:
  // those of steps [g - s, g - 1] (the end of steps g .. g + s - 1). Updates whose step g + s
  // lies past the epoch's N steps are flushed at its end, worker by worker: before them come
  // the updates of steps [g - s, N - 1 - s] and the earlier workers' flushed ones.
  for (const bool softmax : {false, true}) {
    for (const int k_workers : {2, 4, 5}) {
      for (const std::uint64_t s : {0u, 1u, 3u, 6u}) {
        for (const bool virtual_time : {false, true}) {
          CAPTURE(softmax);
          CAPTURE(k_workers);
          CAPTURE(s);
          CAPTURE(virtual_time);
          const std::uint64_t K = static_cast<std::uint64_t>(k_workers), N = 10 * K;
          TrainConfig c;
          c.simulate = k_workers;
          c.virtual_time = virtual_time;
          c.epochs = 1;
          c.delay = DelaySpec::parse(fmt_const(static_cast<std::uint32_t>(s)));
          c.global_delay = true;
          c.staleness_sample = 1;
          Report r;
          if (softmax) {
            c.model = hogwild::SoftmaxModel{};
            c.schedule = hogwild::ScheduleSpec{.batch = static_cast<std::uint32_t>(1)};
            r = hogwild::train(c, softmax_problem(static_cast<std::size_t>(N)).train, nullptr);
          } else {
            r = hogwild::train(c, problem(static_cast<std::size_t>(N)).train, nullptr);
          }
          REQUIRE(r.staleness_per_worker.size() == K);
          const auto others_in = [&](std::uint64_t from, std::uint64_t to, std::uint64_t k) {
            std::uint64_t count = 0;  // steps in [from, to] of workers other than k
            for (std::uint64_t t = from; t <= to; ++t) count += t % K != k;
            return count;
          };
          std::vector<std::uint64_t> flushed(K, 0);  // each worker's updates left at the end
          for (std::uint64_t g = N > s ? N - s : 0; g < N; ++g) ++flushed[g % K];
          std::uint64_t flushed_before = 0;
          for (std::uint64_t k = 0; k < K; ++k) {
            std::map<std::uint64_t, std::uint64_t> expected, measured;
            for (std::uint64_t g = k; g < N; g += K) {
              const std::uint64_t first = g >= s ? g - s : 0;
              if (g + s < N) {
                ++expected[g == 0 ? 0 : others_in(first, g - 1, k)];
              } else {
                ++expected[others_in(first, N - 1 - s, k) + flushed_before];
              }
            }
            flushed_before += flushed[k];
            for (const auto& [value, count] : r.staleness_per_worker[k].updates.buckets()) {
              measured[value] = count;
            }
            CAPTURE(k);
            CHECK(measured == expected);
          }
        }
      }
    }
  }
}

TEST_CASE("the report lists each injected delay once, ascending, with its count") {
  // Thousands of distinct delays, as a wide uniform delay gives.
  const auto p = problem(20000);
  TrainConfig c;
  c.policy = Policy::kSerial;
  c.epochs = 1;
  c.delay = DelaySpec::parse("uniform:20000");
  const auto r = hogwild::train(c, p.train, nullptr);
  std::map<std::uint64_t, std::uint64_t> expected;
  for (std::size_t d = 0; d < r.injected_delays.size(); ++d) {
    if (r.injected_delays[d] > 0) expected[d] = r.injected_delays[d];
  }
  REQUIRE(expected.size() > 5000);
  const auto json = nlohmann::ordered_json::parse(to_json(r));
  test::check_lists_in_order(json["delay"]["injected"], expected,
                             [](const std::string& key) { return std::stoull(key); });
}
