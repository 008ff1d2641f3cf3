#pragma once

// --weights bf16: a linear model's shared weights as bfloat16, the upper half of a float's bits
// (Buckwild!, De Sa et al. 2015; low-precision SGD). Half the bytes per weight, so twice the
// weights per cache line and per megabyte of cache: where a model does not fit the caches, every
// sample's gathered loads and read-modify-writes miss half as often. A sum is rounded
// stochastically, up with probability equal to the fraction dropped, so rounding is unbiased
// and steps smaller than a bf16 unit still land on average (rounded to nearest they never would).
//
// The training loops read and write these weights; everything else (evaluations, averaging,
// checkpoints, the report) reads a float copy widened from them, which is exact: every bf16 value
// is a float.

#include <tbb/parallel_for.h>

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/force_inline.h"
#include "hogwild/detail/random.h"

namespace hogwild::detail {

/// The float a bf16 weight stands for (exact).
HOGWILD_FORCE_INLINE inline float widen_bf16(std::uint16_t h) {
  return std::bit_cast<float>(std::uint32_t{h} << 16);
}

/// `v` rounded to bf16 stochastically: `random16` (16 uniform random bits) is added below the
/// kept half, so the result is the next bf16 up with probability equal to the dropped fraction
/// and otherwise the next down. A value that is already bf16 comes back unchanged; a finite value
/// past the largest bf16 may round to infinity, which the divergence check then sees.
HOGWILD_FORCE_INLINE inline std::uint16_t round_bf16(float v, std::uint32_t random16) {
  return static_cast<std::uint16_t>((std::bit_cast<std::uint32_t>(v) + random16) >> 16);
}

/// `v` rounded to the nearest bf16, ties to even: how float weights (a checkpoint's, or zeros)
/// become the loops' starting point. NaN stays NaN.
inline std::uint16_t nearest_bf16(float v) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(v);
  if ((bits & 0x7F800000u) == 0x7F800000u && (bits & 0x007FFFFFu) != 0) {
    return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // a quiet NaN
  }
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1)) >> 16);
}

/// A worker's random bits for the rounding: xorshift64 (Marsaglia), 16 bits per rounding, four
/// roundings per draw. Cheap enough for every nonzero of every update; its quality is ample for
/// a coin weighted by the dropped fraction.
class RoundingBits {
 public:
  /// Seeds the stream (a zero seed would stay zero; it is replaced).
  void seed(std::uint64_t seed) { state_ = seed != 0 ? seed : 0x9E3779B97F4A7C15ULL; }
  /// The next 64 random bits: four roundings' worth.
  HOGWILD_FORCE_INLINE std::uint64_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }

 private:
  std::uint64_t state_ = 0x9E3779B97F4A7C15ULL;
};

/// How the loops read and write one bf16 weight: relaxed 16-bit atomics when workers share the
/// weights (racy: a concurrent write may be lost, never torn; each is one plain 16-bit move on
/// x86-64), plain accesses when one worker owns them (serial).
template <bool kConcurrent>
struct Bf16Access {
  /// The weight's bits.
  HOGWILD_FORCE_INLINE static std::uint16_t bits(const std::uint16_t& x) {
    if constexpr (kConcurrent) {
      return std::atomic_ref<std::uint16_t>(const_cast<std::uint16_t&>(x))
          .load(std::memory_order_relaxed);
    } else {
      return x;
    }
  }
  /// The weight's value.
  HOGWILD_FORCE_INLINE static float load(const std::uint16_t& x) { return widen_bf16(bits(x)); }
  /// Writes `h`, already rounded.
  HOGWILD_FORCE_INLINE static void store(std::uint16_t& x, std::uint16_t h) {
    if constexpr (kConcurrent) {
      std::atomic_ref<std::uint16_t>(x).store(h, std::memory_order_relaxed);
    } else {
      x = h;
    }
  }
};

/// `weights` rounded to nearest, in parallel (call inside the run's task arena).
inline std::vector<std::uint16_t> narrowed_bf16(std::span<const float> weights) {
  std::vector<std::uint16_t> narrow(weights.size());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, weights.size(), 1 << 14),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t j = range.begin(); j < range.end(); ++j) {
                        narrow[j] = nearest_bf16(weights[j]);
                      }
                    });
  return narrow;
}

/// to[j] = the float of from[j], in parallel (call inside the run's task arena, no worker
/// running).
inline void widen_bf16(std::span<const std::uint16_t> from, std::span<float> to) {
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, from.size(), 1 << 14),
                    [&](const tbb::blocked_range<std::size_t>& range) {
                      for (std::size_t j = range.begin(); j < range.end(); ++j) {
                        to[j] = widen_bf16(from[j]);
                      }
                    });
}

}  // namespace hogwild::detail
