#pragma once

// --step auto: the initial step chosen on a sample of the training data before the run.

#include <cstdint>
#include <vector>

#include "hogwild/trainer.h"

namespace hogwild::detail {

/// Examples in the calibration sample: this many (as Bottou's SGD code takes) ...
inline constexpr std::size_t kCalibrationRows = 1000;
/// ... or for a factorisation this fraction of the data when more: its sample must see its
/// users and items more than once, or every step looks alike on the held-out sample. (Other
/// models keep 1,000: on 4,000 rows of 20-class sparse text one pass favours a step 30 times
/// too small.)
inline constexpr double kCalibrationFraction = 0.1;

/// The calibration is inconclusive, and the run takes the model's default step, when the
/// lowest held-out loss is not this fraction below the initial model's, or every step's
/// held-out loss is within this fraction of the lowest.
inline constexpr double kInconclusiveSpread = StepCalibration::kInconclusiveSpread;

/// The trials run at once on the run's workers hold at most this many parameters together
/// (each its model, gradient and optimiser state): 32M, so a model of over 16M parameters is
/// calibrated one trial at a time, as a serial run is.
inline constexpr std::size_t kTrialParametersAtOnce = std::size_t{1} << 25;

/// How many of `trials` calibration trials run at once: one a worker of the run, at most one a
/// core, and together no more than kTrialParametersAtOnce `parameters` (a trial's model's).
/// A serial or simulated run keeps to one core and runs them one at a time.
std::size_t trials_at_once(int workers, int cores, std::size_t parameters, std::size_t trials);

/// The ladder of steps tried: half-decades from 1e-4 to 10.
std::vector<double> step_ladder();

/// The largest of `steps` whose loss is within StepCalibration::kFlatBottom of the lowest of
/// `losses` (one per step; infinite where the step diverged; at least one finite).
double largest_near_lowest(const std::vector<double>& steps, const std::vector<double>& losses);

/// Chooses the initial step for `config` on a seeded sample of `train` (StepCalibration).
/// Throws DivergenceError naming the steps tried when every one diverges.
template <class Data>
StepCalibration calibrate_step(const TrainConfig& config, const Data& train);

/// train() with --step auto: calibrates, then trains with the chosen step; the calibration's
/// time counts in the report's training time and the report records it.
template <class Data>
Report train_with_step_calibration(const TrainConfig& config, const Data& train, const Data* test,
                                   const Callbacks& callbacks, const TrainState* resume);

}  // namespace hogwild::detail
