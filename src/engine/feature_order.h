#pragma once

// Features renumbered by frequency for the training loops (TrainConfig::frequency_order): the
// most frequent feature becomes 0, the next 1, and so on, so the weights the rows touch most sit
// on adjacent cache lines instead of one to a line among weights rarely read. A row keeps its
// nonzeros in their order, so every margin and update does the same arithmetic: the run's
// results are those of the given numbering, bit for bit. The store holds the weights in the new
// order; whatever leaves the kernel (evaluations, checkpoints, the report) is put back.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hogwild::detail {

/// The new number of every feature from its count of examples: descending counts, ties in
/// index order, unseen features last. A permutation of [0, counts.size()).
std::vector<std::uint32_t> frequency_numbers(std::span<const std::uint32_t> counts);

/// numbered[numbers[j]] = given[j] for every feature j.
void to_numbered(std::span<const float> given, std::span<const std::uint32_t> numbers,
                 std::span<float> numbered);

/// given[j] = numbered[numbers[j]] for every feature j.
void to_given(std::span<const float> numbered, std::span<const std::uint32_t> numbers,
              std::span<float> given);

}  // namespace hogwild::detail
