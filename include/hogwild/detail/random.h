#pragma once

// Small, fast, seedable generators whose output does not depend on the standard library's
// distribution implementations, so the same seed gives the same data everywhere.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace hogwild::detail {

/// SplitMix64: a good 64-bit mix, used to derive independent seeds.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Mixes a seed with a stream number (worker, row, epoch) into a new seed.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t s = seed ^ (stream * 0xd1b54a32d192ed03ULL);
  splitmix64(s);
  return splitmix64(s);
}

/// xoshiro256**: the per-stream generator.
class Rng {
 public:
  /// Seeds the four words from SplitMix64.
  explicit Rng(std::uint64_t seed) {
    for (auto& word : s_) word = splitmix64(seed);
  }
  /// Next 64 random bits.
  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform double in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n) (Lemire's multiply-shift; bias below 2^-32 for n < 2^32).
  std::uint64_t below(std::uint64_t n) {
    __extension__ using Wide = unsigned __int128;
    return static_cast<std::uint64_t>((static_cast<Wide>(next()) * n) >> 64);
  }
  /// Standard normal (Box-Muller).
  double normal() {
    const double u1 = 1.0 - uniform();
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  /// Exponential with mean 1.
  double exponential() { return -std::log(1.0 - uniform()); }

  /// The four words of state: a checkpoint keeps them so that a resumed run draws on.
  std::array<std::uint64_t, 4> state() const { return {s_[0], s_[1], s_[2], s_[3]}; }
  /// Continues from a state() read earlier.
  void set_state(const std::array<std::uint64_t, 4>& words) {
    for (std::size_t i = 0; i < 4; ++i) s_[i] = words[i];
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace hogwild::detail
