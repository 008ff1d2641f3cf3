// Features renumbered by frequency for the training loops (--feature-order): the numbering
// against one worked out by hand, the weights moved there and back, and whole runs on models
// wider than 2^18 features against the same runs in the given numbering, bit for bit: serial
// (with L2, averaging and coherence), simulated with delays and minibatches, replicas of the
// hot features, resumed from an epoch's state; the layout narrows to 16 bits when few features are
// seen; racy runs at 1, 2 and 4 threads learn as the serial run does.
#include <doctest/doctest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "engine/feature_order.h"
#include "hogwild/generator.h"
#include "hogwild/trainer.h"

using namespace hogwild;

namespace {

constexpr std::size_t kWide = TrainConfig::kFrequencyOrderMinFeatures + 40000;

// Seeded rows over kWide features: Zipf 1 (a few thousand features seen) or uniform (more than
// 65,536 seen, so the renumbered indices need 32 bits).
SparseProblem wide_problem(double zipf, std::size_t rows, std::size_t nnz, std::uint64_t seed) {
  SparseGeneratorConfig c;
  c.rows = rows;
  c.test_rows = 500;
  c.features = kWide;
  c.nnz_per_row = nnz;
  c.zipf = zipf;
  c.seed = seed;
  return generate_sparse(c);
}

TrainConfig logistic(bool frequency_order) {
  TrainConfig config;
  config.model = LinearModel{LossKind::kLogistic};
  config.policy = Policy::kSerial;
  config.threads = 1;
  config.epochs = 4;
  config.optimizer.step = 0.5;
  config.keep_weights = true;
  config.frequency_order = frequency_order;
  return config;
}

void check_same_run(const Report& a, const Report& b) {
  REQUIRE(a.epochs.size() == b.epochs.size());
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    CAPTURE(e);
    CHECK(a.epochs[e].train.loss == b.epochs[e].train.loss);
    REQUIRE(a.epochs[e].test.has_value());
    CHECK(a.epochs[e].test->loss == b.epochs[e].test->loss);
  }
  REQUIRE(a.coherence.size() == b.coherence.size());
  for (std::size_t w = 0; w < a.coherence.size(); ++w) {
    CHECK(a.coherence[w].cosine == b.coherence[w].cosine);
    CHECK(a.coherence[w].samples == b.coherence[w].samples);
  }
  CHECK(a.weights == b.weights);
}

}  // namespace

TEST_CASE("features are numbered by descending count, ties in index order, unseen last") {
  // Two counts beyond the counting sort's buckets (65,536), ties at 3, one feature unseen.
  const std::vector<std::uint32_t> counts = {3, 0, 5, 3, 70000, 1, 70001};
  CHECK(detail::frequency_numbers(counts) == std::vector<std::uint32_t>{3, 6, 2, 4, 1, 5, 0});
  CHECK(detail::frequency_numbers(std::vector<std::uint32_t>{}).empty());
  const std::vector<std::uint32_t> equal(5, 2);
  CHECK(detail::frequency_numbers(equal) == std::vector<std::uint32_t>{0, 1, 2, 3, 4});
}

TEST_CASE("weights moved to their numbers and back are the weights") {
  const std::vector<std::uint32_t> numbers = {3, 6, 2, 4, 1, 5, 0};
  const std::vector<float> given = {0.5f, -1, 2, 3, 4, 5, 6};
  std::vector<float> numbered(7), back(7);
  detail::to_numbered(given, numbers, numbered);
  CHECK(numbered == std::vector<float>{6, 4, 2, 0.5f, 3, 5, -1});
  detail::to_given(numbered, numbers, back);
  CHECK(back == given);
}

TEST_CASE("a renumbered run is the run in the given numbering, bit for bit") {
  for (const double zipf : {1.0, 0.0}) {
    CAPTURE(zipf);
    auto problem = wide_problem(zipf, 3000, zipf > 0 ? 12 : 40, 11);
    // A test row with a feature the training rows' dimension does not reach: its term is skipped
    // in both numberings.
    const std::uint32_t beyond[] = {3, static_cast<std::uint32_t>(kWide + 5)};
    const float ones[] = {1.0f, 1.0f};
    problem.test.append(beyond, ones, problem.test.labels.front());
    for (const int variant : {0, 1, 2, 3, 4}) {
      CAPTURE(variant);
      auto config = [&](bool frequency_order) {
        TrainConfig c = logistic(frequency_order);
        if (variant == 1) {  // per-feature shrinking, averaging, the coherence probe
          c.l2 = 1e-4;
          c.average = true;
          c.coherence_sample = 0.2;
        } else if (variant == 2) {  // delayed minibatches of simulated workers
          c.simulate = 3;
          c.delay = DelaySpec::parse("uniform:6");
          c.schedule = ScheduleSpec::parse("fixed:4");
        } else if (variant == 3) {  // replicas of the hot features, one worker, with L2
          c.policy = Policy::kRacy;
          c.replicate = 64;
          c.hot_features = 300;
          c.l2 = 1e-4;
        } else if (variant == 4) {  // averaging without L2: losses of the mean on numbered rows
          c.average = true;
        }
        return c;
      };
      const Report renumbered = train(config(true), problem.train, &problem.test);
      const Report given = train(config(false), problem.train, &problem.test);
      REQUIRE(renumbered.training_rows.has_value());
      CHECK(renumbered.training_rows->renumbered);
      CHECK_FALSE(given.training_rows->renumbered);
      // Zipf 1 sees a few thousand features: their numbers fit in 16 bits.
      CHECK(renumbered.training_rows->index_bits == (zipf > 0 ? 16 : 32));
      CHECK(given.training_rows->index_bits == 32);
      check_same_run(renumbered, given);
    }
  }
}

TEST_CASE("a renumbered run resumed from an epoch's state continues it bit for bit") {
  const auto problem = wide_problem(1.0, 3000, 12, 12);
  TrainConfig config = logistic(true);
  config.average = true;
  std::vector<std::vector<float>> means, last;
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& state) {
    means.emplace_back(state.weights.begin(), state.weights.end());
    last.emplace_back(state.optimizer_state.at(0).begin(), state.optimizer_state.at(0).end());
  };
  const Report whole = train(config, problem.train, &problem.test, callbacks);
  // The states are in the given numbering: the given run's states are the same.
  std::vector<std::vector<float>> given_means;
  Callbacks given_callbacks;
  given_callbacks.on_epoch_state = [&](const TrainState& state) {
    given_means.emplace_back(state.weights.begin(), state.weights.end());
  };
  TrainConfig given = config;
  given.frequency_order = false;
  train(given, problem.train, &problem.test, given_callbacks);
  CHECK(given_means == means);

  TrainState at_two;
  at_two.epoch = 2;
  at_two.initial_loss = whole.epochs.front().train.loss;
  at_two.weights = means[1];
  at_two.optimizer_state.emplace_back(last[1]);
  const Report resumed = train(config, problem.train, &problem.test, {}, &at_two);
  CHECK(resumed.weights == whole.weights);
  CHECK(resumed.epochs.back().test->loss == whole.epochs.back().test->loss);
}

TEST_CASE("narrow models and f16 rows keep the given numbering") {
  const auto problem = wide_problem(1.0, 500, 12, 13);
  TrainConfig f16 = logistic(true);
  f16.data_precision = DataPrecision::kF16;
  f16.epochs = 1;
  CHECK_FALSE(train(f16, problem.train, nullptr).training_rows->renumbered);
  SparseGeneratorConfig c;
  c.rows = 500;
  c.features = TrainConfig::kFrequencyOrderMinFeatures;
  TrainConfig narrow = logistic(true);
  narrow.epochs = 1;
  CHECK_FALSE(train(narrow, generate_sparse(c).train, nullptr).training_rows->renumbered);
}

TEST_CASE("racy renumbered runs learn as the serial run does, at 1, 2 and 4 threads") {
  const auto problem = wide_problem(1.0, 6000, 12, 14);
  const Report serial = train(logistic(true), problem.train, &problem.test);
  const double reference = serial.epochs.back().train.loss;
  REQUIRE(reference < 0.8 * serial.epochs.front().train.loss);
  for (const int threads : {1, 2, 4}) {
    CAPTURE(threads);
    TrainConfig racy = logistic(true);
    racy.policy = Policy::kRacy;
    racy.threads = threads;
    const Report run = train(racy, problem.train, &problem.test);
    CHECK(run.training_rows->renumbered);
    CHECK(run.epochs.back().train.loss == doctest::Approx(reference).epsilon(0.1));
    CHECK(*run.epochs.back().test->accuracy >= *serial.epochs.back().test->accuracy - 0.03);
  }
}
