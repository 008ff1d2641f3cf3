#include "engine/feature_order.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cassert>

namespace hogwild::detail {

std::vector<std::uint32_t> frequency_numbers(std::span<const std::uint32_t> counts) {
  // A counting sort over counts below kBuckets (nearly every feature of a power law), then the
  // few features counted more often sorted among themselves: linear in the dimension, where a
  // comparison sort of millions of features cost more than an epoch of training.
  constexpr std::uint32_t kBuckets = 1u << 16;
  std::vector<std::uint32_t> frequent;
  std::vector<std::uint64_t> start(kBuckets + 1, 0);  // features in the buckets above, first
  for (std::uint32_t j = 0; j < counts.size(); ++j) {
    if (counts[j] >= kBuckets) {
      frequent.push_back(j);
    } else {
      ++start[kBuckets - 1 - counts[j] + 1];
    }
  }
  std::sort(frequent.begin(), frequent.end(), [&](std::uint32_t a, std::uint32_t b) {
    return counts[a] != counts[b] ? counts[a] > counts[b] : a < b;
  });
  start[0] = frequent.size();
  for (std::uint32_t b = 1; b <= kBuckets; ++b) start[b] += start[b - 1];
  std::vector<std::uint32_t> numbers(counts.size());
  for (std::uint32_t i = 0; i < frequent.size(); ++i) numbers[frequent[i]] = i;
  for (std::uint32_t j = 0; j < counts.size(); ++j) {
    if (counts[j] < kBuckets) {
      numbers[j] = static_cast<std::uint32_t>(start[kBuckets - 1 - counts[j]]++);
    }
  }
  return numbers;
}

void to_numbered(std::span<const float> given, std::span<const std::uint32_t> numbers,
                 std::span<float> numbered) {
  assert(given.size() == numbers.size() && numbered.size() == numbers.size());
  tbb::parallel_for(std::size_t{0}, numbers.size(),
                    [&](std::size_t j) { numbered[numbers[j]] = given[j]; });
}

void to_given(std::span<const float> numbered, std::span<const std::uint32_t> numbers,
              std::span<float> given) {
  assert(given.size() == numbers.size() && numbered.size() == numbers.size());
  tbb::parallel_for(std::size_t{0}, numbers.size(),
                    [&](std::size_t j) { given[j] = numbered[numbers[j]]; });
}

}  // namespace hogwild::detail
