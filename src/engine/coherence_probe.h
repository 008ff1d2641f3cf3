#pragma once

// The coherence probe: which gradients are compared, and where their cosines go.

#include <cstddef>
#include <cstdint>
#include <limits>

#include "engine/sampling.h"
#include "engine/worker_stats.h"

namespace hogwild::detail {

/// One worker's gradient-coherence measurement (--coherence-sample, --coherence-lag): a sampled
/// update's gradient is kept and compared with the worker's gradient `lag` updates later; the
/// cosines are summed per coherence window. The kernel keeps the gradient in its own form (a
/// row and a coefficient, or the gradient's entries); the probe decides when.
class CoherenceProbe {
 public:
  /// What to do with an update's gradient.
  enum class Step { kNone, kSave, kCompare };

  /// Off: no gradient kept.
  CoherenceProbe() = default;
  /// Samples a fraction `rate` of updates (from `seed`), each compared `lag` updates later.
  CoherenceProbe(double rate, std::uint64_t seed, int lag)
      : clock_(rate, seed), lag_(static_cast<std::uint64_t>(lag)), on_(rate > 0) {}

  /// Measurement is on.
  bool on() const { return on_; }
  /// For the worker's update number `computed` (counting it): keep its gradient, compare it
  /// with the one kept, or neither.
  Step at(std::uint64_t computed) {
    if (saved_) {
      if (computed != due_) return Step::kNone;
      saved_ = false;
      return Step::kCompare;
    }
    if (!clock_.tick()) return Step::kNone;
    due_ = computed + lag_;
    saved_ = true;
    return Step::kSave;
  }
  /// Updates after update number `computed` to which at() will answer kNone.
  std::uint64_t quiet_after(std::uint64_t computed) const {
    if (!on_) return std::numeric_limits<std::uint64_t>::max();
    return saved_ ? due_ - computed - 1 : clock_.until_next();
  }
  /// Passes over `n` updates (n <= quiet_after), as n calls of at() answering kNone.
  void skip(std::uint64_t n) {
    if (on_ && !saved_) clock_.skip(n);
  }
  /// Adds a comparison's cosine to coherence window `window` (ignored beyond the run's).
  static void add(WorkerStats& stats, std::size_t window, double cosine) {
    if (window >= stats.coherence_windows) return;
    if (window >= stats.coherence_sum.size()) {
      stats.coherence_sum.resize(window + 1, 0.0);
      stats.coherence_count.resize(window + 1, 0);
    }
    stats.coherence_sum[window] += cosine;
    ++stats.coherence_count[window];
  }

 private:
  SampleClock clock_{0.0, 0};
  std::uint64_t lag_ = 1;
  std::uint64_t due_ = 0;  // the update a kept gradient is compared with
  bool saved_ = false;
  bool on_ = false;
};

}  // namespace hogwild::detail
