#include "engine/train_loss_sample.h"

#include <algorithm>
#include <type_traits>

#include "engine/rng.h"
#include "engine/subsets.h"

namespace hogwild::detail {

std::vector<std::size_t> train_loss_rows(std::size_t n, std::size_t sample, std::uint64_t seed) {
  if (sample == 0 || sample >= n) return {};
  std::vector<std::size_t> rows = seeded_permutation(n, seed, 0x7105555au);
  rows.resize(sample);
  std::sort(rows.begin(), rows.end());
  return rows;
}

ExamplesCopy::ExamplesCopy(const Examples& all, std::span<const std::size_t> rows) {
  std::visit([&](const auto* data) { data_ = subset(*data, rows); }, all.data);
  if (!all.classes.empty()) {
    classes_.reserve(rows.size());
    for (const auto r : rows) classes_.push_back(all.classes[r]);
  }
  std::visit(
      [&](const auto& data) {
        if constexpr (std::is_same_v<std::decay_t<decltype(data)>, Ratings>) {
          view_.emplace(data);
        } else {
          view_.emplace(data, classes_);
        }
      },
      data_);
}

}  // namespace hogwild::detail
