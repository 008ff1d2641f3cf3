#include "hot_rows.h"

#include <tbb/parallel_for.h>

#include <bit>

#include "engine/feature_order.h"
#include "hogwild/detail/huge_pages.h"

namespace hogwild::detail {
namespace {

// Which features are hot, and a hot feature's slot: its rank among the hot features, which are
// sorted. A bit per feature and a count per 64 features: 0.75 MB for 4M features, small enough
// to stay in a core's L2, where an array of slots (16 MB, fresh, filled for every run) missed
// the caches on most cold nonzeros.
class HotSlots {
 public:
  HotSlots(std::size_t features, std::span<const std::uint32_t> sorted_hot)
      : bits_((features + 63) / 64), before_(bits_.size()) {
    for (const std::uint32_t j : sorted_hot) bits_[j / 64] |= std::uint64_t{1} << (j % 64);
    std::uint32_t count = 0;
    for (std::size_t w = 0; w < bits_.size(); ++w) {
      before_[w] = count;
      count += static_cast<std::uint32_t>(std::popcount(bits_[w]));
    }
  }
  bool hot(std::uint32_t j) const { return (bits_[j / 64] >> (j % 64)) & 1; }
  std::uint32_t slot(std::uint32_t j) const {
    const std::uint64_t below = bits_[j / 64] & ((std::uint64_t{1} << (j % 64)) - 1);
    return before_[j / 64] + static_cast<std::uint32_t>(std::popcount(below));
  }

 private:
  std::vector<std::uint64_t> bits_;
  std::vector<std::uint32_t> before_;  // hot features in the words before
};

}  // namespace

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
                 std::span<const std::uint32_t> numbers, const std::uint32_t* numbered) {
  const auto number = [&](std::uint32_t j) { return numbers.empty() ? j : numbers[j]; };
  const HotSlots slots(data.num_features, hot);
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
    for (std::uint64_t k = begin; k < end; ++k) hot_count += slots.hot(data.indices[k]);
    std::uint64_t back = end - hot_count;
    out.cold_count[r] = static_cast<std::uint32_t>(end - begin - hot_count);
    for (std::uint64_t k = begin; k < end; ++k) {
      const std::uint32_t j = data.indices[k];
      const bool is_hot = slots.hot(j);
      // Without branches: which side a nonzero goes to follows no pattern (77% hot on the
      // CTR-like rows), and a branch on it mispredicted.
      const std::uint64_t at = is_hot ? back : front;
      back += is_hot;
      front += !is_hot;
      const std::uint32_t cold = numbered != nullptr ? numbered[k] : number(j);
      out.indices[at] = is_hot ? slots.slot(j) : cold;
      out.values[at] = data.values[k];
    }
  });
  return out;
}

}  // namespace hogwild::detail
