#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "engine/workers.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/report.h"
#include "hogwild/trainer.h"
#include "models/model.h"
#include "test_support.h"

using namespace hogwild;

namespace {
SparseProblem problem(std::size_t rows = 3000) {
  SparseGeneratorConfig c;
  c.rows = rows;
  c.test_rows = 1000;
  c.features = 800;
  c.nnz_per_row = 20;
  c.label_noise = 0.02;
  return generate_sparse(c);
}
}  // namespace

TEST_CASE("a worker's exception is rethrown on the caller after every worker joined") {
  for (const int threads : {1, 2, 4, 8}) {
    std::atomic<int> finished{0};
    CHECK_THROWS_WITH_AS(detail::run_workers(threads,
                                             [&](int worker) {
                                               if (worker == threads - 1) {
                                                 throw std::runtime_error("worker failed");
                                               }
                                               ++finished;
                                             }),
                         "worker failed", std::runtime_error);
    CHECK(finished == threads - 1);
  }
}

TEST_CASE("configuration errors name the option") {
  const auto p = problem(200);
  auto expect = [&](TrainConfig c, const char* text) {
    CHECK_THROWS_WITH_AS(hogwild::train(c, p.train, nullptr), doctest::Contains(text), InputError);
  };
  TrainConfig c;
  c.threads = -1;
  expect(c, "--threads");
  c = {};
  c.epochs = 0;
  expect(c, "--epochs: expected at least 1, found 0");
  c = {};
  c.optimizer.step = 0;
  expect(c, "--step");
  c = {};
  c.optimizer.step = -1;
  expect(c, "--step");
  c = {};
  c.optimizer.decay = 0;
  expect(c, "--decay");
  c = {};
  c.l2 = -1;
  expect(c, "--l2");
  c = {};
  c.policy = Policy::kSerial;
  c.threads = 2;
  expect(c, "--threads: expected 1 with --policy serial");
}

TEST_CASE("classifier labels: two classes mapped to -1/+1, others rejected") {
  auto p = problem();
  // 0/1 labels train like -1/+1 labels, bit for bit.
  Dataset zero_one = p.train;
  for (auto& y : zero_one.labels) y = y > 0 ? 1.0f : 0.0f;
  TrainConfig c;
  c.policy = Policy::kSerial;
  c.epochs = 2;
  const auto a = hogwild::train(c, p.train, nullptr);
  const auto b = hogwild::train(c, zero_one, nullptr);
  CHECK(a.weights == b.weights);
  CHECK(b.labels == std::vector<double>{0.0, 1.0});

  Dataset three = p.train;
  three.labels[5] = 2.0f;
  CHECK_THROWS_WITH_AS(hogwild::train(c, three, nullptr),
                       doctest::Contains("expected two label classes for a binary model"),
                       InputError);
  Dataset bad_test = p.test;
  bad_test.labels[3] = 7.0f;
  CHECK_THROWS_WITH_AS(hogwild::train(c, p.train, &bad_test),
                       doctest::Contains("expected labels -1 or 1 (the training classes), found 7 "
                                         "in example 4"),
                       InputError);
  // Squared loss takes any real label.
  c.model = hogwild::LinearModel{hogwild::LossKind::kSquared};
  CHECK_NOTHROW(hogwild::train(c, three, nullptr));
}

TEST_CASE("the report counts epochs and samples, and learns") {
  const auto p = problem();
  for (const int threads : {1, 2, 4}) {
    TrainConfig c;
    c.threads = threads;
    c.epochs = 4;
    const auto r = hogwild::train(c, p.train, &p.test);
    REQUIRE(r.epochs.size() == 5);
    CHECK(r.epochs[0].epoch == 0);
    CHECK(r.epochs[0].train.loss == doctest::Approx(std::log(2.0)));
    CHECK(r.samples == 4 * p.train.rows());
    CHECK(r.samples_per_second > 0);
    CHECK(r.config.threads == threads);
    CHECK(r.epochs.back().train.loss < 0.9 * r.epochs[0].train.loss);
    CHECK(r.epochs.back().test->accuracy.value() > 0.7);
    CHECK(r.epochs[2].step == doctest::Approx(*r.config.optimizer.step * r.config.optimizer.decay));
  }
}

TEST_CASE("same seed, same serial result, and another seed differs") {
  const auto p = problem();
  TrainConfig c;
  c.policy = Policy::kSerial;
  c.epochs = 2;
  const auto a = hogwild::train(c, p.train, nullptr);
  const auto b = hogwild::train(c, p.train, nullptr);
  CHECK(a.weights == b.weights);
  c.seed = 99;
  CHECK(hogwild::train(c, p.train, nullptr).weights != a.weights);
}

TEST_CASE("a diverging run stops with the epoch and a hint, never NaN results") {
  const auto p = problem();
  Dataset scaled = p.train;
  for (auto& v : scaled.values) v *= 100.0f;
  TrainConfig c;
  c.model = hogwild::LinearModel{hogwild::LossKind::kSquared};
  c.optimizer.step = 10;
  c.epochs = 5;
  for (const auto policy : {Policy::kSerial, Policy::kRacy}) {
    c.policy = policy;
    c.threads = policy == Policy::kSerial ? 1 : 2;
    CHECK_THROWS_WITH_AS(hogwild::train(c, scaled, nullptr),
                         doctest::Contains("epoch 1: training loss"), DivergenceError);
    CHECK_THROWS_WITH_AS(hogwild::train(c, scaled, nullptr),
                         doctest::Contains("try a smaller --step"), DivergenceError);
    // The error carries the run's report up to the epoch that diverged.
    try {
      (void)hogwild::train(c, scaled, nullptr);
    } catch (const DivergenceError& e) {
      REQUIRE(e.report() != nullptr);
      const hogwild::Report& r = *e.report();
      CHECK(r.stopped == hogwild::StopReason::kDiverged);
      REQUIRE(r.epochs.size() == 2);
      CHECK(r.epochs[1].epoch == 1);
      CHECK(!(r.epochs[1].train.loss <= c.divergence_factor * r.epochs[0].train.loss));
      CHECK(r.curve.size() == 2);
      CHECK(nlohmann::json::parse(to_json(r))["stopped"] == "diverged");
    }
  }
}

TEST_CASE("weights that are not numbers get no example right, in every classifier") {
  Dataset data;
  data.append(std::vector<std::uint32_t>{0}, std::vector<float>{1}, 1.0f);
  data.append(std::vector<std::uint32_t>{1}, std::vector<float>{1}, -1.0f);
  data.append(std::vector<std::uint32_t>{0, 1}, std::vector<float>{1, 1}, -1.0f);
  data.num_features = 2;
  const std::vector<float> labels{-1, 1};
  for (const auto loss : {hogwild::LossKind::kLogistic, hogwild::LossKind::kHinge}) {
    const std::vector<float> nan(2, std::nanf(""));
    CHECK(*hogwild::evaluate(loss, nan, 0, data, labels, 1).accuracy == 0);
    // The same rows with numbers: a negative margin answers the negative label.
    const std::vector<float> negative{-1, -1};
    CHECK(*hogwild::evaluate(loss, negative, 0, data, labels, 1).accuracy ==
          doctest::Approx(2.0 / 3));
  }
  hogwild::Checkpoint shape;
  shape.model = "softmax";
  shape.format = "libsvm";
  shape.features = 2;
  shape.classes = 2;
  const auto softmax = hogwild::detail::make_model(shape, 0);
  const std::vector<std::int32_t> y{1, 0, 0};
  const hogwild::detail::Examples examples(data, y);
  std::vector<float> w(softmax->num_params(), std::nanf(""));
  CHECK(softmax->evaluate(examples, w.data(), 0, 3).correct == 0);
  std::fill(w.begin(), w.end(), 0.0f);  // equal logits: the first class, 0
  CHECK(softmax->evaluate(examples, w.data(), 0, 3).correct == 2);
}

TEST_CASE("a minibatch whose loss is not finite ends the run with the epochs before it") {
  const auto p = problem();
  Dataset scaled = p.train;
  for (auto& v : scaled.values) v *= 100.0f;
  TrainConfig c;
  c.model = hogwild::SoftmaxModel{};  // the model kernel checks each minibatch's loss
  c.schedule = hogwild::ScheduleSpec::parse("fixed:8");
  c.optimizer.step = 1e38;  // the weights overflow within the first epoch
  c.epochs = 3;
  struct Workers {
    Policy policy;
    int threads, simulate;
  };
  for (const Workers w : {Workers{Policy::kSerial, 1, 0}, Workers{Policy::kRacy, 2, 0},
                          Workers{Policy::kRacy, 1, 3}}) {
    CAPTURE(w.threads);
    CAPTURE(w.simulate);
    c.policy = w.policy;
    c.threads = w.threads;
    c.simulate = w.simulate;
    try {
      (void)hogwild::train(c, scaled, nullptr);
      FAIL("the run did not diverge");
    } catch (const DivergenceError& e) {
      INFO(std::string(e.what()));
      CHECK(std::string(e.what()).find("epoch 1: minibatch loss became") != std::string::npos);
      REQUIRE(e.report() != nullptr);
      const hogwild::Report& r = *e.report();
      CHECK(r.stopped == hogwild::StopReason::kDiverged);
      REQUIRE(r.epochs.size() == 1);  // the initial model: the first epoch never ended
      CHECK(std::isfinite(r.epochs[0].train.loss));
      CHECK(nlohmann::json::parse(to_json(r))["stopped"] == "diverged");
    }
  }
}

TEST_CASE("test features beyond the training dimension are ignored") {
  auto p = problem();
  Dataset wide = p.test;
  wide.indices[0] = 5000;  // row 0's first index is now far beyond the training dimension
  std::sort(wide.indices.begin(), wide.indices.begin() + static_cast<long>(wide.row_offsets[1]));
  wide.num_features = 5001;
  TrainConfig c;
  c.epochs = 2;
  const auto r = hogwild::train(c, p.train, &wide);
  CHECK(std::isfinite(r.epochs.back().test->loss));
}

TEST_CASE("the JSON report has the fields scripts read") {
  const auto p = problem();
  TrainConfig c;
  c.epochs = 2;
  c.threads = 2;
  const auto json = nlohmann::json::parse(to_json(hogwild::train(c, p.train, &p.test)));
  CHECK(json["config"]["policy"] == "racy");
  CHECK(json["config"]["threads"] == 2);
  CHECK(json["dataset"]["rows"] == p.train.rows());
  CHECK(json["dataset"]["features"] == 800);
  CHECK(json["dataset"]["nnz"] == p.train.nnz());
  REQUIRE(json["epochs"].size() == 3);
  for (const auto& e : json["epochs"]) {
    for (const char* key : {"epoch", "seconds", "train_loss", "test_loss", "test_accuracy"}) {
      CHECK(e.contains(key));
    }
    CHECK(e["test_accuracy"].get<double>() >= 0.0);
    CHECK(e["test_accuracy"].get<double>() <= 1.0);
  }
  CHECK(json["samples_per_second"].get<double>() > 0);
  CHECK(json["final"]["test_accuracy"] == json["epochs"][2]["test_accuracy"]);
}

TEST_CASE("the report lists every distinct label once, ascending, with its count") {
  // Regression targets: one label per example, 5,000 of them, written in one pass.
  SparseGeneratorConfig c;
  c.rows = 5000;
  c.features = 200;
  c.nnz_per_row = 5;
  c.regression = true;
  const SparseProblem p = generate_sparse(c);
  const auto counts = describe(p.train).label_counts;
  REQUIRE(counts.size() > 4000);
  TrainConfig config;
  config.model = LinearModel{LossKind::kSquared};
  config.epochs = 1;
  const auto json =
      nlohmann::ordered_json::parse(to_json(hogwild::train(config, p.train, nullptr)));
  test::check_lists_in_order(json["dataset"]["labels"], counts,
                             [](const std::string& key) { return std::stof(key); });
}
