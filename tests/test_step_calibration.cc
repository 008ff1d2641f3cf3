// --step auto: the calibration picks the step a closed form says is best, is reproducible for a
// seed, refuses data on which every step diverges, and is recorded in the report.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/step_calibration.h"
#include "engine/subsets.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/ratings.h"
#include "hogwild/report.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;

namespace {

double inf() { return std::numeric_limits<double>::infinity(); }

// `rows` copies of the example x = (a, b) with target y: least squares whose curvature along
// every example is ||x||^2.
Dataset identical_rows(int rows, float a, float b, float y) {
  Dataset data;
  const std::uint32_t indices[] = {0, 1};
  const float values[] = {a, b};
  for (int i = 0; i < rows; ++i) data.append(indices, values, y);
  return data;
}

TrainConfig least_squares() {
  TrainConfig config;
  config.model = LinearModel{LossKind::kSquared};
  config.optimizer.auto_step = true;
  return config;
}

}  // namespace

TEST_CASE("auto step picks 1 / ||x||^2 on least squares, where one step solves it") {
  // ||x||^2 = 10: the step 0.1 fits the target exactly after the first example; smaller steps
  // leave part of the error after each example, larger ones overshoot.
  const auto data = identical_rows(8, 3.0f, 1.0f, 2.0f);
  const auto c = detail::calibrate_step(least_squares(), data);
  CHECK(c.best == doctest::Approx(0.1));
  CHECK(c.pick == c.best);  // every other step's loss is far above
  // The run trains from the half-decade below (softmax excepted): safe over many passes.
  CHECK(c.chosen == doctest::Approx(0.1 / std::sqrt(10.0)));
  CHECK_FALSE(c.inconclusive);
  CHECK(c.sample_rows == 4);
  CHECK(c.held_out_rows == 4);
  REQUIRE(c.steps.size() == c.losses.size());
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    CAPTURE(c.steps[i]);
    if (c.steps[i] != c.best) CHECK(c.losses[i] > 1e3 * c.losses[6]);
  }
  CHECK(c.losses[6] < 1e-10);  // 0.1 is the ladder's 7th step
}

TEST_CASE("auto step is reproducible for a seed and recorded in the report") {
  const auto problem = test::sparse_problem(3000, 400, 12, 31);
  TrainConfig config;
  config.optimizer.auto_step = true;
  config.policy = Policy::kSerial;
  config.epochs = 2;
  const auto a = detail::calibrate_step(config, problem.train);
  const auto b = detail::calibrate_step(config, problem.train);
  CHECK(a.chosen == b.chosen);
  CHECK(a.losses == b.losses);
  // 1,000 examples in each sample, all of them when fewer than 2,000, however large the data
  // (a factorisation's sample grows with its data: the last test) ...
  CHECK(a.sample_rows == 1000);
  CHECK(a.held_out_rows == 1000);
  CHECK(
      detail::calibrate_step(config, test::sparse_problem(1500, 400, 12, 31).train).held_out_rows ==
      750);
  CHECK(
      detail::calibrate_step(config, test::sparse_problem(24000, 400, 12, 31).train).sample_rows ==
      1000);
  const auto report = train(config, problem.train, &problem.test);
  REQUIRE(report.step_calibration);
  CHECK(report.step_calibration->chosen == a.chosen);
  CHECK(*report.config.optimizer.step == a.chosen);
  CHECK(report.train_seconds >= report.step_calibration->seconds);
  const std::string json = to_json(report);
  CHECK(json.find("\"step_calibration\"") != std::string::npos);
  CHECK(json.find("\"step_auto\": true") != std::string::npos);
  // The run is the run with that step given.
  auto given = config;
  given.optimizer.auto_step = false;
  given.optimizer.step = a.chosen;
  CHECK(train(given, problem.train, &problem.test).epochs.back().train.loss ==
        report.epochs.back().train.loss);
}

TEST_CASE("auto step on data where every step diverges is a divergence naming the steps") {
  // ||x||^2 = 1e6: even the smallest step, 1e-4, multiplies the error by about -99 per example.
  const auto data = identical_rows(8, 1000.0f, 0.0f, 1.0f);
  CHECK_THROWS_WITH_AS(train(least_squares(), data, nullptr),
                       doctest::Contains("--step auto: expected a step that trains, found that "
                                         "every step tried diverged on a sample of 4 examples "
                                         "(0.0001, 0.000316"),
                       DivergenceError);
}

TEST_CASE("a ladder whose steps all end alike is inconclusive: the model's default step") {
  // A factorisation starts from small factors: one pass over 10% of 13,500 ratings barely
  // moves any step's held-out loss away from the others.
  RatingsGeneratorConfig g;
  g.users = 300;
  g.items = 200;
  g.rank = 3;
  g.density = 0.25;
  g.noise = 0.3;
  g.seed = 4;
  g.test_fraction = 0.1;
  const auto problem = generate_ratings(g);
  TrainConfig config;
  config.model = FactorisationModel{3};
  config.policy = Policy::kSerial;
  config.optimizer.auto_step = true;
  const auto c = detail::calibrate_step(config, problem.train);
  CHECK(c.sample_rows == problem.train.size() / 10);  // a tenth of the ratings
  double lowest = c.losses[0];
  double highest = c.losses[0];
  for (const double loss : c.losses) {
    if (!std::isfinite(loss)) continue;
    lowest = std::min(lowest, loss);
    highest = std::max(highest, loss);
  }
  CHECK(highest - lowest <= detail::kInconclusiveSpread * lowest);
  CHECK(c.inconclusive);
  CHECK(c.chosen == 0.1);  // mf's default step with SGD
  // With data to judge on (FMNIST-like dense rows would do; here least squares) it is not.
  CHECK_FALSE(
      detail::calibrate_step(least_squares(), identical_rows(8, 3.0f, 1.0f, 2.0f)).inconclusive);
}

TEST_CASE("a ladder whose best does not beat the initial model is inconclusive") {
  // Least squares on x = 1 with targets +1 and -1, one example trained on and the other judged:
  // a pass at step s ends at w = s y (it starts at 0), and the held-out loss (w + y)^2 / 2 =
  // (1 + s)^2 / 2 is above the initial model's 1/2 for every step. The lowest would be the
  // step that moved least, the ladder's bottom, whatever the data's scale.
  Dataset data;
  const std::uint32_t index[] = {0};
  const float one[] = {1.0f};
  data.append(index, one, 1.0f);
  data.append(index, one, -1.0f);
  const auto c = detail::calibrate_step(least_squares(), data);
  CHECK(c.sample_rows == 1);
  CHECK(c.held_out_rows == 1);
  CHECK(c.start_loss == doctest::Approx(0.5));
  REQUIRE(c.losses.size() == c.steps.size());
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    CAPTURE(c.steps[i]);
    CHECK(c.losses[i] == doctest::Approx((1 + c.steps[i]) * (1 + c.steps[i]) / 2));
  }
  CHECK(c.inconclusive);
  CHECK(c.chosen == 0.5);  // the linear models' default step
  // With a held-out example that agrees (targets +1 and +1) the steps below 2 gain, and the
  // ladder decides.
  Dataset agreeing;
  agreeing.append(index, one, 1.0f);
  agreeing.append(index, one, 1.0f);
  const auto d = detail::calibrate_step(least_squares(), agreeing);
  CHECK_FALSE(d.inconclusive);
  CHECK(d.best == doctest::Approx(1.0));  // w = 1 fits the target exactly
}

TEST_CASE("the pick is the largest step within 5% of the lowest held-out loss") {
  // Least squares on x = 1: a pass over one example with target 1 from w = 0 ends at w = s, and
  // two held-out targets 1 + d and 1 - d give the loss ((1 - s)^2 + d^2) / 2. With d = 10 the
  // lowest is at s = 1 (50), and s = 3.16 (52.33, 4.7% above) is within the flat bottom.
  const std::vector<double> steps = detail::step_ladder();
  const auto held_out_loss = [](double s, double d) { return ((1 - s) * (1 - s) + d * d) / 2; };
  std::vector<double> losses;
  for (const double s : steps) losses.push_back(held_out_loss(s, 10));
  CHECK(detail::largest_near_lowest(steps, losses) == doctest::Approx(std::sqrt(10.0)));
  // With d = 1 the bottom is sharp: 3.16 is 4.7 times above the lowest, 0.316 47% above.
  losses.clear();
  for (const double s : steps) losses.push_back(held_out_loss(s, 1));
  CHECK(detail::largest_near_lowest(steps, losses) == doctest::Approx(1.0));
  // A diverged step (infinite loss) is never picked, nor one 5.1% above the lowest (4.9% is
  // within).
  CHECK(detail::largest_near_lowest({0.1, 1, 10}, {2.0, 2.0 * 1.049, inf()}) == 1.0);
  CHECK(detail::largest_near_lowest({0.1, 1, 10}, {2.0, 2.0 * 1.051, inf()}) == 0.1);
}

namespace {

// `data` with feature j renumbered to stride * j + offset, in a dimension `stride` times wider:
// the same rows, most of the dimension held by no row.
Dataset spread(const Dataset& data, std::uint32_t stride, std::uint32_t offset) {
  Dataset out = data;
  for (auto& index : out.indices) index = index * stride + offset;
  out.num_features = data.num_features * stride + offset;
  return out;
}

}  // namespace

TEST_CASE("compact_features renumbers both samples' features to their ranks, rows unchanged") {
  Dataset a, b;
  const std::uint32_t a0[] = {5, 900, 70000};
  const std::uint32_t a1[] = {900};
  const std::uint32_t b0[] = {3, 5, 123456};
  const float v3[] = {0.5f, -1.0f, 2.0f};
  a.append(a0, v3, 1.0f);
  a.append(a1, std::span<const float>(v3, 1), -1.0f);
  b.append(b0, v3, 1.0f);
  a.num_features = b.num_features = 200000;
  const Dataset a_before = a, b_before = b;
  detail::compact_features(a, b);
  // The union {3, 5, 900, 70000, 123456}, in order.
  CHECK(a.num_features == 5);
  CHECK(b.num_features == 5);
  CHECK(a.indices == std::vector<std::uint32_t>{1, 2, 3, 2});
  CHECK(b.indices == std::vector<std::uint32_t>{0, 1, 4});
  CHECK(a.values == a_before.values);
  CHECK(a.row_offsets == a_before.row_offsets);
  CHECK(a.labels == a_before.labels);
  CHECK(b.values == b_before.values);
  // A narrow dimension goes through a table instead of a sorted list: the same numbering.
  Dataset c, d;
  const std::uint32_t c0[] = {1, 4, 9};
  const std::uint32_t d0[] = {4, 7};
  c.append(c0, v3, 1.0f);
  d.append(d0, std::span<const float>(v3, 2), 1.0f);
  c.num_features = d.num_features = 10;
  detail::compact_features(c, d);
  CHECK(c.num_features == 4);
  CHECK(c.indices == std::vector<std::uint32_t>{0, 1, 3});
  CHECK(d.indices == std::vector<std::uint32_t>{1, 2});
}

TEST_CASE("the calibration on wide data is the calibration on the features the samples hold") {
  // The same rows in a dimension 1,000 times wider: every trial must end bit for bit where it
  // ends on the narrow data (the ladder's losses, the pick, the step chosen), for a linear
  // model and for softmax.
  for (const bool softmax : {false, true}) {
    CAPTURE(softmax);
    SparseGeneratorConfig generator;
    generator.rows = 3000;
    generator.features = 400;
    generator.nnz_per_row = 12;
    generator.classes = softmax ? 3 : 2;
    generator.seed = 31;
    const Dataset narrow = generate_sparse(generator).train;
    const Dataset wide = spread(narrow, 1000, 7);
    TrainConfig config;
    config.optimizer.auto_step = true;
    config.policy = Policy::kSerial;
    config.l2 = 1e-4;  // the linear kernel's L2 scales each feature by its count of rows
    if (softmax) config.model = SoftmaxModel{};
    const auto a = detail::calibrate_step(config, narrow);
    const auto b = detail::calibrate_step(config, wide);
    CHECK(a.losses == b.losses);
    CHECK(a.start_loss == b.start_loss);
    CHECK(a.chosen == b.chosen);
    CHECK_FALSE(a.inconclusive);
  }
}

TEST_CASE("replicas and their hot features leave the calibration as a serial run's") {
  // The trials are serial passes without replicas: a run with replicas of its hot features is
  // calibrated as the serial run is (not refused, and so not the inconclusive default step).
  const auto problem = test::sparse_problem(3000, 400, 12, 32);
  TrainConfig serial;
  serial.optimizer.auto_step = true;
  serial.policy = Policy::kSerial;
  TrainConfig hot = serial;
  hot.policy = Policy::kRacy;
  hot.threads = 2;
  hot.replicate = 64;
  hot.hot_features = 40;
  const auto reference = detail::calibrate_step(serial, problem.train);
  const auto calibrated = detail::calibrate_step(hot, problem.train);
  REQUIRE_FALSE(reference.inconclusive);
  CHECK_FALSE(calibrated.inconclusive);
  CHECK(calibrated.chosen == reference.chosen);
  CHECK(calibrated.losses == reference.losses);
}

TEST_CASE("trials run at once: one a worker, one a core, and a bound on their parameters") {
  using detail::trials_at_once;
  CHECK(trials_at_once(2, 16, 203'530, 11) == 2);                // the MLP with 2 workers
  CHECK(trials_at_once(16, 16, 203'530, 11) == 11);              // no more than the ladder
  CHECK(trials_at_once(16, 4, 7'850, 11) == 4);                  // no more than the cores
  CHECK(trials_at_once(16, 16, std::size_t{1} << 23, 11) == 4);  // 4 x 8M parameters at most
  CHECK(trials_at_once(16, 16, std::size_t{1} << 24, 11) == 2);
  CHECK(trials_at_once(16, 16, 20'000'000, 11) == 1);  // one at a time, as a serial run
  CHECK(trials_at_once(0, 0, 0, 11) == 1);
}

namespace {

// A calibration of `config` as a serial run gets it, against `threads` racy workers running
// its trials at once: every figure the same, bit for bit.
template <class Data>
void check_at_threads(TrainConfig config, const Data& data) {
  config.optimizer.auto_step = true;
  config.policy = Policy::kSerial;
  const StepCalibration serial = detail::calibrate_step(config, data);
  for (const int threads : {2, 3, 4}) {
    CAPTURE(threads);
    config.policy = Policy::kRacy;
    config.threads = threads;
    const StepCalibration at_once = detail::calibrate_step(config, data);
    CHECK(at_once.losses == serial.losses);
    CHECK(at_once.start_loss == serial.start_loss);
    CHECK(at_once.best == serial.best);
    CHECK(at_once.pick == serial.pick);
    CHECK(at_once.chosen == serial.chosen);
    CHECK(at_once.inconclusive == serial.inconclusive);
  }
}

}  // namespace

TEST_CASE("trials run at once end as they end one at a time, for every model") {
  TrainConfig config;
  SUBCASE("logistic, sparse") {
    check_at_threads(config, test::sparse_problem(3000, 400, 12, 31).train);
  }
  SUBCASE("softmax, sparse") {
    SparseGeneratorConfig generator;
    generator.rows = 3000;
    generator.features = 400;
    generator.nnz_per_row = 12;
    generator.classes = 3;
    config.model = SoftmaxModel{};
    check_at_threads(config, generate_sparse(generator).train);
  }
  SUBCASE("softmax and mlp, dense") {
    const DenseDataset blobs = test::blobs(3000, 5);
    config.model = SoftmaxModel{};
    check_at_threads(config, blobs);
    config.model = MlpModel{{8}};
    config.optimizer.kind = OptimizerKind::kAdam;
    check_at_threads(config, blobs);
  }
  SUBCASE("factorisation") {
    RatingsGeneratorConfig g;
    g.users = 300;
    g.items = 200;
    g.rank = 3;
    g.density = 0.25;
    g.seed = 9;
    config.model = FactorisationModel{3};
    check_at_threads(config, generate_ratings(g).train);
  }
  SUBCASE("every step diverging") {
    config = least_squares();
    config.threads = 3;
    CHECK_THROWS_WITH_AS(detail::calibrate_step(config, identical_rows(8, 1000.0f, 0.0f, 1.0f)),
                         doctest::Contains("every step tried diverged on a sample of 4 examples"),
                         DivergenceError);
  }
}

namespace {

// A run given the initial evaluations of a run of the same model at another step records them
// and trains as the run that makes them: every record the same, bit for bit; a doctored record
// is recorded as given (so the first check runs the path it means to).
template <class Data>
void check_initial_evaluation_reused(TrainConfig config, const Data& train, const Data& test) {
  config.policy = Policy::kSerial;
  config.epochs = 2;
  config.optimizer.step = 0.01;
  const Report first = hogwild::train(config, train, &test);
  config.optimizer.step = 0.1;
  const Report made = hogwild::train(config, train, &test);
  Callbacks given;
  given.initial_evaluation = &first.epochs.front();
  const Report reused = hogwild::train(config, train, &test, given);
  REQUIRE(reused.epochs.size() == made.epochs.size());
  for (std::size_t e = 0; e < made.epochs.size(); ++e) {
    CAPTURE(e);
    CHECK(reused.epochs[e].train.loss == made.epochs[e].train.loss);
    CHECK(reused.epochs[e].train.accuracy == made.epochs[e].train.accuracy);
    CHECK(reused.epochs[e].train.objective == made.epochs[e].train.objective);
    REQUIRE(reused.epochs[e].test);
    CHECK(reused.epochs[e].test->loss == made.epochs[e].test->loss);
    CHECK(reused.epochs[e].step == made.epochs[e].step);
  }
  EpochRecord doctored = first.epochs.front();
  doctored.train.loss = 123.0;
  given.initial_evaluation = &doctored;
  CHECK(hogwild::train(config, train, &test, given).epochs.front().train.loss == 123.0);
}

}  // namespace

TEST_CASE("a trial given another trial's initial evaluations ends as one that makes them") {
  TrainConfig config;
  SUBCASE("logistic, sparse") {
    const auto problem = test::sparse_problem(2000, 300, 12, 17, 500);
    check_initial_evaluation_reused(config, problem.train, problem.test);
  }
  SUBCASE("mlp, dense") {
    config.model = MlpModel{{8}};
    config.optimizer.kind = OptimizerKind::kAdam;
    check_initial_evaluation_reused(config, test::blobs(2000, 5), test::blobs(500, 6));
  }
}
