#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hogwild/dataset.h"
#include "hogwild/delay.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/optimizer.h"
#include "hogwild/policy.h"
#include "hogwild/ratings.h"
#include "hogwild/schedule.h"
#include "hogwild/staleness.h"
#include "hogwild/trainer.h"

namespace hogwild {

/// The models beyond sparse linear ones (those train with hogwild::train, trainer.h).
enum class ModelKind {
  kSoftmax,        ///< multinomial logistic regression, sparse or dense features
  kMlp,            ///< ReLU hidden layers + softmax output, dense features
  kFactorisation,  ///< matrix factorisation of ratings (`mf`)
};

/// Parses "softmax", "mlp" or "mf"; throws InputError otherwise.
ModelKind parse_model_kind(std::string_view name);
/// True when `name` is one of the model trainer's models (softmax, mlp, mf).
bool is_model_kind(std::string_view name);
/// The command-line name of a model.
std::string_view to_string(ModelKind kind);

/// Everything that defines a model training run; the report repeats it, resolved. Zero (or
/// negative for l2) means "the model's default", so the short commands stay short.
struct ModelConfig {
  ModelKind model = ModelKind::kSoftmax;  ///< --model
  std::vector<std::size_t> hidden{256};   ///< --hidden: MLP hidden layer widths
  std::size_t rank = 10;                  ///< --rank: factorisation rank
  double init_scale = 0.1;                ///< --init-scale: factorisation init deviation
  OptimizerConfig optimizer;              ///< --optimizer and its hyper-parameters, --step
  double l2 = -1;                         ///< --l2: L2 strength; < 0 = the model's default
  /// --batch B or --schedule fixed:B: samples per update; 0 = the model's default (or the size
  /// in `schedule` when that is a fixed schedule given by the caller).
  std::size_t batch = 0;
  Policy policy = Policy::kRacy;  ///< --policy
  int threads = 0;                ///< --threads; 0 uses every core
  int epochs = 10;                ///< --epochs, >= 1
  std::uint64_t seed = 1;         ///< --seed: initialisation and shuffles
  /// --divergence-factor: stop when the training loss exceeds this multiple of its initial
  /// value; NaN/Inf always stops.
  double divergence_factor = 1e3;
  DelaySpec delay;                 ///< --delay: injected delay, in the worker's updates
  double staleness_sample = 0.01;  ///< --staleness-sample: fraction of updates measured
  double coherence_sample = 0.01;  ///< --coherence-sample: fraction of updates measured
  int coherence_lag = 1;           ///< --coherence-lag: compare with s updates back
  int simulate = 0;                ///< --simulate K: K virtual workers, one thread
  /// --schedule time:W (a worker accumulates gradients until W has passed, then applies one
  /// update), --batch-reduce (`mean`) and --max-batch. Unset (batch 0, empty text), the run
  /// takes fixed minibatches of `batch`; resolved() fills it in either way.
  ScheduleSpec schedule{.kind = ScheduleSpec::Kind::kFixed, .batch = 0, .text = ""};
  SpeedModel speed;               ///< --worker-speed, --straggler, --pause: injected heterogeneity
  int evals_per_epoch = 1;        ///< --evals-per-epoch: training-loss points per epoch in `curve`
  bool dynamic_sharding = false;  ///< --sharding dynamic: workers claim chunks of each epoch
  /// --order: 0 = every epoch visits the examples in a fresh random permutation; B > 0 = runs
  /// of B consecutive stored examples, the runs in a fresh random order (random samples only
  /// when the storage is in random order: shuffle_rows it once first, as the CLI does).
  std::size_t block_rows = 0;

  /// Checks ranges; throws InputError("--option: expected ..., found ...").
  void validate() const;
  /// The config with every default filled in (step, l2, batch, threads).
  ModelConfig resolved() const;
  /// Number of workers, real or virtual: K with --simulate K, 1 for the serial policy, else
  /// --threads (0 = every core).
  int workers() const;
};

/// One epoch's results; epoch 0 is the initial model. Absent values do not apply.
struct ModelEpochRecord {
  int epoch = 0;                         ///< 0 = before training
  double seconds = 0;                    ///< training time of this epoch (no evaluation)
  double elapsed = 0;                    ///< cumulative training time
  double step = 0;                       ///< step size at the start of the epoch
  double train_loss = 0;                 ///< mean loss on the training data (no regulariser)
  std::optional<double> test_loss;       ///< mean loss on the test data
  std::optional<double> train_accuracy;  ///< classifiers
  std::optional<double> test_accuracy;   ///< classifiers with test data
  std::optional<double> train_rmse;      ///< factorisation
  std::optional<double> test_rmse;       ///< factorisation with test data
};

/// Shape of the data a model trained on.
struct ModelDataStats {
  std::string format;          ///< libsvm, idx or ratings
  std::size_t rows = 0;        ///< training examples (ratings)
  std::size_t features = 0;    ///< input dimension (classifiers)
  std::size_t classes = 0;     ///< classifiers
  std::size_t users = 0;       ///< factorisation
  std::size_t items = 0;       ///< factorisation
  std::size_t test_rows = 0;   ///< test examples, 0 without test data
  std::size_t parameters = 0;  ///< model parameters
};

/// The outcome of a model training run.
struct ModelReport {
  ModelConfig config;                    ///< resolved configuration
  ModelDataStats dataset;                ///< data shape
  std::vector<double> class_labels;      ///< classifiers: class index -> label in the data
  std::vector<ModelEpochRecord> epochs;  ///< epoch 0 (initial) then one per epoch
  std::size_t samples = 0;               ///< examples processed in training
  double train_seconds = 0;              ///< total training time, evaluation excluded
  double samples_per_second = 0;         ///< samples / train_seconds
  std::vector<float> weights;            ///< all parameters, in the model's layout
  std::uint64_t updates_computed = 0;    ///< minibatch updates computed
  std::uint64_t updates_applied = 0;     ///< minibatch updates applied (equal after flushes)
  StalenessStats staleness;              ///< measured staleness, all workers
  std::vector<StalenessStats> staleness_per_worker;  ///< the same per worker
  std::vector<std::uint64_t> injected_delays;        ///< count of each injected delay value
  std::vector<CoherencePoint> coherence;             ///< gradient coherence over training
  /// Training loss against training time and updates applied so far: after each epoch, and
  /// --evals-per-epoch times per epoch (evaluation time excluded).
  std::vector<CurvePoint> curve;
  Histogram batch_sizes;               ///< samples per update, all workers
  Histogram windows_ns;                ///< time-window lengths, all workers (time schedule)
  std::vector<WorkerSummary> workers;  ///< per worker: updates, samples, batch sizes, windows
  /// True when ModelCallbacks::stop ended the run early: `epochs` holds the completed epochs.
  bool interrupted = false;
  int resumed_from = 0;  ///< the epoch the run continued from (0: a fresh start)
};

/// Hooks the model trainer calls on the caller's thread; all optional.
struct ModelCallbacks {
  std::function<void(const ModelEpochRecord&)> on_epoch;  ///< after each epoch's evaluation
  /// After each completed epoch (after on_epoch), with the parameters, the optimiser's buffers
  /// and each worker's update count: the place to write a checkpoint.
  std::function<void(const TrainState&)> on_epoch_state;
  /// When set and it becomes true, workers stop within 64 minibatches, the unfinished epoch is
  /// dropped from the records and the report comes back with `interrupted` set.
  const std::atomic<bool>* stop = nullptr;
  /// Each worker's clock for time windows and the speed model; unset: the steady clock.
  ClockFactory clock;
};

/// Trains softmax regression on sparse (LIBSVM) data: labels are any values, mapped to classes
/// in increasing order (the report keeps the mapping); test labels must be training classes.
/// Hogwild workers (one std::jthread each) take minibatches from a seeded per-epoch shuffle.
/// Throws InputError for a bad config or data, DivergenceError when the loss becomes NaN/Inf.
/// With `resume`, training continues after `resume->epoch` from its parameters, optimiser state
/// and worker update counts (a serial run without injected delay continues exactly).
ModelReport train_model(const ModelConfig& config, const Dataset& train, const Dataset* test,
                        const ModelCallbacks& callbacks = {}, const TrainState* resume = nullptr);
/// Trains softmax regression or an MLP on dense (IDX) data.
ModelReport train_model(const ModelConfig& config, const DenseDataset& train,
                        const DenseDataset* test, const ModelCallbacks& callbacks = {},
                        const TrainState* resume = nullptr);
/// Trains matrix factorisation on ratings; epochs report train_rmse and test_rmse.
ModelReport train_model(const ModelConfig& config, const Ratings& train, const Ratings* test,
                        const ModelCallbacks& callbacks = {}, const TrainState* resume = nullptr);

/// The report as JSON with the top-level keys of the linear report (config, dataset, epochs,
/// samples_per_second, final) plus classes for classifiers. `indent` < 0 gives one line.
std::string to_json(const ModelReport& report, int indent = 2);

/// The config as JSON (the report's `config`). `indent` < 0 gives one line.
std::string config_to_json(const ModelConfig& config, int indent = 2);

}  // namespace hogwild
