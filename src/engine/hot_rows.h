#pragma once

// The training rows laid out for replicas of the hot features only (--hot-features): each
// worker keeps private copies of the features most rows hold, merged into the shared model
// every --replicate samples, and writes every other feature straight to the shared model.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "hogwild/dataset.h"

namespace hogwild::detail {

/// The rows of a data set with each row's shared (cold) features first, by feature index, then
/// its hot ones, each given as its slot in the replicas. Offsets are the data set's own.
struct HotRows {
  std::vector<std::uint32_t> features;    ///< slot -> feature index (or number), in index order
  std::vector<std::uint32_t> indices;     ///< per nonzero: a feature (cold) or a slot (hot)
  std::vector<float> values;              ///< per nonzero, in the order of `indices`
  std::vector<std::uint32_t> cold_count;  ///< per row: how many of its nonzeros come first, cold
};

/// The `k` features held by the most rows (ties to the lower index; features no row holds are
/// never chosen), in index order: the first `k` of frequency_numbers(counts), or of `numbers`
/// when the caller has them already.
std::vector<std::uint32_t> hottest_features(std::span<const std::uint32_t> counts, std::size_t k,
                                            std::span<const std::uint32_t> numbers = {});

/// The rows of `data` laid out for replicas of `hot` (sorted feature indices). With `numbers`
/// (feature_order.h), cold features and `features` are given by their numbers, the places
/// they have in the renumbered store. `numbered`, where the caller has it, holds each nonzero's
/// feature number (numbers[data.indices[k]], or the index itself without numbers; PackedRows's
/// 32-bit indices), read in order where looking each number up missed the caches.
HotRows hot_rows(const Dataset& data, std::vector<std::uint32_t> hot,
                 std::span<const std::uint32_t> numbers = {},
                 const std::uint32_t* numbered = nullptr);

}  // namespace hogwild::detail
