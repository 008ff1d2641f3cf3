#include "hogwild/dataset.h"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
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

// Each feature's sum of squared values and the sum over all of them: an array of the sums, or,
// for integer data, the features' counts and what the few values other than +-1 add to them.
struct FeatureMass {
  std::vector<double> sums;                                   // per feature, or empty
  std::span<const std::uint32_t> counts;                      // with `extra`, where sums is empty
  std::vector<std::pair<std::uint32_t, std::int64_t>> extra;  // (feature, v^2 - 1), by feature
  double total = 0;

  // Calls fn(j, sum of feature j's squares) for every feature, in order.
  template <class Fn>
  void each(Fn&& fn) const {
    if (!sums.empty()) {
      for (std::uint32_t j = 0; j < sums.size(); ++j) fn(j, sums[j]);
      return;
    }
    auto next = extra.begin();
    for (std::uint32_t j = 0; j < counts.size(); ++j) {
      std::int64_t sum = counts[j];
      for (; next != extra.end() && next->first == j; ++next) sum += next->second;
      fn(j, static_cast<double>(sum));
    }
  }
};

// Each feature's sum of squared values, and the sum over all of them. The rows are cut into a
// number of parts that depends on the data alone, each part's sums are made in an array of its
// own in parallel (the pass waits on memory: on the RCV1-like rows 8.5 ms on one thread, 4.5
// on two, bench/bench_setup.cc), and the arrays are added in order: the same sums on any
// number of threads.
FeatureMass summed_mass(const Dataset& data) {
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
  FeatureMass out;
  out.total = std::accumulate(mass[0].begin(), mass[0].end(), 0.0);
  out.sums = std::move(mass[0]);
  return out;
}

// The same sums from the features' counts (feature_counts), where every value is a whole number
// whose squares, nnz of them, stay below 2^53, and few are not +-1 (at most one in 64 of each
// block of nonzeros: one-hot and binary data, the hashed CTR-like rows' collisions). Every sum
// summed_mass makes is then a whole number below 2^53, exact in any order, so these are its
// results to the bit, without its pass adding into 8 bytes a feature scattered over memory
// (bench/bench_setup.cc, wide_heavy_features, measures both).
std::optional<FeatureMass> mass_from_counts(const Dataset& data,
                                            std::span<const std::uint32_t> counts) {
  if (counts.size() != data.num_features) return std::nullopt;
  constexpr float kLargest = 65536.0f;  // its square, 2^32, is exact
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  constexpr std::size_t kMostOther = kBlock / 64;  // a block with more gives up
  // A block of nonzeros: whether its values are whole numbers up to kLargest, the largest
  // magnitude, and its values other than +-1 as (feature, v^2 - 1) while they are few.
  struct Block {
    bool integers = true;
    float largest = 0;
    std::vector<std::pair<std::uint32_t, std::int64_t>> other;
  };
  const std::size_t nnz = data.nnz();
  std::vector<Block> blocks((nnz + kBlock - 1) / kBlock);
  tbb::parallel_for(std::size_t{0}, blocks.size(), [&](std::size_t b) {
    Block& block = blocks[b];
    const std::size_t end = std::min(nnz, (b + 1) * kBlock);
    for (std::size_t k = b * kBlock; k < end; ++k) {
      const float a = std::fabs(data.values[k]);
      if (a == 1.0f) continue;
      // Whole: it survives a round trip through an integer (a NaN or a larger value fails).
      const float bounded = a <= kLargest ? a : 0.5f;
      block.integers &= static_cast<float>(static_cast<std::int32_t>(bounded)) == a;
      block.largest = std::max(block.largest, a);
      if (!block.integers || block.other.size() > kMostOther) return;
      block.other.emplace_back(data.indices[k], static_cast<std::int64_t>(double{a} * a) - 1);
    }
  });
  FeatureMass out;
  out.counts = counts;
  double largest = 1;
  for (Block& block : blocks) {
    if (!block.integers || block.other.size() > kMostOther) return std::nullopt;
    largest = std::max<double>(largest, block.largest);
    out.extra.insert(out.extra.end(), block.other.begin(), block.other.end());
  }
  if (static_cast<double>(nnz) * largest * largest >= 0x1p53) return std::nullopt;
  std::sort(out.extra.begin(), out.extra.end());
  std::int64_t added = 0;
  for (const auto& [j, square_minus_one] : out.extra) added += square_minus_one;
  out.total = static_cast<double>(static_cast<std::int64_t>(nnz) + added);
  return out;
}

FeatureMass feature_mass(const Dataset& data, std::span<const std::uint32_t> counts) {
  if (auto from_counts = mass_from_counts(data, counts)) return std::move(*from_counts);
  return summed_mass(data);
}

}  // namespace

double heaviest_feature_share(const Dataset& data, std::span<const std::uint32_t> counts) {
  const FeatureMass mass = feature_mass(data, counts);
  if (mass.total == 0) return 0;
  double heaviest = 0;
  mass.each([&](std::uint32_t, double sum) { heaviest = std::max(heaviest, sum); });
  return heaviest / mass.total;
}

std::vector<std::uint32_t> heavy_features(const Dataset& data, double min_share,
                                          std::span<const std::uint32_t> counts) {
  const FeatureMass mass = feature_mass(data, counts);
  std::vector<std::uint32_t> heavy;
  if (mass.total == 0) return heavy;
  mass.each([&](std::uint32_t j, double sum) {
    if (sum > min_share * mass.total) heavy.push_back(j);
  });
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
