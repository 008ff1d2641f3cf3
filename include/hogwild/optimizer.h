#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace hogwild {

/// How a gradient becomes an update. Per-coordinate state (momentum buffer, Adagrad sums,
/// RMSProp averages, Adam moments) lives in shared buffers the size of the model, read and
/// written under the run's update policy like the parameters themselves.
///
/// Sparse gradients touch only their nonzeros' state. For Adam that is "lazy Adam": the
/// moments of coordinates absent from a gradient are not decayed in that step (their decay
/// catches up only when they next appear), and the bias correction uses the global step count.
/// This keeps a sparse update's cost proportional to its nonzeros, as in Hogwild!. An Adam
/// step is held to the largest one any history of gradients gives (|m| / sqrt(v) is at most
/// (1 - beta1) / sqrt((1 - beta2) (1 - beta1^2 / beta2))): concurrent workers can read one
/// worker's new m beside the v from before its write, and m / (0 + eps) would otherwise throw
/// a weight out. A serial run never meets the bound.
enum class OptimizerKind {
  kSgd,       ///< w -= eta g
  kMomentum,  ///< heavy ball: v = mu v + g; w -= eta v
  kNesterov,  ///< v = mu v + g; w -= eta (g + mu v)
  kAdagrad,   ///< s += g^2; w -= eta g / (sqrt(s) + eps)
  kRmsprop,   ///< s = rho s + (1 - rho) g^2; w -= eta g / (sqrt(s) + eps)
  kAdam,      ///< m, v moments with bias correction (lazy on sparse gradients)
};

/// Step-size schedule over training progress.
enum class Schedule {
  kConstant,     ///< eta0
  kEpoch,        ///< eta0 * decay^epoch (epoch counted from 0)
  kInverse,      ///< eta0 / (1 + t / scale), t = epochs of progress (fractional)
  kInverseSqrt,  ///< eta0 / sqrt(1 + t / scale)
  /// eta0 while the loss keeps improving; times `plateau_factor` each time `plateau_patience`
  /// epochs in a row end with a loss not a fraction `plateau_threshold` below the best before
  /// them, and the run ends at the plateau that would take the step below 1/100 of eta0
  /// (PyTorch's ReduceLROnPlateau, relative threshold; scikit-learn's `adaptive`).
  kPlateau,
};

/// Parses sgd, momentum, nesterov, adagrad, rmsprop, adam; throws InputError otherwise.
OptimizerKind parse_optimizer(std::string_view name);
/// The command-line name of an optimiser.
std::string_view to_string(OptimizerKind kind);
/// Parses constant, epoch, inverse, inverse-sqrt, plateau; throws InputError otherwise.
Schedule parse_schedule(std::string_view name);
/// The command-line name of a schedule.
std::string_view to_string(Schedule schedule);
/// Number of model-sized state buffers the optimiser keeps (0, 1 or 2).
std::size_t state_buffers(OptimizerKind kind);

/// An optimiser and its hyper-parameters. Defaults are the CLI's.
struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;  ///< --optimizer
  std::optional<double> step;  ///< --step: initial step size eta0; unset: the model's default
  /// --step auto: train() chooses the initial step on a sample of the training data first
  /// (StepCalibration); `step` is then ignored.
  bool auto_step = false;
  Schedule schedule = Schedule::kEpoch;  ///< --step-schedule
  double decay = 0.9;           ///< --decay: per-epoch factor of the `epoch` schedule, (0, 1]
  double schedule_scale = 1;    ///< --step-schedule-scale: epochs per unit of t in 1/t, 1/sqrt(t)
  int plateau_patience = 2;     ///< --plateau-patience: epochs without improvement, >= 1
  double plateau_factor = 0.2;  ///< --plateau-factor: the step's multiplier at a plateau, (0, 1)
  /// --plateau-threshold: the relative decrease of the loss that counts as an improvement,
  /// [0, 1). Relative, because a factorisation's training loss keeps falling by 0.4% an epoch
  /// at 0.013, where an absolute 1e-4 saw a plateau and cut the step while the test RMSE was
  /// still falling (0.458 where a constant step reached 0.427).
  double plateau_threshold = 1e-4;
  double momentum = 0.9;  ///< --momentum: mu of momentum and Nesterov, [0, 1)
  double rho = 0.9;       ///< --rho: RMSProp's average decay, [0, 1)
  double beta1 = 0.9;     ///< --beta1: Adam's first-moment decay, [0, 1)
  double beta2 = 0.999;   ///< --beta2: Adam's second-moment decay, [0, 1)
  double epsilon = 1e-8;  ///< --epsilon: added to the denominators of Adagrad/RMSProp/Adam
  double clip_norm = 0;   ///< --clip-norm: rescale each update's gradient to at most this
                          ///< L2 norm; 0 = off

  /// Checks ranges; throws InputError("--option: expected ..., found ...").
  void validate() const;
  /// The step size at `progress` epochs of training (fractional), in epoch `epoch` (0-based),
  /// with `step0` the resolved initial step (the plateau schedule: before its cuts).
  double step_at(double step0, int epoch, double progress) const;
};

}  // namespace hogwild
