#pragma once

// --step-schedule plateau: the step holds while the loss the run watches keeps improving and
// is cut when it stops (scikit-learn's `learning_rate="adaptive"`, Keras' ReduceLROnPlateau).
// A constant step keeps learning where a fixed decay has stalled (a sparse factorisation
// whose training loss falls for a hundred epochs), and the cuts settle a noisy run whose
// loss stops falling after a few.

#include <algorithm>
#include <cmath>

#include "hogwild/trainer.h"

namespace hogwild::detail {

/// One epoch of the rule --patience and the plateau schedule share (scikit-learn's
/// n_iter_no_change): `wait` counts the epochs in a row whose loss is not `margin` below the
/// best loss before them, and `best` keeps the lowest.
inline void count_without_improvement(double loss, double margin, double& best, int& wait) {
  wait = loss > best - margin ? wait + 1 : 0;
  best = std::min(best, loss);
}

/// The plateau schedule's state between epochs: the factor its cuts left on the initial step,
/// the lowest loss seen, and the epochs in a row that did not improve on it.
class StepPlateau {
 public:
  /// What an epoch's loss decided.
  enum class Outcome {
    kHold,  ///< the step stays
    kCut,   ///< the step was multiplied by the factor
    kEnd,   ///< a plateau with the step already at its floor: the run has converged
  };
  /// The step never goes below this fraction of the initial step: the plateau that would take
  /// it there ends the run instead (three plateaus with the default factor of 1/5).
  static constexpr double kFloor = 0.01;

  /// `patience` epochs without a loss a fraction `threshold` below the best make a plateau;
  /// each cuts the step by `factor`. `loss` is the initial model's.
  StepPlateau(int patience, double factor, double threshold, double loss)
      : patience_(patience), factor_(factor), threshold_(threshold), state_{1.0, loss, 0} {}

  /// Continues from a checkpoint's state.
  void restore(const PlateauState& state) { state_ = state; }
  /// What a checkpoint keeps.
  const PlateauState& state() const { return state_; }
  /// The factor on the initial step for the next epoch.
  double scale() const { return state_.scale; }

  /// Takes the loss an epoch ended with.
  Outcome observe(double loss) {
    count_without_improvement(loss, threshold_ * std::abs(state_.best), state_.best, state_.wait);
    if (state_.wait < patience_) return Outcome::kHold;
    state_.wait = 0;
    if (state_.scale * factor_ < kFloor) {
      state_.ended = true;  // a run resumed from this epoch ends here too
      return Outcome::kEnd;
    }
    state_.scale *= factor_;
    return Outcome::kCut;
  }

 private:
  int patience_;
  double factor_;
  double threshold_;
  PlateauState state_;
};

}  // namespace hogwild::detail
