#include "engine/step_calibration.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <type_traits>

#include "engine/rng.h"
#include "engine/subsets.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/exchange.h"

namespace hogwild {

bool StepCalibration::beats_start() const {
  const double bar = start_loss - kInconclusiveSpread * std::abs(start_loss);
  return std::ranges::any_of(losses, [&](double loss) { return loss < bar; });
}

}  // namespace hogwild

namespace hogwild::detail {
namespace {

// One serial pass over `sample` from the initial model at `step`, and nothing measured.
TrainConfig trial_config(const TrainConfig& config, double step) {
  TrainConfig trial = config;
  trial.optimizer.auto_step = false;
  trial.optimizer.step = step;
  trial.policy = Policy::kSerial;
  trial.threads = 1;
  trial.epochs = 1;
  trial.simulate = 0;
  trial.delay = {};
  trial.speed = {};
  trial.staleness_sample = 0;
  trial.coherence_sample = 0;
  trial.evals_per_epoch = 1;
  trial.dynamic_sharding = false;
  trial.block_rows = 0;
  trial.replicate = 0;
  trial.hot_features = 0;  // chooses what replicas hold: none here
  trial.patience = 0;
  trial.validation_fraction = 0;
  trial.keep_weights = false;
  trial.average = false;  // one epoch: the mean is the parameters
  if (trial.schedule && trial.schedule->kind == ScheduleSpec::Kind::kTime) trial.schedule.reset();
  return trial;
}

// A record's loss: on the held-out sample, or the training objective (the loss where the model
// has none) when there is none.
double loss_of(const EpochRecord& record) {
  if (record.test) return record.test->loss;
  return record.train.objective.value_or(record.train.loss);
}

// An inconclusive calibration: the model's default step.
StepCalibration fallback(const TrainConfig& config, StepCalibration c) {
  TrainConfig fixed = config;
  fixed.optimizer.auto_step = false;
  fixed.optimizer.step.reset();
  c.chosen = *fixed.resolved().optimizer.step;
  c.best = c.chosen;
  c.pick = c.chosen;
  c.inconclusive = true;
  c.losses.resize(c.steps.size(), std::numeric_limits<double>::quiet_NaN());
  return c;
}

// The held-out rows a trial is judged on: for a multiclass model, those of the classes the rows
// it trains on hold, the only classes its model has (200 classes in 1,000 rows: one or two
// missing on either side, and nothing could be judged).
template <class Data>
std::vector<std::size_t> judged_rows(const TrainConfig& config, const Data& train,
                                     std::span<const std::size_t> fit,
                                     std::span<const std::size_t> held) {
  std::vector<std::size_t> judged(held.begin(), held.end());
  if constexpr (!std::is_same_v<Data, Ratings>) {
    if (std::holds_alternative<SoftmaxModel>(config.model) ||
        std::holds_alternative<MlpModel>(config.model)) {
      std::set<double> classes;
      for (const auto r : fit) classes.insert(static_cast<double>(train.labels[r]));
      std::erase_if(judged, [&](std::size_t r) {
        return !classes.contains(static_cast<double>(train.labels[r]));
      });
    }
  }
  return judged;
}

// What one step's trial ended with: its held-out loss (infinite where it diverged), or why it
// judged nothing.
struct TrialOutcome {
  double loss = std::numeric_limits<double>::infinity();
  std::optional<EpochRecord> start;  // the initial model's evaluations, where the trial trained
  bool single_class = false;         // the sample holds a single class
  std::exception_ptr failure;        // anything else, rethrown in the ladder's order
};

// One step's trial; `start`, where given, is the initial model's evaluations from another
// trial (the same model, sample and held-out rows: only the step differs).
template <class Data>
TrialOutcome run_trial(const TrainConfig& config, const Data& sample, const Data& held_out,
                       double step, const EpochRecord* start = nullptr) {
  TrialOutcome outcome;
  try {
    Callbacks callbacks;
    callbacks.initial_evaluation = start;
    const Report trial = hogwild::train(trial_config(config, step), sample,
                                        examples_in(held_out) > 0 ? &held_out : nullptr, callbacks);
    const double loss = loss_of(trial.epochs.back());
    if (std::isfinite(loss)) outcome.loss = loss;
    outcome.start = trial.epochs.front();
  } catch (const DivergenceError&) {
  } catch (const InputError&) {
    outcome.single_class = true;
  } catch (...) {
    outcome.failure = std::current_exception();
  }
  return outcome;
}

// The parameters of one trial's model (a sparse model's over its samples' compacted features).
template <class Data>
std::size_t trial_parameters(const TrainConfig& config, const Data& sample, const Data& held_out) {
  try {
    const std::size_t parameters = checkpoint_parameters(checkpoint_for(config, sample, &held_out));
    return parameters > 0 ? parameters : std::numeric_limits<std::size_t>::max();
  } catch (const InputError&) {
    return std::numeric_limits<std::size_t>::max();  // the trials find why, one at a time
  }
}

// Every step's trial, each a serial run of its own (so the outcomes do not depend on how many
// run at once), several at once on the run's workers. Every trial starts from the same model,
// and its evaluations on the sample and the held-out rows took a fifth of a serial search's
// time on the MLP: where the trials take more than one round, the first runs alone and the
// others record its initial evaluations instead of making them again. Where they all run at
// once, that would only lengthen the round.
template <class Data>
std::vector<TrialOutcome> run_trials(const TrainConfig& config, const Data& sample,
                                     const Data& held_out, const std::vector<double>& steps) {
  std::vector<TrialOutcome> outcomes(steps.size());
  const bool one_core = config.simulate > 0 || config.workers() < 2;
  const std::size_t at_once =
      one_core ? 1
               : trials_at_once(config.workers(), tbb::info::default_concurrency(),
                                trial_parameters(config, sample, held_out), steps.size());
  std::size_t first = 0;
  if (at_once < steps.size()) {
    outcomes[0] = run_trial(config, sample, held_out, steps[0]);
    first = 1;
  }
  const EpochRecord* start = first == 1 && outcomes[0].start ? &*outcomes[0].start : nullptr;
  const auto run = [&](std::size_t i) {
    outcomes[i] = run_trial(config, sample, held_out, steps[i], start);
  };
  if (at_once == 1) {
    for (std::size_t i = first; i < steps.size(); ++i) run(i);
    return outcomes;
  }
  tbb::task_arena arena(static_cast<int>(at_once));
  arena.execute([&] { tbb::parallel_for(first, steps.size(), run, tbb::simple_partitioner{}); });
  return outcomes;
}

}  // namespace

std::size_t trials_at_once(int workers, int cores, std::size_t parameters, std::size_t trials) {
  const std::size_t fit =
      std::max<std::size_t>(1, kTrialParametersAtOnce / std::max<std::size_t>(1, parameters));
  return std::max<std::size_t>(
      1, std::min({static_cast<std::size_t>(std::max(1, workers)),
                   static_cast<std::size_t>(std::max(1, cores)), trials, fit}));
}

std::vector<double> step_ladder() {
  std::vector<double> steps;
  for (int k = -8; k <= 2; ++k) steps.push_back(std::pow(10.0, k / 2.0));
  return steps;
}

double largest_near_lowest(const std::vector<double>& steps, const std::vector<double>& losses) {
  const double lowest = *std::ranges::min_element(losses);
  const double bar = lowest + StepCalibration::kFlatBottom * std::abs(lowest);
  double pick = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (losses[i] <= bar) pick = std::max(pick, steps[i]);
  }
  return pick;
}

template <class Data>
StepCalibration calibrate_step(const TrainConfig& config, const Data& train) {
  // Two disjoint seeded samples: each step trains on the first and is judged on the second, so
  // that a step which only memorises the first (a large one, on wide sparse data) does not win.
  const std::size_t n = examples_in(train);
  const std::vector<std::size_t> order = seeded_permutation(n, config.seed, 0xca11b7u);
  const bool factorisation = std::holds_alternative<FactorisationModel>(config.model);
  const auto wanted = std::max(
      kCalibrationRows,
      factorisation ? static_cast<std::size_t>(kCalibrationFraction * static_cast<double>(n)) : 0);
  const std::size_t fit_rows = std::min(wanted, (n + 1) / 2);
  const std::span<const std::size_t> rows(order);
  const std::vector<std::size_t> judged = judged_rows(
      config, train, rows.first(fit_rows), rows.subspan(fit_rows, std::min(wanted, n - fit_rows)));
  const std::size_t held_rows = judged.size();
  Data sample = subset(train, rows.first(fit_rows));
  Data held_out = subset(train, judged);
  if constexpr (std::is_same_v<Data, Dataset>) {
    // The trials' models need only the features the two samples hold: on wide data (4M hashed
    // features, or 100k features of 200 classes) a trial over the whole dimension spent most of
    // its time zeroing and scanning weights no sampled row touches. Exact for the models
    // sparse rows train (linear and softmax, both from zero weights).
    compact_features(sample, held_out);
  }

  StepCalibration c;
  c.sample_rows = fit_rows;
  c.held_out_rows = held_rows;
  c.steps = step_ladder();
  const std::vector<TrialOutcome> outcomes = run_trials(config, sample, held_out, c.steps);
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < c.steps.size(); ++i) {
    const TrialOutcome& trial = outcomes[i];
    if (trial.failure) std::rethrow_exception(trial.failure);
    // A sample of a few examples may hold a single class: nothing to judge.
    if (trial.single_class) return fallback(config, std::move(c));
    if (trial.start) c.start_loss = loss_of(*trial.start);  // the same initial model in each
    c.losses.push_back(trial.loss);
    if (trial.loss < best) {
      best = trial.loss;
      c.best = c.steps[i];
    }
  }
  if (!std::isfinite(best)) {
    throw DivergenceError(fmt::format(
        "--step auto: expected a step that trains, found that every step tried diverged on a "
        "sample of {} examples ({}); scale the features down, or give --step",
        c.sample_rows, fmt::join(c.steps, ", ")));
  }
  // Measured (docs/defaults.md): where the held-out losses have a flat bottom (20-class sparse
  // text: 0.0316 to 1 within 5%), the largest step of it gains 8 points over ten epochs on the
  // lowest's; on sparse binary, least-squares and MLP runs the sample's pick overfits or
  // overshoots over ten epochs, the half-decade below does not; softmax on sparse text needs
  // the step itself.
  c.pick = largest_near_lowest(c.steps, c.losses);
  const bool softmax = std::holds_alternative<SoftmaxModel>(config.model);
  c.chosen = softmax ? c.pick : c.pick / std::sqrt(10.0);
  // One pass that moves no step's held-out loss apart tells nothing (a factorisation from small
  // factors hardly leaves its start in one pass over few ratings): the model's default step.
  double worst = best;
  for (const double loss : c.losses) {
    if (std::isfinite(loss)) worst = std::max(worst, loss);
  }
  if (worst - best <= kInconclusiveSpread * std::abs(best)) return fallback(config, std::move(c));
  // Nor does a ladder whose best does not beat the initial model: then the lowest loss is the
  // step that moved least, whatever the right step. (Sparse data with a constant feature: that
  // weight moves with every example, its random walk outweighs what one pass over 1,000 rows
  // learns of 47k sparse features, and the least-moving step, 1e-4, won on some seeds.)
  if (!c.beats_start()) return fallback(config, std::move(c));
  return c;
}

namespace {

// Across processes rank 0 calibrates on its data and every process takes its choice (parts of
// the data differ, and no process may train with a step of its own); a calibration that
// diverged on rank 0 stops every process.
template <class Data>
StepCalibration agreed_calibration(const TrainConfig& config, const Data& train,
                                   Exchange& exchange) {
  const std::size_t ladder = step_ladder().size();
  std::vector<double> packed(8 + 2 * ladder, 0.0);
  StepCalibration c;
  std::string diverged;
  if (exchange.rank() == 0) {
    try {
      c = calibrate_step(config, train);
      packed = {0.0,
                c.chosen,
                c.best,
                c.inconclusive ? 1.0 : 0.0,
                static_cast<double>(c.sample_rows),
                static_cast<double>(c.held_out_rows),
                c.start_loss,
                c.pick};
      packed.insert(packed.end(), c.steps.begin(), c.steps.end());
      packed.insert(packed.end(), c.losses.begin(), c.losses.end());
    } catch (const DivergenceError& e) {
      diverged = e.what();
      packed[0] = 1.0;
    }
  }
  exchange.broadcast(packed);
  if (packed[0] != 0.0) {
    throw DivergenceError(diverged.empty() ? "--step auto: every step tried diverged on rank 0"
                                           : diverged);
  }
  c.chosen = packed[1];
  c.best = packed[2];
  c.inconclusive = packed[3] != 0.0;
  c.sample_rows = static_cast<std::size_t>(packed[4]);
  c.held_out_rows = static_cast<std::size_t>(packed[5]);
  c.start_loss = packed[6];
  c.pick = packed[7];
  const auto steps = packed.begin() + 8;
  c.steps.assign(steps, steps + static_cast<long>(ladder));
  c.losses.assign(steps + static_cast<long>(ladder), packed.end());
  return c;
}

}  // namespace

template <class Data>
Report train_with_step_calibration(const TrainConfig& config, const Data& train, const Data* test,
                                   const Callbacks& callbacks, const TrainState* resume) {
  config.validate();
  const auto start = std::chrono::steady_clock::now();
  StepCalibration calibration = callbacks.exchange != nullptr
                                    ? agreed_calibration(config, train, *callbacks.exchange)
                                    : calibrate_step(config, train);
  calibration.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  TrainConfig chosen = config;
  chosen.optimizer.auto_step = false;
  chosen.optimizer.step = calibration.chosen;
  Report report = hogwild::train(chosen, train, test, callbacks, resume);
  report.config.optimizer.auto_step = true;
  report.train_seconds += calibration.seconds;
  report.samples_per_second =
      report.train_seconds > 0 ? static_cast<double>(report.samples) / report.train_seconds : 0.0;
  report.step_calibration = std::move(calibration);
  return report;
}

template StepCalibration calibrate_step(const TrainConfig&, const Dataset&);
template StepCalibration calibrate_step(const TrainConfig&, const DenseDataset&);
template StepCalibration calibrate_step(const TrainConfig&, const Ratings&);
template Report train_with_step_calibration(const TrainConfig&, const Dataset&, const Dataset*,
                                            const Callbacks&, const TrainState*);
template Report train_with_step_calibration(const TrainConfig&, const DenseDataset&,
                                            const DenseDataset*, const Callbacks&,
                                            const TrainState*);
template Report train_with_step_calibration(const TrainConfig&, const Ratings&, const Ratings*,
                                            const Callbacks&, const TrainState*);

}  // namespace hogwild::detail
