#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "hogwild/clock.h"
#include "hogwild/dataset.h"
#include "hogwild/delay.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/exchange.h"
#include "hogwild/loss.h"
#include "hogwild/optimizer.h"
#include "hogwild/policy.h"
#include "hogwild/ratings.h"
#include "hogwild/schedule.h"
#include "hogwild/staleness.h"

namespace hogwild {

/// A sparse linear model, one weight per feature, with a binary or squared loss.
struct LinearModel {
  LossKind loss = LossKind::kLogistic;  ///< --model logistic | hinge | squared
};
/// How a linear model's training rows store their values (--data-precision): as read (f32), as
/// half floats (f16), or as bytes times a scale per row (u8, for values >= 0). Binary data
/// stores no values at any precision, and indices take 16 bits wherever the dimension allows.
enum class DataPrecision { kF32, kF16, kU8 };
/// How a linear model's shared weights are stored while training (--weights): floats (f32), or
/// bfloat16 (bf16: the upper half of a float's bits, each sum rounded stochastically), half the
/// bytes per weight for models that do not fit the caches. Evaluations, checkpoints and the
/// report read the weights widened to floats (exactly).
enum class WeightPrecision { kF32, kBf16 };

/// Multinomial logistic regression on sparse (LIBSVM) or dense (IDX) features.
struct SoftmaxModel {};
/// ReLU hidden layers and a softmax output on dense features.
struct MlpModel {
  std::vector<std::size_t> hidden{256};  ///< --hidden: hidden layer widths
};
/// Matrix factorisation of ratings: user and item factors of rank `rank`, plus the mean.
struct FactorisationModel {
  std::size_t rank = 10;    ///< --rank
  double init_scale = 0.1;  ///< --init-scale: standard deviation of the initial factors
};
/// The model a run trains: its parameter layout and its maths.
using ModelSpec = std::variant<LinearModel, SoftmaxModel, MlpModel, FactorisationModel>;

/// The model's command-line name: logistic, hinge, squared, softmax, mlp or mf.
std::string_view model_name(const ModelSpec& model);
/// Parses a model name (as model_name writes it); throws InputError otherwise.
ModelSpec parse_model(std::string_view name);
/// True for a linear model (logistic, hinge, squared).
inline bool is_linear(const ModelSpec& model) { return std::holds_alternative<LinearModel>(model); }

/// Everything that defines a training run, for every model; the report repeats it resolved.
/// Unset optional fields take the model's default (resolved() fills them in). Defaults are the
/// CLI's but for four the CLI decides from the data and the model (docs/defaults.md): it
/// calibrates the step (optimizer.auto_step) for every model but mf, trains softmax on LIBSVM
/// rows one example at a time, the MLP with Adam, and mf with the plateau schedule for up to
/// kFactorisationEpochs epochs.
struct TrainConfig {
  ModelSpec model;            ///< --model and its shape (--hidden, --rank, --init-scale)
  OptimizerConfig optimizer;  ///< --optimizer, --step, --decay and the rest; linear models: sgd
  /// --l2: L2 regularisation strength, >= 0; unset: 0, or 0.04 for factorisation.
  std::optional<double> l2;
  /// --average epochs (linear models): the model is the mean of the parameters at the end of
  /// each epoch, epoch k weighted by k (Polyak-Ruppert averaging at epoch granularity); training
  /// goes on from the last parameters. Every evaluation, the report's weights and a checkpoint's
  /// parameters are the mean. Unset: on for the squared loss, off otherwise.
  std::optional<bool> average;
  /// --data-precision (linear models): the training rows' values in fewer bytes; evaluations
  /// read the data as given.
  DataPrecision data_precision = DataPrecision::kF32;
  /// --feature-order (linear models): true renumbers the features by frequency for the training
  /// loops where the model is wider than 2^18 features and the rows' values are f32 (the hot
  /// weights on adjacent cache lines; the same results, bit for bit, at the cost of a copy of
  /// the indices); false keeps the given numbering.
  bool frequency_order = true;
  /// --weights (linear models): bf16 trains bfloat16 weights with stochastic rounding, with the
  /// racy or serial policy and single-sample updates, no replicas, delays or simulation, in one
  /// process.
  WeightPrecision weights = WeightPrecision::kF32;
  Policy policy = Policy::kRacy;  ///< --policy
  int threads = 0;                ///< --threads; 0 uses every core
  int epochs = 10;                ///< --epochs, >= 1
  std::uint64_t seed = 1;         ///< --seed: initialisation and shuffles
  /// --divergence-factor: stop when the training loss exceeds this multiple of the loss of the
  /// initial model. NaN/Inf always stops.
  double divergence_factor = 1e3;
  /// --patience N: stop before --epochs when N epochs in a row end with a training loss that is
  /// not at least `tol` below the best before them (scikit-learn's n_iter_no_change and tol);
  /// 0 = off, every epoch runs. A resumed run counts again from its first epoch.
  int patience = 0;
  double tol = 1e-4;  ///< --tol: the improvement --patience asks for, >= 0
  /// --validation-fraction: hold out this fraction of the training examples (a seeded random
  /// choice), train on the rest, evaluate the held-out part after every epoch and let
  /// --patience count its loss instead of the training loss; 0 = none, at most 0.5.
  double validation_fraction = 0;
  /// --train-loss-sample N: measure the training loss (and accuracy) on a seeded random sample
  /// of N training examples instead of all of them, so that the evaluation after each epoch
  /// costs less than the epoch on large data; --patience and the divergence check then watch
  /// the sample's loss. 0 = every example. With data parts across processes, N of each part.
  std::size_t train_loss_sample = 0;
  /// Copy the final weights into Report::weights; false for runs that need only the figures
  /// (the step calibration's trials: the copy of a 20M-weight model was half of each trial).
  bool keep_weights = true;
  DelaySpec delay;  ///< --delay: injected delay distribution (none by default)
  /// --delay-unit global: a delay counts the updates (steps) of all workers, as Dai et al.
  /// count it, instead of the worker's own; simulation only (one thread keeps the count).
  bool global_delay = false;
  double staleness_sample = 0.01;  ///< --staleness-sample: fraction of updates measured, 0 = off
  double coherence_sample = 0.01;  ///< --coherence-sample: fraction of steps measured, 0 = off
  int coherence_lag = 1;           ///< --coherence-lag: compare with the gradient s steps back
  int simulate = 0;                ///< --simulate K: K virtual workers in one thread
  /// --clock virtual: the simulated workers run in virtual time (a discrete-event simulation:
  /// the worker whose clock is earliest takes its next sample; ties go to the lower worker),
  /// each sample costing `sample_cost_ns` plus what the speed model adds; false (`rounds`):
  /// the workers take turns, one sample or minibatch each.
  bool virtual_time = false;
  std::int64_t sample_cost_ns = 1000;  ///< --sample-cost: a sample's virtual compute time
  /// --sample-cost measured: train() sets sample_cost_ns to the model's time per sample on this
  /// machine before training (a run is then reproducible on this machine only).
  bool measure_sample_cost = false;
  /// --read-latency (virtual time): after each update it sends, a worker waits this long for
  /// the parameters its next update reads; 0 = none.
  std::int64_t read_latency_ns = 0;
  /// --write-latency (virtual time): an update lands on the parameters this long after its
  /// worker sends it, while every worker goes on; 0 = at once.
  std::int64_t write_latency_ns = 0;
  /// --bounded-staleness S (stale synchronous parallel, Ho et al. 2013): a worker does not
  /// start its update c + S + 1 before every worker has applied its update c; -1 = off,
  /// 0 = bulk-synchronous. Threads wait on a per-worker count; simulation exactly.
  int bounded_staleness = -1;
  /// --schedule fixed:B | time:DURATION (--batch B), --batch-reduce, --max-batch; unset: fixed
  /// minibatches of the model's default size (linear and mf 1, softmax 16, mlp 32).
  std::optional<ScheduleSpec> schedule;
  SpeedModel speed;         ///< --worker-speed, --straggler, --pause
  int evals_per_epoch = 1;  ///< --evals-per-epoch: loss-curve points per epoch
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
  /// --replicate (linear models): each worker trains a private replica of the model and adds
  /// its changes to the shared parameters every this many samples (then re-reads them); 0 =
  /// off (every write goes to the shared parameters), kReplicateAuto = on where it pays (see
  /// resolved_replicate).
  int replicate = kReplicateAuto;
  /// The --replicate value that means "decide from the run" (the default).
  static constexpr int kReplicateAuto = -1;
  /// --hot-features (linear models, with replicas): replicate only this many features, those
  /// the most training rows hold, and write every other feature straight to the shared
  /// parameters; a merge then costs this many weights, not the whole model. 0 = replicate
  /// every feature.
  std::size_t hot_features = 0;
  /// Largest --hot-features (a feature index is 32 bits).
  static constexpr std::size_t kMaxHotFeatures = std::size_t{1} << 31;
  /// `auto` keeps the delay replicas add, merge interval x (workers - 1) updates of the others,
  /// within this many updates (chosen by measurement, docs/benchmarks.md) ...
  static constexpr int kAutoStalenessBudget = 2048;
  /// ... and does not merge more often than this many samples (merges scan the model). On a
  /// 16-core Xeon, 16 workers merging every 128 samples ran 3.2x as fast as sharing at the
  /// same test accuracy (docs/benchmarks.md, table f).
  static constexpr int kAutoMinMergeEvery = 128;
  /// Largest model (floats) that `auto` replicates whole: a merge scans the whole replica.
  static constexpr std::size_t kAutoReplicateMaxFloats = std::size_t{1} << 20;
  /// A wider model's replicas under `auto` hold its this many hottest features (as
  /// --hot-features) ... On 1M CTR-like rows (4M hashed features) 1,024 to 4,096 hot features
  /// merged every 512-2,048 samples ran 1.7-2x as fast as sharing every weight, 256 left the
  /// contention and 65,536 spent the time merging (docs/benchmarks.md).
  static constexpr std::size_t kAutoHotFeatures = 4096;
  /// ... when they hold at least this share of the training nonzeros, where workers collide:
  /// 2 threads on 4M features ran 3.8x as fast as sharing on CTR-like rows (share 0.77) and
  /// 2.1x on Zipf(1) features (0.50), but 0.99x at 0.12, 0.96x at 0.03 and 0.89x on uniform
  /// features (0.003), which pay for the hot layout's copy of the rows and gain nothing.
  static constexpr double kAutoHotMinShare = 0.25;
  /// A feature carrying more than this share of the data's squared mass (heavy_features) is
  /// merged as the workers' mean change of its weight, not their sum. Each worker moves such a
  /// feature (in almost every row, with much of each row's norm: a constant feature for an
  /// intercept) from the same stale read as far as its own samples ask, so the sum overshoots
  /// and the weight swings: RCV1-like data with a constant feature of 1 (share 0.5), 2
  /// threads merging every 2048 samples, 6 seeds: the lowest test accuracy of epochs 3-10 was
  /// 50.6-81.3% with the sum, 78.6-82.3% with the mean, 76.9-81.2% in serial runs
  /// (docs/benchmarks.md).
  static constexpr double kMeanMergeMinShare = 0.02;
  /// Samples between merges that `auto` gives the replicas of softmax and mlp trained with SGD,
  /// momentum or Adagrad: on Fashion-MNIST with 2 threads they kept the serial run's test
  /// accuracy at merges every 64 to 1024 samples, and 256 ran the MLP at 1.80x one serial
  /// thread against 1.68x at 64 (docs/benchmarks.md) ...
  static constexpr int kAutoModelMergeEvery = 256;
  /// ... and with Adam or RMSProp, whose steps do not shrink with the gradient, so a worker's
  /// steps from an old read add up further: the MLP with Adam kept the serial run's accuracy to
  /// 0.2-0.3 points at 32 and 64 samples, lost 0.6 at 128, 1.0 at 256 and 1.8 at 1024.
  static constexpr int kAutoAdaptiveMergeEvery = 64;
  /// Models at most this wide keep the given numbering under frequency_order: their f32
  /// weights fit in 1 MiB, a core's L2 on the machines measured, where renumbering gained 8%
  /// against a copy of the indices (docs/benchmarks.md).
  static constexpr std::size_t kFrequencyOrderMinFeatures = std::size_t{1} << 18;
  /// The CLI's --epochs for mf, a cap on its plateau schedule: on sparse ratings (5000 x 2000
  /// at density 0.01) the training loss still falls after 80 epochs, and the test RMSE with it.
  static constexpr int kFactorisationEpochs = 100;
  /// mf's --l2. With the plateau schedule, 0.02 left the sparse ratings above at a test RMSE
  /// of 0.67-1.05 by seed and run, 0.04 at 0.44-0.47; on denser ratings it costs 2-4% of the
  /// RMSE of 0.02 (docs/defaults.md).
  static constexpr double kFactorisationL2 = 0.04;

  /// Checks ranges; throws InputError("--option: expected ..., found ...").
  void validate() const;
  /// Throws InputError("--model: expected ..., found ...") unless the model trains on data of
  /// `format`: libsvm (linear models, softmax), idx (softmax, mlp) or ratings (mf).
  void check_format(std::string_view format) const;
  /// The config with every default filled in: step, l2, average, schedule, threads (1 for the
  /// serial policy and for simulation, which steps its workers in one thread).
  TrainConfig resolved() const;
  /// Number of workers, real or virtual: K with --simulate K, 1 for the serial policy, else
  /// --threads (0 = every core).
  int workers() const;
  /// The minibatch schedule, the model's default when unset.
  ScheduleSpec minibatches() const;
  /// The L2 strength, the model's default when unset.
  double l2_strength() const;
  /// Whether the model is the epochs' weighted mean (--average), the model's default when unset.
  bool averages_epochs() const;
  /// Samples between replica merges for a linear model of `dim` weights, 0 when the run does
  /// not replicate. `auto` replicates with 2 or more real workers, no delay, single-sample
  /// updates, no speed model, and a model (or --hot-features) of at most
  /// kAutoReplicateMaxFloats weights, merging every kAutoStalenessBudget / (workers - 1)
  /// samples when that is at least kAutoMinMergeEvery (2048 with 2 workers, 1024 with 3, 682
  /// with 4, 136 with 16; off beyond 17). Wider models: the data decide (resolved_replicas).
  int resolved_replicate(std::size_t dim) const;
  /// Samples between replica merges for softmax or mlp, 0 when the run does not replicate:
  /// only models whose every update writes all parameters (`dense_updates`: softmax on IDX
  /// data, mlp) replicate; `auto` does with 2 or more real workers, fixed minibatches and no
  /// delay, simulation, staleness bound, speed model or latency, every kAutoModelMergeEvery
  /// samples (kAutoAdaptiveMergeEvery with Adam or RMSProp).
  int resolved_model_replicate(bool dense_updates) const;
};

/// The replicas a linear model's run trains with.
struct ReplicaPlan {
  int merge_every = 0;           ///< samples between merges; 0 = no replicas
  std::size_t hot_features = 0;  ///< the features the replicas hold, the hottest; 0 = all
  /// Where `auto` weighed hot replicas: the share of the nonzeros that the kAutoHotFeatures
  /// hottest features hold.
  std::optional<double> hot_share;
};

/// The replicas of a linear model trained on `data`: TrainConfig::resolved_replicate for its
/// dimension and the given --hot-features, except that `auto` gives a model wider than
/// kAutoReplicateMaxFloats, with float data, replicas of its kAutoHotFeatures hottest features
/// when they hold at least kAutoHotMinShare of the nonzeros. `counts` are the data's
/// feature_counts when the caller has them (computed here when needed and not given).
ReplicaPlan resolved_replicas(const TrainConfig& config, const Dataset& data,
                              std::span<const std::uint32_t> counts = {});
/// Whether resolved_replicas(config, data) weighs hot replicas, and so counts the features when
/// not given their counts.
bool replicas_count_features(const TrainConfig& config, const Dataset& data);

/// Evaluation of a model on one dataset; absent values do not apply to the model.
struct Evaluation {
  double loss = 0;                  ///< mean loss over the examples (no regulariser)
  std::optional<double> objective;  ///< linear models: loss + l2/2 ||w||^2
  std::optional<double> accuracy;   ///< classifiers: fraction classified correctly, in [0, 1]
  std::optional<double> rmse;       ///< factorisation: root mean squared error
};

/// One epoch's results. Epoch 0 is the initial (zero) model.
struct EpochRecord {
  int epoch = 0;       ///< 0 = before training
  double seconds = 0;  ///< training time of this epoch (no evaluation)
  double elapsed = 0;  ///< cumulative training time
  double step = 0;     ///< step size at the start of the epoch
  /// --clock virtual: the virtual time at the epoch's end, in seconds since training began.
  std::optional<double> virtual_seconds;
  Evaluation train;                ///< on the training data
  std::optional<Evaluation> test;  ///< on the test data, if given
  /// On the examples held out by --validation-fraction (or Callbacks::held_out), if any.
  std::optional<Evaluation> validation;
};

/// One point of the loss curve against wall-clock training time.
struct CurvePoint {
  double seconds = 0;                     ///< training time so far (evaluation excluded)
  std::uint64_t updates = 0;              ///< updates applied so far, all workers
  double train_loss = 0;                  ///< training loss at that moment
  std::optional<double> virtual_seconds;  ///< --clock virtual: the virtual time then
};

/// What one worker did.
struct WorkerSummary {
  std::uint64_t updates = 0;  ///< updates it applied
  std::uint64_t samples = 0;  ///< samples it processed
  Histogram batch_sizes;      ///< samples per update
  Histogram windows_ns;       ///< time-window lengths (time schedule only)
  /// --bounded-staleness: times the worker waited for the slowest, and for how long (virtual
  /// seconds in simulation, seconds in threads).
  std::uint64_t bound_waits = 0;
  double bound_wait_seconds = 0;
};

/// Where --step-schedule plateau stands between epochs.
struct PlateauState {
  double scale = 1;  ///< the factor the plateaus so far left on the initial step
  double best = 0;   ///< the lowest loss it has seen, the initial model's included
  int wait = 0;      ///< epochs in a row, up to the last, that did not improve on `best`
  bool ended =
      false;  ///< the last plateau would have taken the step below its floor: the run ended
};

/// --patience between epochs: the lowest loss it watched and the epochs in a row, up to the
/// last, that did not end --tol below it.
struct PatienceState {
  double best = 0;  ///< the lowest loss watched, the initial model's included
  int wait = 0;     ///< epochs in a row, up to the last, that did not improve on `best` by --tol
};

/// A run between two epochs: enough to continue it exactly. Passed to
/// Callbacks::on_epoch_state as a view of the trainer's buffers (valid during the call), and
/// to train() as the state to resume from (the caller owns the buffers).
struct TrainState {
  int epoch = 0;              ///< epochs completed
  double initial_loss = 0;    ///< training loss of the initial model (the divergence bound's base)
  double elapsed = 0;         ///< training seconds so far, evaluation excluded
  std::uint64_t samples = 0;  ///< samples processed so far
  std::span<const float> weights;  ///< the parameters
  /// The optimiser's per-coordinate buffers (empty for SGD).
  std::vector<std::span<const float>> optimizer_state;
  /// Updates each worker has computed (Adam's bias correction counts them).
  std::vector<std::uint64_t> worker_updates;
  PlateauState plateau;  ///< --step-schedule plateau
  /// --patience: where its count stood; absent (a run without --patience, or a checkpoint
  /// written before it was kept), a resumed run counts from the epoch it resumes.
  std::optional<PatienceState> patience;
  /// Each worker's seeded draws (injected delays, the speed model, the time-window estimate)
  /// as opaque words, so that a resumed run draws what the uninterrupted run draws; empty
  /// words for a worker that draws nothing. Restored only on the same number of workers.
  std::vector<std::vector<std::uint64_t>> worker_draws;
  /// --clock virtual: the virtual time in nanoseconds at the epoch's end, where a resumed
  /// run's clocks start.
  std::int64_t virtual_ns = 0;
};

/// Shape of the data a model trained on.
struct DataShape {
  std::string format;          ///< libsvm, idx or ratings
  std::size_t rows = 0;        ///< training examples (ratings)
  std::size_t features = 0;    ///< input dimension (linear models and classifiers)
  std::size_t classes = 0;     ///< softmax, mlp
  std::size_t users = 0;       ///< factorisation
  std::size_t items = 0;       ///< factorisation
  std::size_t test_rows = 0;   ///< test examples, 0 without test data
  std::size_t parameters = 0;  ///< model parameters
  bool zero_based = false;     ///< LIBSVM: the files' indices were 0-based
};

/// How --step auto chose the initial step: for each step of a geometric ladder, one serial pass
/// from the initial model over a seeded sample of the training data, judged by the loss on a
/// second, disjoint sample (with a single example, the training loss); see `pick`.
struct StepCalibration {
  std::size_t sample_rows = 0;    ///< examples in the sample trained on
  std::size_t held_out_rows = 0;  ///< examples in the sample judged on
  std::vector<double> steps;      ///< the ladder, increasing
  std::vector<double> losses;     ///< the loss after each step's pass (infinite: it diverged)
  double best = 0;                ///< the ladder's step with the lowest held-out loss
  /// The largest step whose held-out loss is within kFlatBottom of the lowest: one pass over a
  /// sample tells such steps apart by less than that, and over many passes the larger learns
  /// more (wide sparse data, where each feature is seen in few of the sample's rows).
  double pick = 0;
  /// The step the run trained with: `pick` for softmax, the half-decade below it for the other
  /// models (one pass over a sample favours a step too large for many passes over the data).
  double chosen = 0;
  /// The held-out loss of the initial model, where every step's pass starts.
  double start_loss = 0;
  /// Two held-out losses closer than this fraction of either count as equal (inconclusive).
  static constexpr double kInconclusiveSpread = 1e-3;
  /// How far above the lowest held-out loss `pick` may lie, as a fraction of it.
  static constexpr double kFlatBottom = 0.05;
  /// Whether some step's held-out loss ended kInconclusiveSpread below start_loss.
  bool beats_start() const;
  /// The run took the model's default step: no step's held-out loss was 0.1% below the initial
  /// model's (one pass over the sample taught nothing that held on the other sample), or every
  /// step's was within 0.1% of the lowest.
  bool inconclusive = false;
  double seconds = 0;  ///< time calibrating, counted in the run's training time
};

/// How a linear run's training loops read its rows (PackedRows).
struct RowLayout {
  int index_bits = 32;                ///< 16 where the dimension allows
  std::string values = "f32";         ///< f32, f16, u8, or none (binary data)
  std::size_t bytes_per_nonzero = 8;  ///< index and value
  bool renumbered = false;            ///< features renumbered by frequency (--feature-order)
};

/// Why a run ended.
enum class StopReason {
  kEpochs,       ///< it ran every epoch asked for
  kConverged,    ///< the training loss stopped improving (TrainConfig::patience)
  kPlateau,      ///< a plateau found the step at its floor (Schedule::kPlateau)
  kInterrupted,  ///< Callbacks::stop
  kDiverged,     ///< the training loss diverged (the report of a DivergenceError)
};

/// The outcome of a run.
struct Report {
  TrainConfig config;  ///< the configuration, resolved
  DataShape data;      ///< the shape of the data and the model
  /// LIBSVM data: the training and test sets' statistics (the linear models' report shows them).
  std::optional<DatasetStats> dataset, test_dataset;
  /// Label values: binary linear models {negative, positive} (empty for squared); softmax and
  /// mlp the label of each class index.
  std::vector<double> labels;
  std::vector<EpochRecord> epochs;     ///< epoch 0 (initial) then one per epoch
  std::size_t samples = 0;             ///< examples processed in training
  double train_seconds = 0;            ///< total training time, evaluation excluded
  double samples_per_second = 0;       ///< samples / train_seconds
  std::vector<float> weights;          ///< the trained parameters, in the model's layout
  std::uint64_t updates_computed = 0;  ///< updates workers computed
  std::uint64_t updates_applied = 0;   ///< updates written (equal after the final flush)
  StalenessStats staleness;            ///< measured staleness, all workers
  std::vector<StalenessStats> staleness_per_worker;  ///< the same per worker
  std::vector<std::uint64_t> injected_delays;        ///< count of each injected delay value
  std::vector<CoherencePoint> coherence;             ///< gradient coherence over training
  Histogram batch_sizes;                             ///< samples per update, all workers
  Histogram windows_ns;                              ///< time-window lengths, all workers
  std::vector<WorkerSummary> workers;                ///< per worker
  /// Training loss against training time and updates applied so far: after each epoch, and
  /// --evals-per-epoch times per epoch (evaluation time excluded).
  std::vector<CurvePoint> curve;
  /// True when Callbacks::stop ended the run early: `epochs` holds the completed epochs and
  /// `weights` the parameters when the workers stopped (part way through an epoch).
  bool interrupted = false;
  /// Why the run ended: it ran its --epochs, it converged (--patience or the plateau schedule's
  /// last plateau), or it was interrupted.
  StopReason stopped = StopReason::kEpochs;
  std::optional<StepCalibration> step_calibration;  ///< with --step auto
  std::optional<RowLayout> training_rows;           ///< linear models
  /// Linear models with replicas: the features merged as the workers' mean change
  /// (TrainConfig::kMeanMergeMinShare).
  std::size_t mean_merged_features = 0;
  /// Linear models where `auto` weighed replicas of the hottest features: the share of the
  /// nonzeros that the TrainConfig::kAutoHotFeatures hottest hold (ReplicaPlan::hot_share).
  std::optional<double> hot_share;
  int resumed_from = 0;  ///< the epoch the run continued from (0: a fresh start)
  /// Trained across processes (Callbacks::exchange): what the sharing did.
  std::optional<ExchangeSummary> exchange;
};

/// Hooks the trainer calls; all optional. Called on the caller's thread.
struct Callbacks {
  /// Once the run is set up, before the initial model's evaluation: the report with its
  /// configuration resolved (replicas, hot features, step) and the data described, its records
  /// still empty. The place to print what the run will do without working it out twice.
  std::function<void(const Report&)> on_start;
  std::function<void(const EpochRecord&)> on_epoch;  ///< after each epoch's evaluation
  /// After each completed epoch (after on_epoch), with the state to continue from: the place
  /// to write a checkpoint. Workers are stopped while it runs.
  std::function<void(const TrainState&)> on_epoch_state;
  /// When set and it becomes true (from any thread, or a signal handler), workers stop within
  /// a few thousand samples, the unfinished epoch is dropped from the records, and the
  /// trainer returns the report with `interrupted` set. Polled between ranges of samples, and
  /// while the speed model waits on the steady clock: those waits end at once.
  const std::atomic<bool>* stop = nullptr;
  /// Each worker's clock for time windows and the speed model; unset: the steady clock.
  ClockFactory clock;
  /// Evaluates the parameters on held-out examples after each epoch (and the initial model):
  /// the records keep it as `validation`, and --patience counts its loss instead of the
  /// training loss. train() sets it for TrainConfig::validation_fraction.
  std::function<Evaluation(std::span<const float> weights)> held_out;
  /// The examples `held_out` evaluates (weights their evaluation among processes' parts).
  std::size_t held_out_rows = 0;
  /// Several processes train the one model (hogwild/exchange.h): this process runs its workers,
  /// merges through the exchange, and takes rank 0's records, its step calibration among them.
  /// Threads only: not with simulation, dynamic sharding or bounded staleness.
  Exchange* exchange = nullptr;
  /// With `exchange`: the training data given is this process's part of the whole
  /// (read_libsvm_part), which its workers train in a shuffle of their own each epoch; every
  /// process evaluates its part and the records carry the sums. Unset, every process holds all
  /// of it and trains its slices of every epoch's order (split across all processes' workers),
  /// and rank 0 evaluates.
  bool data_part = false;
  /// The initial model's evaluations (a report's first record) from a run of the same model,
  /// data, seed and evaluations that differs at most in the step: the run records them instead
  /// of evaluating the initial model again (the step calibration's trials, each of which would
  /// evaluate the same model). Ignored when resuming.
  const EpochRecord* initial_evaluation = nullptr;
};

/// Trains `config.model` on sparse (LIBSVM) data with lock-free parallel SGD: one std::jthread
/// per worker, each epoch a seeded shuffle split across workers, the step following the
/// optimiser's schedule. Linear models take binary labels (any two values) or, for the squared
/// loss, any; softmax maps label values to classes in increasing order (test labels must be
/// training classes). Throws InputError for a bad config or data the model cannot take,
/// DivergenceError when the loss becomes NaN/Inf or exceeds its bound, and rethrows a worker's
/// exception. With `resume`, training continues after `resume->epoch` from its parameters,
/// optimiser state and worker update counts, replaying the seeded shuffles of the epochs already
/// done, so a serial run without injected delay ends bit for bit where an uninterrupted one
/// does.
Report train(const TrainConfig& config, const Dataset& train_data, const Dataset* test_data,
             const Callbacks& callbacks = {}, const TrainState* resume = nullptr);
/// Trains softmax regression or an MLP on dense (IDX) data, as above.
Report train(const TrainConfig& config, const DenseDataset& train_data,
             const DenseDataset* test_data, const Callbacks& callbacks = {},
             const TrainState* resume = nullptr);
/// Trains matrix factorisation on ratings; epochs report the RMSE.
Report train(const TrainConfig& config, const Ratings& train_data, const Ratings* test_data,
             const Callbacks& callbacks = {}, const TrainState* resume = nullptr);

/// The label values a binary model maps to -1 and +1, {negative, positive}: the smaller of two
/// values is negative; one value alone is positive when > 0. Empty for the squared loss.
/// Throws InputError naming the example of a third label class.
std::vector<float> label_values(LossKind loss, const Dataset& data);

/// Evaluates linear weights on `data` (features beyond the weights are ignored): loss,
/// objective and, for classifiers, accuracy. `label_values` maps labels to -1/+1 for
/// classifiers ({} for the squared loss).
Evaluation evaluate(LossKind loss, std::span<const float> weights, double l2, const Dataset& data,
                    std::span<const float> label_values, int threads = 0);

}  // namespace hogwild
