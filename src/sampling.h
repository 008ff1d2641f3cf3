#pragma once

// Pieces of staleness and coherence measurement shared by the trainers.

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>

#include "hogwild/param_store.h"
#include "hogwild/random.h"

namespace hogwild::detail {

/// Steady-clock nanoseconds.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Coherence is averaged over this many windows per epoch.
inline constexpr int kCoherenceWindowsPerEpoch = 10;

// Each worker publishes how many updates it has applied on a line of its own; a measured
// update sums the others' counters at its read and at its write.
/// One worker's applied-update count, alone on its cache line.
struct alignas(kCacheLine) AppliedCounter {
  std::atomic<std::uint64_t> value{0};
};

// Geometric gaps between sampled events, so a rate costs one decrement per step.
/// Decides which events are sampled at a given rate.
class SampleClock {
 public:
  SampleClock(double rate, std::uint64_t seed) : rate_(rate), rng_(seed) {
    if (rate > 0 && rate < 1) log_q_ = std::log1p(-rate);
    countdown_ = gap();
  }
  bool tick() {
    if (rate_ <= 0) return false;
    if (countdown_ > 0) {
      --countdown_;
      return false;
    }
    countdown_ = gap();
    return true;
  }

 private:
  std::uint64_t gap() {
    if (rate_ >= 1 || rate_ <= 0) return 0;
    const double g = std::floor(std::log(1.0 - rng_.uniform()) / log_q_);
    return g > 1e15 ? std::uint64_t{1} << 50 : static_cast<std::uint64_t>(g);
  }
  double rate_;
  double log_q_ = 0;
  Rng rng_;
  std::uint64_t countdown_ = 0;
};

}  // namespace hogwild::detail
