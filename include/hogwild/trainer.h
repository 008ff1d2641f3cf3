#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hogwild/clock.h"
#include "hogwild/dataset.h"
#include "hogwild/delay.h"
#include "hogwild/loss.h"
#include "hogwild/policy.h"
#include "hogwild/schedule.h"
#include "hogwild/staleness.h"

namespace hogwild {

/// Everything that defines a training run; the report repeats it. Defaults are the CLI's.
struct TrainConfig {
  LossKind loss = LossKind::kLogistic;  ///< --model
  Policy policy = Policy::kRacy;        ///< --policy
  int threads = 0;                      ///< --threads; 0 uses every core
  int epochs = 10;                      ///< --epochs, >= 1
  double step = 0.5;                    ///< --step: initial step size, > 0
  double decay = 0.9;                   ///< --decay: step *= decay after each epoch, (0, 1]
  double l2 = 0.0;                      ///< --l2: L2 regularisation strength, >= 0
  std::uint64_t seed = 1;               ///< --seed: shuffles
  /// Divergence bound: stop when the training loss exceeds this multiple of the loss at
  /// the initial (zero) parameters. NaN/Inf always stops.
  double divergence_factor = 1e3;
  DelaySpec delay;                 ///< --delay: injected delay distribution (none by default)
  double staleness_sample = 0.01;  ///< --staleness-sample: fraction of updates measured, 0 = off
  double coherence_sample = 0.01;  ///< --coherence-sample: fraction of steps measured, 0 = off
  int coherence_lag = 1;           ///< --coherence-lag: compare with the gradient s steps back
  int simulate = 0;                ///< --simulate K: K virtual workers round-robin, one thread
  ScheduleSpec schedule;           ///< --schedule fixed:B | time:DURATION (--batch B)
  SpeedModel speed;                ///< --worker-speed, --straggler, --pause
  int evals_per_epoch = 1;         ///< --evals-per-epoch: loss-curve points per epoch
  /// --sharding: `static` gives each worker an equal slice of every epoch's shuffle;
  /// `dynamic` lets workers claim chunks of it as they go, so faster workers take more.
  bool dynamic_sharding = false;
  /// --order: 0 = every epoch visits the rows in a fresh random permutation; B > 0 = every
  /// epoch visits runs of B consecutive stored rows, the runs in a fresh random order, so rows
  /// stream through memory instead of each costing cache misses (1.5x the one-thread rate on
  /// 60 MB of rows, docs/benchmarks.md). Runs of stored rows are random samples only when the
  /// storage is in random order: shuffle it once first (shuffle_rows), as the CLI does.
  std::size_t block_rows = 0;
  /// The CLI's default run length for --order blocks (about 80 KB of rows at 75 nonzeros).
  static constexpr std::size_t kDefaultBlockRows = 128;
  /// --replicate: each worker trains a private replica of the model and adds its changes to
  /// the shared parameters every this many samples (then re-reads them); 0 = off (every
  /// write goes to the shared parameters), kReplicateAuto = on where it pays (see
  /// resolved_replicate).
  int replicate = kReplicateAuto;
  /// The --replicate value that means "decide from the run" (the default).
  static constexpr int kReplicateAuto = -1;
  /// `auto` keeps the delay replicas add, merge interval x (workers - 1) updates of the others,
  /// within this many updates (chosen by measurement, docs/benchmarks.md) ...
  static constexpr int kAutoStalenessBudget = 2048;
  /// ... and does not merge more often than this many samples (merges scan the model). On a
  /// 16-core Xeon, 16 workers merging every 128 samples ran 3.2x as fast as sharing at the
  /// same test accuracy (docs/benchmarks.md, table f).
  static constexpr int kAutoMinMergeEvery = 128;
  /// Largest model (floats) that `auto` replicates: a merge scans the whole replica.
  static constexpr std::size_t kAutoReplicateMaxFloats = std::size_t{1} << 20;

  /// Checks ranges; throws InputError("--option: expected ..., found ...").
  void validate() const;
  /// Number of worker threads this config runs (resolves 0, the serial policy, simulation).
  int resolved_threads() const;
  /// Number of workers, real or virtual (simulate > 0 gives K virtual workers).
  int workers() const { return simulate > 0 ? simulate : resolved_threads(); }
  /// Samples between replica merges for a model of `dim` weights, 0 when the run does not
  /// replicate. `auto` replicates with 2 or more real workers, no delay, single-sample
  /// updates, no speed model, and a model of at most kAutoReplicateMaxFloats weights, merging
  /// every kAutoStalenessBudget / (workers - 1) samples when that is at least
  /// kAutoMinMergeEvery (2048 with 2 workers, 1024 with 3, 682 with 4, 136 with 16; off beyond
  /// 17).
  int resolved_replicate(std::size_t dim) const;
};

/// Evaluation of a model on one dataset.
struct Evaluation {
  double loss = 0;       ///< mean loss over the examples
  double objective = 0;  ///< loss + l2/2 ||w||^2
  double accuracy = 0;   ///< fraction classified correctly (classifiers), in [0, 1]
};

/// One epoch's results. Epoch 0 is the initial (zero) model.
struct EpochRecord {
  int epoch = 0;                    ///< 0 = before training
  double seconds = 0;               ///< training time of this epoch (no evaluation)
  double elapsed = 0;               ///< cumulative training time
  double step = 0;                  ///< step size used in this epoch
  std::optional<Evaluation> train;  ///< on the training data, if evaluated
  std::optional<Evaluation> test;   ///< on the test data, if given
};

/// One point of the loss curve against wall-clock training time.
struct CurvePoint {
  double seconds = 0;         ///< training time so far (evaluation excluded)
  std::uint64_t updates = 0;  ///< updates applied so far, all workers
  double train_loss = 0;      ///< training loss at that moment
};

/// What one worker did.
struct WorkerSummary {
  std::uint64_t updates = 0;  ///< updates it applied
  std::uint64_t samples = 0;  ///< samples it processed
  Histogram batch_sizes;      ///< samples per update
  Histogram windows_ns;       ///< time-window lengths (time schedule only)
};

/// A run between two epochs: enough to continue it exactly. Passed to
/// Callbacks::on_epoch_state as a view of the trainer's buffers (valid during the call), and
/// to train() / train_model() as the state to resume from (the caller owns the buffers).
struct TrainState {
  int epoch = 0;              ///< epochs completed
  double initial_loss = 0;    ///< training loss of the initial model (the divergence bound's base)
  double elapsed = 0;         ///< training seconds so far, evaluation excluded
  std::uint64_t samples = 0;  ///< samples processed so far
  std::span<const float> weights;  ///< the parameters
  /// The optimiser's per-coordinate buffers (model trainer; empty for SGD and linear models).
  std::vector<std::span<const float>> optimizer_state;
  /// Updates each worker has computed (model trainer: Adam's bias correction counts them).
  std::vector<std::uint64_t> worker_updates;
};

/// The outcome of a run.
struct Report {
  TrainConfig config;                        ///< the configuration, threads resolved
  DatasetStats dataset;                      ///< training data statistics
  std::optional<DatasetStats> test_dataset;  ///< test data statistics
  std::vector<EpochRecord> epochs;           ///< epoch 0 (initial) then one per epoch
  std::size_t samples = 0;                   ///< examples processed in training
  double train_seconds = 0;                  ///< total training time, evaluation excluded
  double samples_per_second = 0;             ///< samples / train_seconds
  std::vector<float> label_values;           ///< classifiers: {negative, positive} label values
  std::vector<float> weights;                ///< the trained parameters
  std::uint64_t updates_computed = 0;        ///< updates workers computed
  std::uint64_t updates_applied = 0;         ///< updates written (equal after the final flush)
  StalenessStats staleness;                  ///< measured staleness, all workers
  std::vector<StalenessStats> staleness_per_worker;  ///< the same per worker
  std::vector<std::uint64_t> injected_delays;        ///< count of each injected delay value
  std::vector<CoherencePoint> coherence;             ///< gradient coherence over training
  Histogram batch_sizes;                             ///< samples per update, all workers
  Histogram windows_ns;                              ///< time-window lengths, all workers
  std::vector<WorkerSummary> workers;                ///< per worker
  std::vector<CurvePoint> curve;                     ///< train loss against time and updates
  /// True when Callbacks::stop ended the run early: `epochs` holds the completed epochs and
  /// `weights` the parameters when the workers stopped (part way through an epoch).
  bool interrupted = false;
  int resumed_from = 0;  ///< the epoch the run continued from (0: a fresh start)
};

/// Hooks the trainer calls; all optional. Called on the caller's thread.
struct Callbacks {
  std::function<void(const EpochRecord&)> on_epoch;  ///< after each epoch's evaluation
  /// After each completed epoch (after on_epoch), with the state to continue from: the place
  /// to write a checkpoint. Workers are stopped while it runs.
  std::function<void(const TrainState&)> on_epoch_state;
  /// When set and it becomes true (from any thread, or a signal handler), workers stop within
  /// a few thousand samples, the unfinished epoch is dropped from the records, and the
  /// trainer returns the report with `interrupted` set. Polled once per chunk of samples.
  const std::atomic<bool>* stop = nullptr;
  /// Each worker's clock for time windows and the speed model; unset: the steady clock.
  ClockFactory clock;
};

/// Trains a sparse linear model with lock-free parallel SGD: one std::jthread per worker,
/// each epoch a seeded shuffle split across workers, the step decayed after each epoch.
/// Throws InputError for a bad config or labels the model cannot take, DivergenceError when
/// the loss becomes NaN/Inf or exceeds its bound, and rethrows a worker's exception.
/// With `resume`, training continues after `resume->epoch` from its weights, replaying the
/// seeded shuffles of the epochs already done, so a serial run without injected delay ends
/// bit for bit where an uninterrupted one does; its weights must have the training data's
/// dimension.
Report train(const TrainConfig& config, const Dataset& train_data, const Dataset* test_data,
             const Callbacks& callbacks = {}, const TrainState* resume = nullptr);

/// The label values a binary model maps to -1 and +1, {negative, positive}: the smaller of two
/// values is negative; one value alone is positive when > 0. Empty for the squared loss.
/// Throws InputError naming the example of a third label class.
std::vector<float> label_values(LossKind loss, const Dataset& data);

/// Evaluates linear weights on `data` (features beyond the weights are ignored).
/// `label_values` maps labels to -1/+1 for classifiers ({} for the squared loss).
Evaluation evaluate(LossKind loss, std::span<const float> weights, double l2, const Dataset& data,
                    std::span<const float> label_values, int threads = 0);

}  // namespace hogwild
