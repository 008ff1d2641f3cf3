#pragma once

// The generators are public (hogwild/random.h); the library's own code names them here.
#include <algorithm>
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

/// The trainers' order for `epoch` (1-based) in runs of `block` consecutive rows: the runs in a
/// random permutation seeded by (seed, epoch), each run in storage order. Unlike
/// shuffle_epoch it does not depend on earlier epochs.
inline void block_order(std::vector<std::uint32_t>& order, std::size_t block, std::uint64_t seed,
                        int epoch) {
  const std::size_t n = order.size();
  const std::size_t runs = (n + block - 1) / block;
  std::vector<std::uint32_t> run_order(runs);
  for (std::size_t i = 0; i < runs; ++i) run_order[i] = static_cast<std::uint32_t>(i);
  Rng rng(derive_seed(seed ^ 0xb10c0000u, static_cast<std::uint64_t>(epoch)));
  for (std::size_t i = runs; i > 1; --i) std::swap(run_order[i - 1], run_order[rng.below(i)]);
  std::size_t pos = 0;
  for (const std::uint32_t run : run_order) {
    const std::size_t end = std::min(n, (std::size_t{run} + 1) * block);
    for (std::size_t r = std::size_t{run} * block; r < end; ++r) {
      order[pos++] = static_cast<std::uint32_t>(r);
    }
  }
}
}  // namespace hogwild::detail
