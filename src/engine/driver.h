#pragma once

// The training driver: one loop over epochs, segments and workers for every model.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/kernel.h"
#include "engine/worker_stats.h"
#include "hogwild/detail/param_store.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// How the driver runs the epochs; a run's config resolved to what the driver needs.
struct DriverConfig {
  std::size_t rows = 0;        ///< training examples
  std::size_t loss_rows = 0;   ///< the examples the training loss is measured on
  int epochs = 1;              ///< the last epoch to run
  std::uint64_t seed = 1;      ///< row order
  std::size_t block_rows = 0;  ///< 0: rows in a fresh permutation per epoch; B: runs of B rows
  int workers = 1;             ///< real threads, or virtual workers with `simulate`
  bool simulate = false;       ///< virtual workers on the caller's thread
  bool virtual_time = false;   ///< simulation in virtual time (DriverHooks::clocks)
  int staleness_bound = -1;    ///< --bounded-staleness S; -1 = none
  bool in_flight = false;      ///< --write-latency: updates land after the step that sent them
  bool dynamic_sharding = false;
  int evals_per_epoch = 1;
  /// The run diverged when the training loss exceeds this multiple of its initial value (or
  /// is NaN or infinite).
  double divergence_factor = 1e3;
  int patience = 0;          ///< epochs without improvement before the run has converged; 0 = off
  double tol = 0;            ///< the improvement of the training loss that counts
  bool keep_weights = true;  ///< the report gets a copy of the final weights
  bool plateau = false;      ///< --step-schedule plateau: the driver scales the kernel's step
  int plateau_patience = 2;  ///< epochs without an improvement that make a plateau
  double plateau_factor = 0.2;      ///< the step's multiplier at a plateau
  double plateau_threshold = 1e-4;  ///< the relative improvement that counts
};

/// What the driver calls back on the caller's thread; all optional.
struct DriverHooks {
  std::function<void(const EpochRecord&)> on_epoch;       ///< after each evaluation of an epoch
  std::function<void(const TrainState&)> on_epoch_state;  ///< after on_epoch, to checkpoint
  const std::atomic<bool>* stop = nullptr;                ///< polled between ranges
  /// Evaluates held-out examples after each epoch; patience then counts their loss.
  std::function<Evaluation(std::span<const float> weights)> held_out;
  /// Virtual time: each virtual worker's clock.
  std::vector<WorkerClock*> clocks;
  /// Several processes (Callbacks::exchange): this process's workers take their part of each
  /// epoch, merge through it, and take rank 0's evaluations.
  Exchange* exchange = nullptr;
  /// The examples `held_out` evaluates.
  std::size_t held_out_rows = 0;
  /// With `exchange`: the rows are this process's part of the data (Callbacks::data_part).
  bool data_part = false;
  /// The initial model's evaluations, already made (Callbacks::initial_evaluation), or null.
  const EpochRecord* initial_evaluation = nullptr;
};

/// The run as the driver saw it.
struct DriverResult {
  std::vector<EpochRecord> epochs;  ///< the initial model, then each completed epoch
  std::vector<CurvePoint> curve;    ///< training loss against time and updates
  std::size_t samples = 0;          ///< samples processed, resumed epochs included
  double elapsed = 0;               ///< training seconds, evaluation excluded
  bool interrupted = false;         ///< the stop flag ended the run
  bool converged = false;           ///< the training loss stopped improving (patience)
  bool plateau_end = false;         ///< a plateau found the step at its floor (plateau schedule)
  std::string divergence;           ///< why the loss diverged ("" while it has not)
  int resumed_from = 0;             ///< epochs done before this run
  /// --bounded-staleness: per worker, the waits for the slowest worker and their seconds
  /// (virtual seconds in simulation).
  std::vector<std::uint64_t> bound_waits;
  std::vector<double> bound_wait_seconds;
};

/// Runs epochs (after `resume`'s, when given) over `kernel`: row order, segments, sharding or
/// simulation rounds, stop polling, evaluation, the loss curve, divergence (which ends the
/// run, `divergence` saying why), and the state each epoch leaves for a checkpoint.
DriverResult drive(const DriverConfig& config, Kernel& kernel, const DriverHooks& hooks,
                   const TrainState* resume);

/// The driver's settings from a run's config, for `rows` examples and `workers` workers.
inline DriverConfig driver_config(const TrainConfig& config, std::size_t rows, int workers) {
  const std::size_t sample = config.train_loss_sample;
  return {.rows = rows,
          .loss_rows = sample > 0 ? std::min(rows, sample) : rows,
          .epochs = config.epochs,
          .seed = config.seed,
          .block_rows = config.block_rows,
          .workers = workers,
          .simulate = config.simulate > 0,
          .virtual_time = config.virtual_time,
          .staleness_bound = config.bounded_staleness,
          .in_flight = config.write_latency_ns > 0,
          .dynamic_sharding = config.dynamic_sharding,
          .evals_per_epoch = config.evals_per_epoch,
          .divergence_factor = config.divergence_factor,
          .patience = config.patience,
          .tol = config.tol,
          .keep_weights = config.keep_weights,
          .plateau = config.optimizer.schedule == Schedule::kPlateau,
          .plateau_patience = config.optimizer.plateau_patience,
          .plateau_factor = config.optimizer.plateau_factor,
          .plateau_threshold = config.optimizer.plateau_threshold};
}

/// Drives `kernel` with the caller's callbacks and fills the report's run: the records, the
/// curve, counts, the workers' sums, times and the final parameters.
void drive_into(Report& report, const DriverConfig& config, Kernel& kernel,
                const Callbacks& callbacks, const TrainState* resume,
                std::span<const WorkerStats* const> workers, ParamStore& store, Policy policy);

}  // namespace hogwild::detail
