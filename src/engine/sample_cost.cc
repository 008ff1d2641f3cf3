#include "engine/sample_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/rng.h"
#include "engine/subsets.h"

namespace hogwild::detail {
namespace {

// Examples the measurement trains on: enough for epochs of milliseconds, where thread start-up
// and the epoch's set-up are small against the samples.
constexpr std::size_t kMeasuredExamples = 20000;

template <class Data>
TrainConfig measured(const TrainConfig& config, const Data& train_data) {
  if (!config.measure_sample_cost) return config;
  const std::size_t n = examples_in(train_data);
  std::vector<std::size_t> rows = seeded_permutation(n, config.seed, 0xc057u);
  rows.resize(std::min(n, kMeasuredExamples));
  std::sort(rows.begin(), rows.end());
  const Data sample = subset(train_data, rows);
  // The model and its minibatches as configured, trained alone: no simulation, no measurement,
  // no injected costs or delays.
  TrainConfig trial;
  trial.model = config.model;
  trial.optimizer = config.optimizer;
  trial.optimizer.auto_step = false;
  trial.l2 = config.l2;
  trial.schedule = config.schedule;
  if (trial.schedule && trial.schedule->kind == ScheduleSpec::Kind::kTime) trial.schedule.reset();
  trial.policy = Policy::kSerial;
  trial.epochs = 3;
  trial.seed = config.seed;
  trial.staleness_sample = 0;
  trial.coherence_sample = 0;
  trial.divergence_factor = std::numeric_limits<double>::infinity();
  const Report report = hogwild::train(trial, sample, nullptr);
  double fastest = std::numeric_limits<double>::infinity();
  for (const auto& epoch : report.epochs) {
    if (epoch.epoch > 0) fastest = std::min(fastest, epoch.seconds);
  }
  TrainConfig result = config;
  result.measure_sample_cost = false;  // measured: train() records that it was
  result.sample_cost_ns =
      std::max<std::int64_t>(1, std::llround(fastest * 1e9 / static_cast<double>(rows.size())));
  return result;
}

}  // namespace

TrainConfig with_measured_sample_cost(const TrainConfig& config, const Dataset& train) {
  return measured(config, train);
}
TrainConfig with_measured_sample_cost(const TrainConfig& config, const DenseDataset& train) {
  return measured(config, train);
}
TrainConfig with_measured_sample_cost(const TrainConfig& config, const Ratings& train) {
  return measured(config, train);
}

}  // namespace hogwild::detail
