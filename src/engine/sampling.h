#pragma once

// Pieces of staleness and coherence measurement shared by the trainers.

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "hogwild/detail/param_store.h"
#include "hogwild/detail/random.h"
#include "hogwild/error.h"
#include "hogwild/staleness.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// Steady-clock nanoseconds.
inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// Cosine of two sparse vectors with sorted indices, entry i of each read as the pair
/// (index, value) that `a(i)` / `b(i)` return. The merge of the indices advances without
/// branches: for a sampled coherence point, mispredicted branches were most of its cost.
template <class EntryA, class EntryB>
double sparse_cosine(std::size_t la, EntryA a, std::size_t lb, EntryB b) {
  double dot = 0, na = 0, nb = 0;
  std::size_t i = 0, j = 0;
  while (i < la && j < lb) {
    const auto [x, vx] = a(i);
    const auto [y, vy] = b(j);
    const double product = double{vx} * vy;
    dot += x == y ? product : 0.0;
    i += x <= y;
    j += y <= x;
  }
  for (std::size_t k = 0; k < la; ++k) na += double{a(k).second} * a(k).second;
  for (std::size_t k = 0; k < lb; ++k) nb += double{b(k).second} * b(k).second;
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
}

/// Cosine of two dense vectors of the same length: sparse_cosine's value for them, bit for bit
/// (each sum taken in the same order), in one pass whose three sums run side by side.
inline double dense_cosine(std::span<const float> a, std::span<const float> b) {
  double dot = 0, na = 0, nb = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    dot += double{a[k]} * b[k];
    na += double{a[k]} * a[k];
    nb += double{b[k]} * b[k];
  }
  return na > 0 && nb > 0 ? dot / std::sqrt(na * nb) : 0.0;
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
  /// Events that tick() will pass over before the next sampled one (all of them at rate 0).
  std::uint64_t until_next() const {
    return rate_ <= 0 ? std::numeric_limits<std::uint64_t>::max() : countdown_;
  }
  /// Passes over `n` events at once, as n calls of tick(); `n` must not exceed until_next().
  void skip(std::uint64_t n) {
    if (rate_ > 0) countdown_ -= n;
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
