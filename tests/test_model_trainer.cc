// The model trainer end to end on small synthetic problems: softmax (dense and sparse, label
// mapping), MLP on data no linear model separates, factorisation recovering a planted matrix,
// every optimiser and policy, divergence, and the JSON report.
#include <doctest/doctest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "hogwild/error.h"
#include "hogwild/ratings.h"
#include "hogwild/report.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;

using test::blobs;

namespace {

TrainConfig quick(hogwild::ModelSpec model, int threads = 2) {
  TrainConfig c;
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
      auto c = quick(hogwild::SoftmaxModel{}, threads);
      c.policy = policy;
      const auto report = hogwild::train(c, train, &test);
      REQUIRE(report.epochs.size() == 6);
      CHECK(*report.epochs.back().test->accuracy > 0.9);
      CHECK(report.epochs.back().train.loss < report.epochs.front().train.loss);
    }
  }
}

TEST_CASE("every optimiser trains softmax regression") {
  const auto train = blobs(1200, 3);
  const auto test = blobs(400, 4);
  for (const auto kind : {OptimizerKind::kSgd, OptimizerKind::kMomentum, OptimizerKind::kNesterov,
                          OptimizerKind::kAdagrad, OptimizerKind::kRmsprop, OptimizerKind::kAdam}) {
    CAPTURE(to_string(kind));
    auto c = quick(hogwild::SoftmaxModel{});
    c.optimizer.kind = kind;
    if (kind == OptimizerKind::kAdam || kind == OptimizerKind::kRmsprop) c.optimizer.step = 0.01;
    c.optimizer.clip_norm = kind == OptimizerKind::kSgd ? 5.0 : 0.0;
    const auto report = hogwild::train(c, train, &test);
    CHECK(*report.epochs.back().test->accuracy > 0.9);
  }
}

TEST_CASE("the MLP separates what softmax regression cannot") {
  const auto train = blobs(3000, 5, true);
  const auto test = blobs(1000, 6, true);
  auto c = quick(hogwild::MlpModel{});
  std::get<hogwild::MlpModel>(c.model).hidden = {16, 8};
  c.epochs = 15;
  c.optimizer.kind = OptimizerKind::kMomentum;
  const auto mlp = hogwild::train(c, train, &test);
  CHECK(*mlp.epochs.back().test->accuracy > 0.9);
  c.model = hogwild::SoftmaxModel{};
  const auto linear = hogwild::train(c, train, &test);
  CHECK(*linear.epochs.back().test->accuracy < 0.75);
  CHECK(mlp.data.parameters == 2 * 16 + 16 + 16 * 8 + 8 + 8 * 2 + 2);
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
  const auto report = hogwild::train(quick(hogwild::SoftmaxModel{}), train, &test);
  CHECK(report.labels == std::vector<double>{-1, 3, 7});
  CHECK(*report.epochs.back().test->accuracy > 0.95);
  const auto json = nlohmann::json::parse(to_json(report));
  CHECK(json["classes"] == nlohmann::json::array({-1.0, 3.0, 7.0}));
  test.labels[5] = 4.0f;
  CHECK_THROWS_WITH_AS(
      hogwild::train(quick(hogwild::SoftmaxModel{}), train, &test),
      doctest::Contains("expected labels among the 3 training classes, found 4 in example 6"),
      InputError);
  CHECK_THROWS_WITH_AS(
      hogwild::train(quick(hogwild::MlpModel{}), train, &test),
      doctest::Contains(
          "--model: expected a linear model or softmax for libsvm data (mlp needs dense"),
      InputError);
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
    auto c = quick(hogwild::FactorisationModel{}, threads);
    std::get<hogwild::FactorisationModel>(c.model).rank = 3;
    c.epochs = 15;
    const auto report = hogwild::train(c, problem.train, &problem.test);
    const auto& last = report.epochs.back();
    CAPTURE(*last.test->rmse);
    CHECK(*last.test->rmse < 1.1 * g.noise);
    CHECK(*last.train.rmse < *report.epochs.front().train.rmse);
    CHECK_FALSE(last.test->accuracy);
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
  auto c = quick(hogwild::FactorisationModel{});
  c.optimizer.step = 50;
  c.optimizer.schedule = Schedule::kConstant;
  CHECK_THROWS_WITH_AS(hogwild::train(c, problem.train, nullptr), doctest::Contains("diverged"),
                       DivergenceError);
  // The bound is --divergence-factor times the initial loss: resumed from a state that says the
  // initial loss was 1e-6, the first epoch's loss (about 0.1 or more) is beyond 2x it.
  c = quick(hogwild::SoftmaxModel{}, 1);
  c.epochs = 1;
  const auto blob = blobs(200, 3);
  const Report first = hogwild::train(c, blob, nullptr);
  TrainState state;
  state.epoch = 1;
  state.initial_loss = 1e-6;
  state.weights = first.weights;
  c.epochs = 2;
  c.divergence_factor = 2;
  CHECK_THROWS_WITH_AS(hogwild::train(c, blob, nullptr, {}, &state),
                       doctest::Contains("beyond 2x its initial"), DivergenceError);
  c.divergence_factor = 1;
  CHECK_THROWS_WITH_AS(hogwild::train(c, blob, nullptr),
                       "--divergence-factor: expected a factor > 1, found 1", InputError);
  c = quick(hogwild::MlpModel{});
  std::get<hogwild::MlpModel>(c.model).hidden = {};
  const auto data = blobs(50, 1);
  CHECK_THROWS_WITH_AS(hogwild::train(c, data, nullptr), doctest::Contains("--hidden"), InputError);
  c = quick(hogwild::SoftmaxModel{});
  c.epochs = 0;
  CHECK_THROWS_WITH_AS(hogwild::train(c, data, nullptr), "--epochs: expected at least 1, found 0",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_model("svm"), doctest::Contains("--model: expected one of"),
                       InputError);
}

TEST_CASE("serial runs are reproducible for a seed, and the JSON repeats the resolved config") {
  const auto train = blobs(600, 9);
  auto c = quick(hogwild::MlpModel{}, 1);
  c.policy = Policy::kSerial;
  std::get<hogwild::MlpModel>(c.model).hidden = {8};
  const auto a = hogwild::train(c, train, nullptr);
  const auto b = hogwild::train(c, train, nullptr);
  CHECK(a.weights == b.weights);
  c.seed = 2;
  CHECK(hogwild::train(c, train, nullptr).weights != a.weights);
  const auto json = nlohmann::json::parse(to_json(a));
  CHECK(json["config"]["batch"] == 32);
  CHECK(json["config"]["optimizer"] == "sgd");
  CHECK(json["config"]["hidden"] == nlohmann::json::array({8}));
  CHECK(json["epochs"][0]["epoch"] == 0);
  CHECK(json["final"].contains("train_accuracy"));
}
