#include "hot_rows.h"

#include <tbb/parallel_for.h>

#include "engine/feature_order.h"
#include "hogwild/detail/huge_pages.h"

namespace hogwild::detail {

std::vector<std::uint32_t> hottest_features(std::span<const std::uint32_t> counts, std::size_t k,
                                            std::span<const std::uint32_t> numbers) {
  // The first k of the frequency order, so that renumbered runs hold numbers 0..k-1.
  std::vector<std::uint32_t> own;
  if (numbers.empty()) numbers = own = frequency_numbers(counts);
  std::vector<std::uint32_t> hot;
  for (std::uint32_t j = 0; j < counts.size(); ++j) {
    if (counts[j] > 0 && numbers[j] < k) hot.push_back(j);
  }
  return hot;
}

HotRows hot_rows(const Dataset& data, std::vector<std::uint32_t> hot,
                 std::span<const std::uint32_t> numbers) {
  const auto number = [&](std::uint32_t j) { return numbers.empty() ? j : numbers[j]; };
  constexpr std::uint32_t kCold = ~std::uint32_t{0};
  std::vector<std::uint32_t> slot_of(data.num_features, kCold);
  for (std::size_t s = 0; s < hot.size(); ++s) slot_of[hot[s]] = static_cast<std::uint32_t>(s);
  HotRows out;
  out.features = std::move(hot);
  for (auto& j : out.features) j = number(j);
  // Storage as large as the rows', fresh: faulted in on every core at once (huge_pages.h); a
  // fault a 4 KiB page on first write had made this 3x as long (1M CTR-like rows).
  resize_on_huge_pages(out.indices, data.indices.size());
  resize_on_huge_pages(out.values, data.values.size());
  resize_on_huge_pages(out.cold_count, data.rows());
  tbb::parallel_for(std::size_t{0}, data.rows(), [&](std::size_t r) {
    const std::uint64_t begin = data.row_offsets[r];
    const std::uint64_t end = data.row_offsets[r + 1];
    // Cold nonzeros fill the row from the front, hot ones from the back (in the same order
    // as stored, so both parts keep increasing indices unless renumbered).
    std::uint64_t front = begin;
    std::uint64_t hot_count = 0;
    for (std::uint64_t k = begin; k < end; ++k) hot_count += slot_of[data.indices[k]] != kCold;
    std::uint64_t back = end - hot_count;
    out.cold_count[r] = static_cast<std::uint32_t>(end - begin - hot_count);
    for (std::uint64_t k = begin; k < end; ++k) {
      const std::uint32_t j = data.indices[k];
      const std::uint32_t slot = slot_of[j];
      const std::uint64_t at = slot == kCold ? front++ : back++;
      out.indices[at] = slot == kCold ? number(j) : slot;
      out.values[at] = data.values[k];
    }
  });
  return out;
}

}  // namespace hogwild::detail
