// --average epochs: the model is the mean of the epochs' last weights, epoch k weighted by k.
// Checked against the mean computed here from each epoch's last weights (which a checkpoint
// keeps beside the mean), at several thread counts; every evaluation is the mean's; a resumed
// run continues the mean bit for bit; the default is on for the squared loss only.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hogwild/error.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;

namespace {

TrainConfig squared(int epochs, Policy policy = Policy::kSerial, int threads = 1) {
  TrainConfig config;
  config.model = LinearModel{LossKind::kSquared};
  config.policy = policy;
  config.threads = threads;
  config.epochs = epochs;
  config.optimizer.step = 0.2;
  config.staleness_sample = 0;
  config.coherence_sample = 0;
  return config;
}

// Each epoch's state as the run hands it to a checkpoint: the mean and the last weights.
struct EpochStates {
  std::vector<std::vector<float>> means;
  std::vector<std::vector<float>> last;
};

Callbacks recording(EpochStates& states) {
  Callbacks callbacks;
  callbacks.on_epoch_state = [&states](const TrainState& state) {
    states.means.emplace_back(state.weights.begin(), state.weights.end());
    REQUIRE(state.optimizer_state.size() == 1);
    states.last.emplace_back(state.optimizer_state[0].begin(), state.optimizer_state[0].end());
  };
  return callbacks;
}

// sum_k k w_k / sum_k k over the epochs' last weights, in double.
std::vector<double> weighted_mean(const std::vector<std::vector<float>>& last) {
  std::vector<double> mean(last.front().size(), 0.0);
  double total = 0;
  for (std::size_t k = 0; k < last.size(); ++k) {
    const double weight = static_cast<double>(k + 1);
    total += weight;
    for (std::size_t j = 0; j < mean.size(); ++j) mean[j] += weight * last[k][j];
  }
  for (double& m : mean) m /= total;
  return mean;
}

double largest_gap(std::span<const float> a, const std::vector<double>& b) {
  double gap = 0;
  for (std::size_t j = 0; j < b.size(); ++j) gap = std::max(gap, std::abs(a[j] - b[j]));
  return gap;
}

}  // namespace

TEST_CASE("the squared loss averages by default; logistic and hinge do not") {
  CHECK(squared(1).resolved().average == true);
  TrainConfig logistic;
  CHECK(logistic.resolved().average == false);
  logistic.average = true;
  CHECK(logistic.resolved().average == true);
  TrainConfig softmax;
  softmax.model = SoftmaxModel{};
  CHECK(softmax.resolved().average == false);
  softmax.average = true;
  CHECK_THROWS_WITH_AS(softmax.validate(),
                       "--average: expected off for softmax, mlp and mf (it averages the linear "
                       "models), found epochs",
                       InputError);
}

TEST_CASE("the model is the epochs' weighted mean of the last weights, at every thread count") {
  const auto problem = test::sparse_problem(3000, 400, 12, 5, 500);
  for (const int threads : {1, 2, 4}) {
    INFO(threads << " threads");
    const Policy policy = threads == 1 ? Policy::kSerial : Policy::kRacy;
    EpochStates states;
    const auto report =
        train(squared(6, policy, threads), problem.train, &problem.test, recording(states));
    REQUIRE(states.last.size() == 6);
    // After each epoch the mean is the weighted mean of the last weights so far.
    for (std::size_t k = 1; k <= states.last.size(); ++k) {
      const std::vector<std::vector<float>> so_far(states.last.begin(),
                                                   states.last.begin() + static_cast<long>(k));
      CHECK(largest_gap(states.means[k - 1], weighted_mean(so_far)) < 1e-5);
    }
    // The report's weights and its evaluations are the mean's.
    REQUIRE(report.weights == states.means.back());
    const auto test_loss = evaluate(LossKind::kSquared, report.weights, 0.0, problem.test, {}, 1);
    CHECK(report.epochs.back().test->loss == doctest::Approx(test_loss.loss).epsilon(1e-9));
    // The mean is not the last weights: the average does something.
    CHECK(report.weights != states.last.back());
  }
}

TEST_CASE(
    "averaging changes the model, not the training: the last weights equal an unaveraged run's") {
  const auto problem = test::sparse_problem(2000, 300, 10, 8);
  EpochStates states;
  train(squared(4), problem.train, nullptr, recording(states));
  auto off = squared(4);
  off.average = false;
  const auto last = train(off, problem.train, nullptr);
  CHECK(last.weights == states.last.back());
}

TEST_CASE("a run resumed from an epoch's state continues the mean bit for bit") {
  const auto problem = test::sparse_problem(2000, 300, 10, 9, 300);
  EpochStates states;
  const auto whole = train(squared(5), problem.train, &problem.test, recording(states));
  TrainState at_two;
  at_two.epoch = 2;
  at_two.initial_loss = whole.epochs.front().train.loss;
  at_two.weights = states.means[1];
  at_two.optimizer_state.emplace_back(states.last[1]);
  const auto resumed = train(squared(5), problem.train, &problem.test, {}, &at_two);
  CHECK(resumed.weights == whole.weights);
  CHECK(resumed.epochs.back().test->loss == whole.epochs.back().test->loss);

  // Without the last weights, or with them when not averaging: refused, naming the data.
  TrainState bare = at_two;
  bare.optimizer_state.clear();
  CHECK_THROWS_AS(train(squared(5), problem.train, nullptr, {}, &bare), InputError);
  auto off = squared(5);
  off.average = false;
  CHECK_THROWS_AS(train(off, problem.train, nullptr, {}, &at_two), InputError);
}

TEST_CASE("on noisy least squares the mean generalises better than the last weights") {
  // Labels with noise of deviation 0.5 (a statistical bound with a fixed seed): the last
  // weights of a large constant step carry the step's noise; their mean does not.
  SparseGeneratorConfig c;
  c.rows = 5000;
  c.test_rows = 2000;
  c.features = 2000;
  c.nnz_per_row = 20;
  c.regression = true;
  c.label_noise = 0.5;
  c.seed = 3;
  const auto problem = generate_sparse(c);
  auto config = squared(8);
  config.optimizer.step = 0.5;
  config.optimizer.schedule = Schedule::kConstant;
  const auto averaged = train(config, problem.train, &problem.test);
  config.average = false;
  const auto last = train(config, problem.train, &problem.test);
  CHECK(averaged.epochs.back().test->loss < 0.95 * last.epochs.back().test->loss);
}
