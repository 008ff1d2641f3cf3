#pragma once

// The generators are public (hogwild/random.h); the library's own code names them here.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "hogwild/random.h"

namespace hogwild::detail {
using ::hogwild::derive_seed;
using ::hogwild::Rng;
using ::hogwild::splitmix64;

/// The trainers' shuffle for `epoch` (1-based): a Fisher-Yates pass, seeded by (seed, epoch),
/// over the order the previous epoch left, so resuming replays epochs 1..k to get epoch k's.
inline void shuffle_epoch(std::vector<std::uint32_t>& order, std::uint64_t seed, int epoch) {
  Rng rng(derive_seed(seed, static_cast<std::uint64_t>(epoch)));
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
}
}  // namespace hogwild::detail
