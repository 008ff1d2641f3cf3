// The model trainer end to end on small synthetic problems: softmax (dense and sparse, label
// mapping), MLP on data no linear model separates, factorisation recovering a planted matrix,
// every optimiser and policy, divergence, and the JSON report.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "engine/rng.h"
#include "hogwild/error.h"
#include "hogwild/model_trainer.h"
#include "hogwild/ratings.h"

using namespace hogwild;

namespace {

// Three Gaussian classes in 5 dimensions, or (ring = true) an inner disc and an outer ring in
// 2 dimensions, which no linear classifier separates.
DenseDataset blobs(std::size_t rows, std::uint64_t seed, bool ring = false) {
  DenseDataset d;
  d.cols = ring ? 2 : 5;
  detail::Rng rng(seed);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto label = static_cast<std::int32_t>(rng.below(ring ? 2 : 3));
    if (ring) {
      const double angle = 6.283185307179586 * rng.uniform();
      const double radius = label == 0 ? 0.5 * rng.uniform() : 0.9 + 0.4 * rng.uniform();
      d.features.push_back(static_cast<float>(radius * std::cos(angle)));
      d.features.push_back(static_cast<float>(radius * std::sin(angle)));
    } else {
      for (std::size_t j = 0; j < d.cols; ++j) {
        const double centre = (j == static_cast<std::size_t>(label)) ? 2.0 : 0.0;
        d.features.push_back(static_cast<float>(centre + 0.7 * rng.normal()));
      }
    }
    d.labels.push_back(label);
  }
  return d;
}

ModelConfig quick(ModelKind model, int threads = 2) {
  ModelConfig c;
  c.model = model;
  c.threads = threads;
  c.epochs = 5;
  return c;
}

}  // namespace

TEST_CASE("softmax on dense features learns under every policy and thread count") {
  const auto train = blobs(1500, 1);
  const auto test = blobs(500, 2);
  for (const auto policy :
       {Policy::kRacy, Policy::kAtomic, Policy::kStriped, Policy::kLocked, Policy::kSerial}) {
    for (const int threads : {1, 2, 4}) {
      if (policy == Policy::kSerial && threads > 1) continue;
      CAPTURE(to_string(policy));
      CAPTURE(threads);
      auto c = quick(ModelKind::kSoftmax, threads);
      c.policy = policy;
      const auto report = train_model(c, train, &test);
      REQUIRE(report.epochs.size() == 6);
      CHECK(*report.epochs.back().test_accuracy > 0.9);
      CHECK(report.epochs.back().train_loss < report.epochs.front().train_loss);
    }
  }
}

TEST_CASE("every optimiser trains softmax regression") {
  const auto train = blobs(1200, 3);
  const auto test = blobs(400, 4);
  for (const auto kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kNesterov,
                          OptimizerKind::kAdagrad, OptimizerKind::kRmsprop, OptimizerKind::kAdam}) {
    CAPTURE(to_string(kind));
    auto c = quick(ModelKind::kSoftmax);
    c.optimizer.kind = kind;
    if (kind == OptimizerKind::kAdam || kind == OptimizerKind::kRmsprop) c.optimizer.step = 0.01;
    c.optimizer.clip_norm = kind == OptimizerKind::kSgd ? 5.0 : 0.0;
    const auto report = train_model(c, train, &test);
    CHECK(*report.epochs.back().test_accuracy > 0.9);
  }
}

TEST_CASE("the MLP separates what softmax regression cannot") {
  const auto train = blobs(3000, 5, true);
  const auto test = blobs(1000, 6, true);
  auto c = quick(ModelKind::kMlp);
  c.hidden = {16, 8};
  c.epochs = 15;
  c.optimizer.kind = OptimizerKind::kMomentum;
  const auto mlp = train_model(c, train, &test);
  CHECK(*mlp.epochs.back().test_accuracy > 0.9);
  c.model = ModelKind::kSoftmax;
  const auto linear = train_model(c, train, &test);
  CHECK(*linear.epochs.back().test_accuracy < 0.75);
  CHECK(mlp.dataset.parameters == 2 * 16 + 16 + 16 * 8 + 8 + 8 * 2 + 2);
}

TEST_CASE("sparse softmax maps any label values to classes and keeps the mapping") {
  // Class c has feature c (of 3) strongly on, plus noise features.
  Dataset train, test;
  detail::Rng rng(8);
  const float values[3] = {-1.0f, 3.0f, 7.0f};
  for (int i = 0; i < 1200; ++i) {
    const auto c = static_cast<std::uint32_t>(rng.below(3));
    const std::uint32_t noise = 3 + static_cast<std::uint32_t>(rng.below(20));
    const std::vector<std::uint32_t> idx{c, noise};
    const std::vector<float> val{1.0f, 0.5f};
    (i < 900 ? train : test).append(idx, val, values[c]);
  }
  train.num_features = test.num_features = 23;
  const auto report = train_model(quick(ModelKind::kSoftmax), train, &test);
  CHECK(report.class_labels == std::vector<double>{-1, 3, 7});
  CHECK(*report.epochs.back().test_accuracy > 0.95);
  const auto json = nlohmann::json::parse(to_json(report));
  CHECK(json["classes"] == nlohmann::json::array({-1.0, 3.0, 7.0}));
  test.labels[5] = 4.0f;
  CHECK_THROWS_WITH_AS(
      train_model(quick(ModelKind::kSoftmax), train, &test),
      doctest::Contains("expected labels among the 3 training classes, found 4 in example 6"),
      InputError);
  CHECK_THROWS_WITH_AS(train_model(quick(ModelKind::kMlp), train, &test),
                       doctest::Contains("--model: expected softmax for LIBSVM data"), InputError);
}

TEST_CASE("factorisation recovers a planted low-rank matrix to the noise level") {
  RatingsGeneratorConfig g;
  g.users = 400;
  g.items = 300;
  g.rank = 3;
  g.density = 0.2;
  g.noise = 0.3;
  g.test_fraction = 0.1;
  const auto problem = generate_ratings(g);
  for (const int threads : {1, 2}) {
    auto c = quick(ModelKind::kFactorisation, threads);
    c.rank = 3;
    c.epochs = 15;
    const auto report = train_model(c, problem.train, &problem.test);
    const auto& last = report.epochs.back();
    CAPTURE(*last.test_rmse);
    CHECK(*last.test_rmse < 1.1 * g.noise);
    CHECK(*last.train_rmse < *report.epochs.front().train_rmse);
    CHECK_FALSE(last.test_accuracy);
    const auto json = nlohmann::json::parse(to_json(report));
    for (const char* key : {"config", "dataset", "epochs", "samples_per_second", "final"}) {
      CHECK(json.contains(key));
    }
    CHECK(json["epochs"][1].contains("train_rmse"));
    CHECK(json["final"].contains("test_rmse"));
    CHECK(json["config"]["model"] == "mf");
  }
}

TEST_CASE("a diverging run stops with DivergenceError, and bad options name themselves") {
  RatingsGeneratorConfig g;
  g.users = 100;
  g.items = 100;
  g.rank = 2;
  const auto problem = generate_ratings(g);
  auto c = quick(ModelKind::kFactorisation);
  c.optimizer.step = 50;
  c.optimizer.schedule = Schedule::kConstant;
  CHECK_THROWS_WITH_AS(train_model(c, problem.train, nullptr), doctest::Contains("diverged"),
                       DivergenceError);
  // The bound is --divergence-factor times the initial loss: resumed from a state that says the
  // initial loss was 1e-6, the first epoch's loss (about 0.1 or more) is beyond 2x it.
  c = quick(ModelKind::kSoftmax, 1);
  c.epochs = 1;
  const auto blob = blobs(200, 3);
  const ModelReport first = train_model(c, blob, nullptr);
  TrainState state;
  state.epoch = 1;
  state.initial_loss = 1e-6;
  state.weights = first.weights;
  c.epochs = 2;
  c.divergence_factor = 2;
  CHECK_THROWS_WITH_AS(train_model(c, blob, nullptr, {}, &state),
                       doctest::Contains("beyond 2x its initial"), DivergenceError);
  c.divergence_factor = 1;
  CHECK_THROWS_WITH_AS(train_model(c, blob, nullptr),
                       "--divergence-factor: expected a factor > 1, found 1", InputError);
  c = quick(ModelKind::kMlp);
  c.hidden = {};
  const auto data = blobs(50, 1);
  CHECK_THROWS_WITH_AS(train_model(c, data, nullptr), doctest::Contains("--hidden"), InputError);
  c = quick(ModelKind::kSoftmax);
  c.epochs = 0;
  CHECK_THROWS_WITH_AS(train_model(c, data, nullptr), "--epochs: expected at least 1, found 0",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_model_kind("svm"), doctest::Contains("--model: expected one of"),
                       InputError);
}

TEST_CASE("serial runs are reproducible for a seed, and the JSON repeats the resolved config") {
  const auto train = blobs(600, 9);
  auto c = quick(ModelKind::kMlp, 1);
  c.policy = Policy::kSerial;
  c.hidden = {8};
  const auto a = train_model(c, train, nullptr);
  const auto b = train_model(c, train, nullptr);
  CHECK(a.weights == b.weights);
  c.seed = 2;
  CHECK(train_model(c, train, nullptr).weights != a.weights);
  const auto json = nlohmann::json::parse(to_json(a));
  CHECK(json["config"]["batch"] == 32);
  CHECK(json["config"]["optimizer"] == "sgd");
  CHECK(json["config"]["hidden"] == nlohmann::json::array({8}));
  CHECK(json["epochs"][0]["epoch"] == 0);
  CHECK(json["final"].contains("train_accuracy"));
}
