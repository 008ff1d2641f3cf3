#pragma once

// The training driver: one loop over epochs, segments and workers for every model.

#include <atomic>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/kernel.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// How the driver runs the epochs; a run's config resolved to what the driver needs.
struct DriverConfig {
  std::size_t rows = 0;        ///< training examples
  int epochs = 1;              ///< the last epoch to run
  std::uint64_t seed = 1;      ///< row order
  std::size_t block_rows = 0;  ///< 0: rows in a fresh permutation per epoch; B: runs of B rows
  int workers = 1;             ///< real threads, or virtual workers with `simulate`
  bool simulate = false;       ///< virtual workers stepped in rounds on the caller's thread
  bool dynamic_sharding = false;
  int evals_per_epoch = 1;
  /// The run diverged when the training loss exceeds this multiple of its initial value (or
  /// is NaN or infinite).
  double divergence_factor = 1e3;
};

/// What the driver calls back on the caller's thread; all optional.
struct DriverHooks {
  std::function<void(const EpochResult&)> on_epoch;       ///< after each evaluation of an epoch
  std::function<void(const TrainState&)> on_epoch_state;  ///< after on_epoch, to checkpoint
  const std::atomic<bool>* stop = nullptr;                ///< polled between ranges
};

/// The run as the driver saw it.
struct DriverResult {
  std::vector<EpochResult> epochs;  ///< the initial model, then each completed epoch
  std::vector<CurvePoint> curve;    ///< training loss against time and updates
  std::size_t samples = 0;          ///< samples processed, resumed epochs included
  double elapsed = 0;               ///< training seconds, evaluation excluded
  bool interrupted = false;         ///< the stop flag ended the run
  int resumed_from = 0;             ///< epochs done before this run
};

/// Runs epochs (after `resume`'s, when given) over `kernel`: row order, segments, sharding or
/// simulation rounds, stop polling, evaluation, the loss curve, divergence (DivergenceError),
/// and the state each epoch leaves for a checkpoint.
DriverResult drive(const DriverConfig& config, Kernel& kernel, const DriverHooks& hooks,
                   const TrainState* resume);

}  // namespace hogwild::detail
