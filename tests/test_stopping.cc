// Stopping when converged (--patience, --tol): the run ends exactly where the rule, applied here
// to the epochs of an uncapped run, says it does; a loss that never moves stops after `patience`
// epochs; bad values are refused. What the run watches: held-out examples
// (--validation-fraction) and a sample of the training examples (--train-loss-sample).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "engine/train_loss_sample.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/predict.h"
#include "hogwild/ratings.h"
#include "hogwild/report.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;

namespace {

// The epoch at which a run with this patience and tol stops, from the training losses of a run
// that did not stop (epoch 0 first): scikit-learn's rule, written out again here.
int expected_stop(const std::vector<EpochRecord>& epochs, int patience, double tol) {
  double best = epochs[0].train.loss;
  int without = 0;
  for (std::size_t e = 1; e < epochs.size(); ++e) {
    const double loss = epochs[e].train.loss;
    without = loss > best - tol ? without + 1 : 0;
    best = std::min(best, loss);
    if (without >= patience) return static_cast<int>(e);
  }
  return static_cast<int>(epochs.size()) - 1;
}

TrainConfig serial(int epochs) {
  TrainConfig config;
  config.policy = Policy::kSerial;
  config.epochs = epochs;
  config.optimizer.step = 0.05;
  return config;
}

}  // namespace

TEST_CASE("patience stops a serial run exactly where its uncapped twin's losses say") {
  const auto problem = test::sparse_problem(2000, 300, 10, 21);
  const auto uncapped = train(serial(60), problem.train, nullptr);
  CHECK(uncapped.stopped == StopReason::kEpochs);
  for (const auto& stopping : {std::pair{1, 1e-3}, std::pair{3, 1e-4}, std::pair{2, 1e-2}}) {
    const auto [patience, tol] = stopping;
    INFO("patience " << stopping.first << ", tol " << stopping.second);
    auto config = serial(60);
    config.patience = patience;
    config.tol = tol;
    const auto report = train(config, problem.train, nullptr);
    const int stop = expected_stop(uncapped.epochs, patience, tol);
    REQUIRE(stop < 60);  // the rule does stop this run before its cap
    CHECK(report.stopped == StopReason::kConverged);
    CHECK(report.epochs.back().epoch == stop);
    for (int e = 0; e <= stop; ++e) {
      CHECK(report.epochs[static_cast<std::size_t>(e)].train.loss ==
            uncapped.epochs[static_cast<std::size_t>(e)].train.loss);
    }
  }
}

TEST_CASE("a loss that cannot move stops after exactly patience epochs, at every thread count") {
  // Every feature is zero: the logistic loss stays log 2 and the gradient 0.
  Dataset flat;
  for (int i = 0; i < 500; ++i) {
    const std::uint32_t index = 0;
    const float value = 0;
    flat.append({&index, 1}, {&value, 1}, i % 2 ? 1.0f : -1.0f);
  }
  for (const int threads : {1, 2, 4}) {
    CAPTURE(threads);
    TrainConfig config;
    config.threads = threads;
    config.epochs = 100;
    config.patience = 4;
    const auto report = train(config, flat, nullptr);
    CHECK(report.epochs.back().train.loss == doctest::Approx(std::log(2.0)).epsilon(1e-12));
    CHECK(report.epochs.back().epoch == 4);
    CHECK(report.stopped == StopReason::kConverged);
    CHECK(to_json(report).find("\"stopped\": \"converged\"") != std::string::npos);
  }
}

TEST_CASE("patience and tol out of range are refused naming the option") {
  const auto problem = test::sparse_problem(50, 20, 3, 22);
  auto config = serial(3);
  config.patience = -1;
  CHECK_THROWS_WITH_AS(train(config, problem.train, nullptr),
                       "--patience: expected a count of epochs >= 0 (0 = off), found -1",
                       InputError);
  config.patience = 2;
  config.tol = -0.5;
  CHECK_THROWS_WITH_AS(train(config, problem.train, nullptr),
                       "--tol: expected a finite improvement >= 0, found -0.5", InputError);
  config.tol = std::nan("");
  CHECK_THROWS_AS(train(config, problem.train, nullptr), InputError);
}

TEST_CASE("validation fraction: held-out examples evaluated each epoch, patience on their loss") {
  // Few rows, many features, a large step: the training loss keeps falling while the held-out
  // loss turns up, so stopping on it ends the run before the training loss would.
  const auto problem = test::sparse_problem(600, 2000, 10, 23);
  auto config = serial(40);
  config.optimizer.step = 2;
  config.validation_fraction = 0.25;
  const auto uncapped = train(config, problem.train, nullptr);
  REQUIRE(uncapped.epochs.size() == 41);
  // 150 of the 600 examples are held out and the rest trained on.
  CHECK(uncapped.data.rows == 450);
  CHECK(to_json(uncapped).find("\"validation_fraction\": 0.25") != std::string::npos);
  // The held-out loss is the model's loss on exactly the examples it did not train on: the
  // final weights' loss on all 600 examples (predicted here) is the two parts' weighted mean.
  for (const auto& e : uncapped.epochs) REQUIRE(e.validation.has_value());
  CHECK(uncapped.epochs[0].validation->loss == doctest::Approx(std::log(2.0)));
  Checkpoint model = checkpoint_for(config, problem.train, nullptr);
  model.weights = uncapped.weights;
  const double all = *predict(model, problem.train).loss;
  const auto& last = uncapped.epochs.back();
  CHECK((450 * last.train.loss + 150 * last.validation->loss) / 600 ==
        doctest::Approx(all).epsilon(1e-9));
  std::vector<EpochRecord> held(uncapped.epochs);
  for (auto& e : held) e.train = *e.validation;  // the rule on the held-out losses
  for (const int patience : {1, 3}) {
    CAPTURE(patience);
    auto stopping = config;
    stopping.patience = patience;
    const auto report = train(stopping, problem.train, nullptr);
    const int stop = expected_stop(held, patience, stopping.tol);
    REQUIRE(stop < 40);
    CHECK(report.stopped == StopReason::kConverged);
    CHECK(report.epochs.back().epoch == stop);
    // Stopping on the training loss would have gone on.
    CHECK(expected_stop(uncapped.epochs, patience, stopping.tol) > stop);
  }
  // The same seed holds out the same examples: the runs agree epoch for epoch.
  const auto again = train(config, problem.train, nullptr);
  CHECK(again.epochs.back().validation->loss == uncapped.epochs.back().validation->loss);
  CHECK(again.weights == uncapped.weights);
}

TEST_CASE("a validation fraction out of range, or holding out nothing, is refused") {
  const auto problem = test::sparse_problem(50, 20, 3, 22);
  auto config = serial(3);
  config.validation_fraction = 0.6;
  CHECK_THROWS_WITH_AS(train(config, problem.train, nullptr),
                       "--validation-fraction: expected a fraction in [0, 0.5] (0 = none), found "
                       "0.6",
                       InputError);
  config.validation_fraction = 0.001;  // 0.05 of an example
  CHECK_THROWS_WITH_AS(train(config, problem.train, nullptr),
                       doctest::Contains("holds out at least one of the 50 training examples"),
                       InputError);
}

namespace {

// The examples `rows` of `data`, copied here as a user would (not through the library's subset).
Dataset rows_of(const Dataset& data, const std::vector<std::size_t>& rows) {
  Dataset out;
  for (const auto r : rows) {
    const auto row = data.row(r);
    out.append(row.indices, row.values, data.labels[r]);
  }
  out.num_features = data.num_features;
  return out;
}

// The sample of `sample` of `n` examples, checked as a sample: sorted, distinct, in range.
std::vector<std::size_t> checked_sample(std::size_t n, std::size_t sample, std::uint64_t seed) {
  const auto rows = detail::train_loss_rows(n, sample, seed);
  REQUIRE(rows.size() == sample);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    REQUIRE(rows[i] < n);
    if (i > 0) REQUIRE(rows[i] > rows[i - 1]);
  }
  return rows;
}

}  // namespace

TEST_CASE(
    "train loss sample: the final weights' loss on the sampled examples; training unchanged") {
  const auto problem = test::sparse_problem(3000, 400, 12, 24);
  for (const bool softmax : {false, true}) {
    CAPTURE(softmax);
    auto config = serial(4);
    if (softmax) config.model = SoftmaxModel{};
    const auto all = train(config, problem.train, nullptr);
    config.train_loss_sample = 400;
    const auto sampled = train(config, problem.train, nullptr);
    // Measuring fewer examples changes no update.
    CHECK(sampled.weights == all.weights);
    CHECK(to_json(sampled).find("\"train_loss_sample\": 400") != std::string::npos);
    CHECK(to_json(all).find("train_loss_sample") == std::string::npos);
    // The reported loss and accuracy are the final weights' on the 400 examples, predicted here.
    Checkpoint model = checkpoint_for(config, problem.train, nullptr);
    model.weights = sampled.weights;
    const auto rows = checked_sample(3000, 400, config.seed);
    const Predictions on_sample = predict(model, rows_of(problem.train, rows));
    const auto& last = sampled.epochs.back().train;
    CHECK(last.loss == doctest::Approx(*on_sample.loss).epsilon(1e-9));
    CHECK(*last.accuracy == doctest::Approx(*on_sample.accuracy).epsilon(1e-12));
    CHECK(last.loss != all.epochs.back().train.loss);
    // A sample as large as the data measures all of it: the same figures to the last bit.
    config.train_loss_sample = 3000;
    const auto whole = train(config, problem.train, nullptr);
    for (std::size_t e = 0; e < whole.epochs.size(); ++e) {
      CHECK(whole.epochs[e].train.loss == all.epochs[e].train.loss);
    }
  }
}

TEST_CASE("train loss sample: ratings measured on the sampled ratings, the same for a seed") {
  RatingsGeneratorConfig g;
  g.users = 200;
  g.items = 100;
  g.density = 0.2;
  g.seed = 25;
  const auto problem = generate_ratings(g);
  auto config = serial(3);
  config.model = FactorisationModel{};
  config.train_loss_sample = 500;
  const auto report = train(config, problem.train, nullptr);
  Checkpoint model = checkpoint_for(config, problem.train, nullptr);
  model.weights = report.weights;
  Ratings sample;
  for (const auto r : checked_sample(problem.train.size(), 500, config.seed)) {
    sample.append(problem.train.users[r], problem.train.items[r], problem.train.values[r]);
  }
  sample.num_users = problem.train.num_users;
  sample.num_items = problem.train.num_items;
  CHECK(*report.epochs.back().train.rmse ==
        doctest::Approx(*predict(model, sample).rmse).epsilon(1e-9));
  // Another seed draws other ratings.
  CHECK(detail::train_loss_rows(problem.train.size(), 500, 2) !=
        detail::train_loss_rows(problem.train.size(), 500, config.seed));
  CHECK(detail::train_loss_rows(problem.train.size(), 0, 1).empty());
}

TEST_CASE("train loss sample: dense rows stored as bytes, measured as the floats they stand for") {
  // 3,000 images of 16 pixels, class 0 brighter on the left half, class 1 on the right.
  DenseDataset images;
  images.cols = 16;
  images.shape = {4, 4};
  for (std::uint32_t i = 0; i < 3000; ++i) {
    const int label = static_cast<int>(i % 2);
    for (std::uint32_t p = 0; p < 16; ++p) {
      const bool bright = (p % 4 < 2) == (label == 0);
      images.bytes.push_back(
          static_cast<std::uint8_t>((bright ? 150 : 40) + (i * 7 + p * 13) % 90));
    }
    images.labels.push_back(label);
  }
  auto config = serial(3);
  config.model = SoftmaxModel{};
  config.optimizer.step = 0.1;
  config.train_loss_sample = 250;
  const auto report = train(config, images, nullptr);
  Checkpoint model = checkpoint_for(config, images, nullptr);
  model.weights = report.weights;
  DenseDataset sample;  // the sampled images as floats, written out here
  sample.cols = 16;
  for (const auto r : checked_sample(3000, 250, config.seed)) {
    for (std::size_t p = 0; p < 16; ++p) {
      sample.features.push_back(static_cast<float>(images.bytes[r * 16 + p]) * (1.0f / 255.0f));
    }
    sample.labels.push_back(images.labels[r]);
  }
  const Predictions on_sample = predict(model, sample);
  // Float products whose summation the compiler may order differently in the two passes.
  CHECK(report.epochs.back().train.loss == doctest::Approx(*on_sample.loss).epsilon(1e-7));
  CHECK(*report.epochs.back().train.accuracy == doctest::Approx(*on_sample.accuracy));
  CHECK(*on_sample.accuracy > 0.9);
}
