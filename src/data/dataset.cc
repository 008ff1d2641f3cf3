#include "hogwild/dataset.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "data/two_values.h"
#include "engine/rng.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/detail/huge_pages.h"
#include "hogwild/ratings.h"

namespace hogwild {

void Dataset::append(std::span<const std::uint32_t> row_indices, std::span<const float> row_values,
                     float label) {
  indices.insert(indices.end(), row_indices.begin(), row_indices.end());
  values.insert(values.end(), row_values.begin(), row_values.end());
  row_offsets.push_back(indices.size());
  labels.push_back(label);
  if (!row_indices.empty()) {
    num_features = std::max<std::size_t>(num_features, std::size_t{row_indices.back()} + 1);
  }
}

namespace {

// Examples per distinct label: binary labels counted in one pass without a branch per label
// (two_values), other labels by a search of the map each. Each key is the first label of its
// value, as one insertion per label makes it.
std::map<float, std::size_t> label_counts(std::span<const float> labels) {
  std::map<float, std::size_t> counts;
  if (labels.empty()) return counts;
  const auto two = detail::two_values(labels);
  if (!two.cover(labels.size())) {
    for (const float y : labels) ++counts[y];
    return counts;
  }
  counts[two.first] = two.first_count;
  if (two.second_count > 0) counts[two.second] = two.second_count;
  return counts;
}

}  // namespace

DatasetStats describe(const Dataset& data) {
  DatasetStats stats;
  stats.rows = data.rows();
  stats.features = data.num_features;
  stats.nnz = data.nnz();
  stats.zero_based = data.zero_based;
  stats.mean_nnz_per_row = stats.rows ? static_cast<double>(stats.nnz) / stats.rows : 0.0;
  for (std::size_t i = 0; i < data.rows(); ++i) {
    stats.max_nnz_per_row =
        std::max<std::size_t>(stats.max_nnz_per_row, data.row_offsets[i + 1] - data.row_offsets[i]);
  }
  stats.label_counts = label_counts(data.labels);
  return stats;
}

std::vector<std::uint32_t> feature_counts(const Dataset& data) {
  std::vector<std::uint32_t> counts;
  detail::resize_on_huge_pages(counts, data.num_features);  // 16 MB for 4M features: fresh
  for (const auto index : data.indices) ++counts[index];
  return counts;
}

namespace {

// At most this many parts of the rows sum their features' squares side by side.
constexpr std::size_t kMassParts = 4;
// Fewer parts where the features are many against the nonzeros: each part's array of sums then
// holds at most a sixteenth of the nonzeros' count.
constexpr std::size_t kNonzerosPerPartSum = 16;

// Each feature's sum of squared values, and the sum over all of them. The rows are cut into a
// number of parts that depends on the data alone, each part's sums are made in an array of its
// own in parallel (the pass waits on memory: on the RCV1-like rows 8.5 ms on one thread, 4.5
// on two, bench/bench_setup.cc), and the arrays are added in order: the same sums on any
// number of threads.
std::pair<std::vector<double>, double> feature_mass(const Dataset& data) {
  const std::size_t features = data.num_features, rows = data.rows();
  const std::size_t parts = std::clamp<std::size_t>(
      data.nnz() / (kNonzerosPerPartSum * std::max<std::size_t>(features, 1)), 1, kMassParts);
  std::vector<std::vector<double>> mass(parts);
  tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t part) {
    std::vector<double>& sums = mass[part];
    detail::resize_on_huge_pages(sums, features);
    const std::size_t last = data.row_offsets[rows * (part + 1) / parts];
    for (std::size_t k = data.row_offsets[rows * part / parts]; k < last; ++k) {
      sums[data.indices[k]] += double{data.values[k]} * data.values[k];
    }
  });
  for (std::size_t part = 1; part < parts; ++part) {
    for (std::size_t j = 0; j < features; ++j) mass[0][j] += mass[part][j];
  }
  const double total = std::accumulate(mass[0].begin(), mass[0].end(), 0.0);
  return {std::move(mass[0]), total};
}

}  // namespace

double heaviest_feature_share(const Dataset& data) {
  const auto [mass, total] = feature_mass(data);
  if (total == 0) return 0;
  return *std::max_element(mass.begin(), mass.end()) / total;
}

std::vector<std::uint32_t> heavy_features(const Dataset& data, double min_share) {
  const auto [mass, total] = feature_mass(data);
  std::vector<std::uint32_t> heavy;
  if (total == 0) return heavy;
  for (std::uint32_t j = 0; j < mass.size(); ++j) {
    if (mass[j] > min_share * total) heavy.push_back(j);
  }
  return heavy;
}

std::vector<std::size_t> storage_order(std::size_t n, std::uint64_t seed) {
  return detail::seeded_permutation(n, seed, 0x5707e5u);
}

void shuffle_rows(DenseDataset& data, std::uint64_t seed) {
  DenseDataset shuffled = data;
  const auto move_rows = [&](const auto& from, auto& to) {
    for (std::size_t i = 0; const std::size_t r : storage_order(data.rows(), seed)) {
      std::copy_n(from.begin() + static_cast<std::ptrdiff_t>(r * data.cols), data.cols,
                  to.begin() + static_cast<std::ptrdiff_t>(i * data.cols));
      shuffled.labels[i++] = data.labels[r];
    }
  };
  if (data.stored_as_bytes()) {
    move_rows(data.bytes, shuffled.bytes);
  } else {
    move_rows(data.features, shuffled.features);
  }
  data = std::move(shuffled);
}

void shuffle_rows(Ratings& data, std::uint64_t seed) {
  Ratings shuffled = data;
  for (std::size_t i = 0; const std::size_t r : storage_order(data.size(), seed)) {
    shuffled.users[i] = data.users[r];
    shuffled.items[i] = data.items[r];
    shuffled.values[i++] = data.values[r];
  }
  data = std::move(shuffled);
}

void shuffle_rows(Dataset& data, std::uint64_t seed) {
  const std::size_t n = data.rows();
  const std::vector<std::size_t> permutation = storage_order(n, seed);
  Dataset shuffled;
  shuffled.row_offsets.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = permutation[i];
    shuffled.row_offsets[i + 1] =
        shuffled.row_offsets[i] + (data.row_offsets[r + 1] - data.row_offsets[r]);
  }
  // Fresh storage as large as the rows', faulted in on every core, then the rows copied to
  // their places in parallel: one thread appending them took 0.4-0.7 s on 1M CTR-like rows.
  detail::resize_on_huge_pages(shuffled.indices, data.nnz());
  detail::resize_on_huge_pages(shuffled.values, data.values.size());
  shuffled.labels.resize(n);
  tbb::parallel_for(
      tbb::blocked_range<std::size_t>(0, n), [&](const tbb::blocked_range<std::size_t>& rows) {
        for (std::size_t i = rows.begin(); i < rows.end(); ++i) {
          const std::size_t r = permutation[i];
          const auto from = static_cast<std::ptrdiff_t>(data.row_offsets[r]);
          const auto count = static_cast<std::ptrdiff_t>(data.row_offsets[r + 1]) - from;
          const auto to = static_cast<std::ptrdiff_t>(shuffled.row_offsets[i]);
          std::copy_n(data.indices.begin() + from, count, shuffled.indices.begin() + to);
          std::copy_n(data.values.begin() + from, count, shuffled.values.begin() + to);
          shuffled.labels[i] = data.labels[r];
        }
      });
  shuffled.num_features = data.num_features;  // may exceed the largest index (a test's width)
  shuffled.source = std::move(data.source);
  shuffled.zero_based = data.zero_based;
  data = std::move(shuffled);
}

}  // namespace hogwild
