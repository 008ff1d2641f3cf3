#include "engine/data_parts.h"

#include <algorithm>
#include <cstddef>

namespace hogwild::detail {

std::vector<std::vector<double>> gathered(Exchange& exchange, std::span<const double> values) {
  // Sums of vectors that are zero but in this process's slots: a gather through sums.
  const auto ranks = static_cast<std::size_t>(exchange.ranks());
  const auto rank = static_cast<std::size_t>(exchange.rank());
  std::vector<double> lengths(ranks, 0.0);
  lengths[rank] = static_cast<double>(values.size());
  exchange.sum(lengths);
  std::vector<std::size_t> starts(ranks + 1, 0);
  for (std::size_t r = 0; r < ranks; ++r) {
    starts[r + 1] = starts[r] + static_cast<std::size_t>(lengths[r]);
  }
  std::vector<double> all(starts[ranks], 0.0);
  std::copy(values.begin(), values.end(), all.begin() + static_cast<long>(starts[rank]));
  exchange.sum(all);
  std::vector<std::vector<double>> out(ranks);
  for (std::size_t r = 0; r < ranks; ++r) {
    out[r].assign(all.begin() + static_cast<long>(starts[r]),
                  all.begin() + static_cast<long>(starts[r + 1]));
  }
  return out;
}

DatasetStats whole_of_parts(const DatasetStats& part, Exchange& exchange) {
  std::vector<double> mine{static_cast<double>(part.rows), static_cast<double>(part.nnz),
                           static_cast<double>(part.max_nnz_per_row),
                           static_cast<double>(part.features), part.zero_based ? 1.0 : 0.0};
  for (const auto& [label, count] : part.label_counts) {
    mine.push_back(label);
    mine.push_back(static_cast<double>(count));
  }
  DatasetStats whole;
  for (const auto& theirs : gathered(exchange, mine)) {
    whole.rows += static_cast<std::size_t>(theirs[0]);
    whole.nnz += static_cast<std::size_t>(theirs[1]);
    whole.max_nnz_per_row = std::max(whole.max_nnz_per_row, static_cast<std::size_t>(theirs[2]));
    whole.features = std::max(whole.features, static_cast<std::size_t>(theirs[3]));
    whole.zero_based = whole.zero_based || theirs[4] != 0.0;
    for (std::size_t k = 5; k + 1 < theirs.size(); k += 2) {
      whole.label_counts[static_cast<float>(theirs[k])] += static_cast<std::size_t>(theirs[k + 1]);
    }
  }
  whole.mean_nnz_per_row =
      whole.rows > 0 ? static_cast<double>(whole.nnz) / static_cast<double>(whole.rows) : 0.0;
  return whole;
}

}  // namespace hogwild::detail
