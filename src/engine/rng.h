#pragma once

// Shuffles and row orders, on the generators of hogwild/detail/random.h.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "hogwild/detail/random.h"

namespace hogwild::detail {

/// A Fisher-Yates pass over `items`, drawing from `rng`.
template <class T>
void fisher_yates(std::vector<T>& items, Rng& rng) {
  for (std::size_t i = items.size(); i > 1; --i) std::swap(items[i - 1], items[rng.below(i)]);
}

/// 0..n-1 in a random order drawn from (seed, tag): the seeded samples, splits and storage
/// orders, each with a tag of its own.
inline std::vector<std::size_t> seeded_permutation(std::size_t n, std::uint64_t seed,
                                                   std::uint64_t tag) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  Rng rng(derive_seed(seed, tag));
  fisher_yates(order, rng);
  return order;
}

/// The trainers' shuffle for `epoch` (1-based): a Fisher-Yates pass, seeded by (seed, epoch),
/// over the order the previous epoch left, so resuming replays epochs 1..k to get epoch k's.
inline void shuffle_epoch(std::vector<std::uint32_t>& order, std::uint64_t seed, int epoch) {
  Rng rng(derive_seed(seed, static_cast<std::uint64_t>(epoch)));
  fisher_yates(order, rng);
}

/// The trainers' order for `epoch` (1-based) in runs of `block` consecutive rows: the runs in a
/// random permutation seeded by (seed, epoch), each run in storage order. Unlike
/// shuffle_epoch it does not depend on earlier epochs.
inline void block_order(std::vector<std::uint32_t>& order, std::size_t block, std::uint64_t seed,
                        int epoch) {
  const std::size_t n = order.size();
  const std::size_t runs = (n + block - 1) / block;
  std::vector<std::uint32_t> run_order(runs);
  std::iota(run_order.begin(), run_order.end(), 0u);
  Rng rng(derive_seed(seed ^ 0xb10c0000u, static_cast<std::uint64_t>(epoch)));
  fisher_yates(run_order, rng);
  std::size_t pos = 0;
  for (const std::uint32_t run : run_order) {
    const std::size_t end = std::min(n, (std::size_t{run} + 1) * block);
    for (std::size_t r = std::size_t{run} * block; r < end; ++r) {
      order[pos++] = static_cast<std::uint32_t>(r);
    }
  }
}
}  // namespace hogwild::detail
