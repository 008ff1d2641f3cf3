// bf16 weights (--weights bf16): the stochastic rounding against its closed form (exact over all
// 2^16 random draws: unbiased, only the two neighbours), rounding to nearest on known values, and
// whole runs: every weight a bf16 value, losses and accuracy beside the f32 run's, a serial run
// reproducible and resumed bit for bit, renumbered and given numberings bit for bit, racy runs
// at 1, 2 and 4 threads learning as the serial run does, and the configurations it refuses.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "engine/bf16_weights.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/trainer.h"

using namespace hogwild;

namespace {

SparseProblem problem(std::size_t features, double zipf, std::size_t rows, std::uint64_t seed) {
  SparseGeneratorConfig c;
  c.rows = rows;
  c.test_rows = 1000;
  c.features = features;
  c.nnz_per_row = 20;
  c.zipf = zipf;
  c.seed = seed;
  return generate_sparse(c);
}

TrainConfig serial(WeightPrecision weights) {
  TrainConfig config;
  config.model = LinearModel{LossKind::kLogistic};
  config.policy = Policy::kSerial;
  config.threads = 1;
  config.epochs = 5;
  config.optimizer.step = 0.5;
  config.keep_weights = true;
  config.weights = weights;
  return config;
}

bool is_bf16(float v) { return (std::bit_cast<std::uint32_t>(v) & 0xFFFFu) == 0; }

}  // namespace

TEST_CASE("stochastic rounding over every random draw is the value, from its two neighbours") {
  // Values between two bf16 neighbours, of both signs and across magnitudes, and one that is
  // already a bf16 value.
  for (const float v : {1.0f + 0x1.0p-10f, -3.14159f, 1e-30f, 6.5e4f, 0.3f, 1.5f}) {
    CAPTURE(v);
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
    const float down = detail::widen_bf16(static_cast<std::uint16_t>(bits >> 16));
    const float up = detail::widen_bf16(static_cast<std::uint16_t>((bits >> 16) + 1));
    double sum = 0;
    for (std::uint32_t random = 0; random < 0x10000; ++random) {
      const float rounded = detail::widen_bf16(detail::round_bf16(v, random));
      REQUIRE((rounded == down || (rounded == up && !is_bf16(v))));
      sum += rounded;
    }
    // Up in exactly (low bits) of the 2^16 draws: the mean is v, to double's precision.
    CHECK(sum / 65536.0 == doctest::Approx(static_cast<double>(v)).epsilon(1e-12));
  }
}

TEST_CASE("rounding to nearest: ties to even, exact values kept, infinities and NaN") {
  CHECK(detail::widen_bf16(detail::nearest_bf16(1.0f)) == 1.0f);
  CHECK(detail::widen_bf16(detail::nearest_bf16(-2.5f)) == -2.5f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to the even one, 1.
  CHECK(detail::widen_bf16(detail::nearest_bf16(1.0f + 0x1.0p-8f)) == 1.0f);
  // 1 + 3 * 2^-8 is halfway between 1 + 2^-7 and 1 + 2^-6: to the even one, 1 + 2^-6.
  CHECK(detail::widen_bf16(detail::nearest_bf16(1.0f + 3 * 0x1.0p-8f)) == 1.0f + 0x1.0p-6f);
  CHECK(detail::widen_bf16(detail::nearest_bf16(1.0f + 0x1.0p-7f + 0x1.0p-12f)) ==
        1.0f + 0x1.0p-7f);
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(detail::widen_bf16(detail::nearest_bf16(inf)) == inf);
  CHECK(detail::widen_bf16(detail::nearest_bf16(std::numeric_limits<float>::max())) == inf);
  CHECK(std::isnan(detail::widen_bf16(detail::nearest_bf16(std::nanf("")))));
  CHECK(std::isnan(
      detail::widen_bf16(detail::nearest_bf16(std::bit_cast<float>(std::uint32_t{0x7F800001u})))));
}

TEST_CASE("a serial bf16 run holds bf16 weights and learns as the f32 run does") {
  const auto data = problem(5000, 1.0, 8000, 21);
  for (const bool regularised : {false, true}) {
    CAPTURE(regularised);
    TrainConfig f32 = serial(WeightPrecision::kF32), bf16 = serial(WeightPrecision::kBf16);
    if (regularised) {
      f32.l2 = bf16.l2 = 1e-4;
      f32.average = bf16.average = true;
    }
    const Report reference = train(f32, data.train, &data.test);
    const Report run = train(bf16, data.train, &data.test);
    REQUIRE(reference.epochs.back().train.loss < 0.8 * reference.epochs.front().train.loss);
    CHECK(run.epochs.back().train.loss ==
          doctest::Approx(reference.epochs.back().train.loss).epsilon(0.02));
    CHECK(*run.epochs.back().test->accuracy >= *reference.epochs.back().test->accuracy - 0.01);
    // The report's weights: bf16 values (the last weights), or their epochs' mean.
    if (!regularised) {
      REQUIRE(run.weights.size() == 5000);
      for (const float w : run.weights) REQUIRE(is_bf16(w));
      CHECK(run.weights != reference.weights);
    }
    // The same seed draws the same rounding bits.
    CHECK(train(bf16, data.train, &data.test).weights == run.weights);
  }
}

TEST_CASE("a bf16 run resumed from an epoch's state continues it bit for bit") {
  const auto data = problem(5000, 1.0, 4000, 22);
  const TrainConfig config = serial(WeightPrecision::kBf16);
  std::vector<std::vector<float>> states;
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& state) {
    states.emplace_back(state.weights.begin(), state.weights.end());
  };
  const Report whole = train(config, data.train, &data.test, callbacks);
  REQUIRE(states.size() == 5);
  TrainState at_two;
  at_two.epoch = 2;
  at_two.initial_loss = whole.epochs.front().train.loss;
  at_two.weights = states[1];
  const Report resumed = train(config, data.train, &data.test, {}, &at_two);
  CHECK(resumed.weights == whole.weights);
  CHECK(resumed.epochs.back().train.loss == whole.epochs.back().train.loss);
}

TEST_CASE("a renumbered bf16 run is the run in the given numbering, bit for bit") {
  // Wider than 2^18 features: renumbered by frequency unless told otherwise; each row's
  // nonzeros keep their order, so each draws the same random bits in both numberings.
  const auto data = problem(TrainConfig::kFrequencyOrderMinFeatures + 40000, 1.0, 3000, 23);
  TrainConfig renumbered = serial(WeightPrecision::kBf16), given = renumbered;
  given.frequency_order = false;
  renumbered.l2 = given.l2 = 1e-4;
  const Report a = train(renumbered, data.train, &data.test);
  const Report b = train(given, data.train, &data.test);
  CHECK(a.training_rows->renumbered);
  CHECK_FALSE(b.training_rows->renumbered);
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    CHECK(a.epochs[e].train.loss == b.epochs[e].train.loss);
  }
  CHECK(a.weights == b.weights);
}

TEST_CASE("racy bf16 runs learn as the serial bf16 run does, at 1, 2 and 4 threads") {
  const auto data = problem(5000, 1.0, 8000, 24);
  const Report reference = train(serial(WeightPrecision::kBf16), data.train, &data.test);
  for (const int threads : {1, 2, 4}) {
    CAPTURE(threads);
    TrainConfig racy = serial(WeightPrecision::kBf16);
    racy.policy = Policy::kRacy;
    racy.threads = threads;
    const Report run = train(racy, data.train, &data.test);
    CHECK(run.config.replicate == 0);  // auto keeps bf16 weights shared
    CHECK(run.epochs.back().train.loss ==
          doctest::Approx(reference.epochs.back().train.loss).epsilon(0.1));
    CHECK(*run.epochs.back().test->accuracy >= *reference.epochs.back().test->accuracy - 0.03);
    for (const float w : run.weights) REQUIRE(is_bf16(w));
  }
}

TEST_CASE("bf16 weights refuse the loops and models that keep float weights") {
  const auto check_refused = [](TrainConfig c, const char* message) {
    CAPTURE(message);
    c.weights = WeightPrecision::kBf16;
    CHECK_THROWS_WITH_AS(c.validate(), doctest::Contains(message), InputError);
  };
  TrainConfig base = serial(WeightPrecision::kF32);
  TrainConfig c = base;
  c.policy = Policy::kAtomic;
  check_refused(c, "--weights: expected f32 with --policy atomic");
  c = base;
  c.model = SoftmaxModel{};
  check_refused(c, "--weights: expected f32 for softmax, mlp and mf");
  c = base;
  c.delay = DelaySpec::parse("uniform:4");
  check_refused(c, "--weights: expected f32 with --delay");
  c = base;
  c.simulate = 4;
  check_refused(c, "--weights: expected f32 with --delay");
  c = base;
  c.schedule = ScheduleSpec::parse("fixed:8");
  check_refused(c, "--weights: expected f32 with --delay");
  c = base;
  c.policy = Policy::kRacy;
  c.replicate = 256;
  check_refused(c, "--replicate: expected off or auto with --weights bf16");
  c.replicate = TrainConfig::kReplicateAuto;
  c.hot_features = 100;
  check_refused(c, "--hot-features: expected 0 with --weights bf16");
}
