#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace hogwild {

/// One sparse example: sorted 0-based feature indices and their values.
struct SparseRow {
  std::span<const std::uint32_t> indices;  ///< strictly increasing, 0-based
  std::span<const float> values;           ///< same length as indices
};

/// An immutable sparse dataset in CSR form plus one label per row.
struct Dataset {
  std::vector<std::uint64_t> row_offsets{0};  ///< rows()+1 entries, row i is [off[i], off[i+1])
  std::vector<std::uint32_t> indices;         ///< 0-based feature indices, sorted per row
  std::vector<float> values;                  ///< feature values, finite
  std::vector<float> labels;                  ///< one finite label per row
  std::size_t num_features = 0;               ///< 1 + the largest feature index (or more)
  std::string source;                         ///< where it came from (a path), for messages
  bool zero_based = false;                    ///< its file's indices were 0-based (LIBSVM)

  /// Number of examples.
  std::size_t rows() const { return labels.size(); }
  /// Number of stored nonzeros.
  std::size_t nnz() const { return indices.size(); }
  /// The i-th example's features.
  SparseRow row(std::size_t i) const {
    const auto begin = row_offsets[i];
    const auto count = row_offsets[i + 1] - begin;
    return {{indices.data() + begin, count}, {values.data() + begin, count}};
  }
  /// Appends one example; indices must be sorted and 0-based.
  void append(std::span<const std::uint32_t> row_indices, std::span<const float> row_values,
              float label);
  /// Keeps the first `n` examples (a subset for quick runs); the dimension stays the file's.
  void truncate(std::size_t n) {
    if (n >= rows()) return;
    labels.resize(n);
    row_offsets.resize(n + 1);
    indices.resize(row_offsets[n]);
    values.resize(row_offsets[n]);
  }
};

/// Summary statistics of a dataset, as `hogwild info` prints them.
struct DatasetStats {
  std::size_t rows = 0;                       ///< examples
  std::size_t features = 0;                   ///< dimension
  std::size_t nnz = 0;                        ///< stored nonzeros
  double mean_nnz_per_row = 0;                ///< nnz / rows
  std::size_t max_nnz_per_row = 0;            ///< longest row
  std::map<float, std::size_t> label_counts;  ///< examples per distinct label value
  bool zero_based = false;                    ///< the file's indices were 0-based
};

/// Computes the statistics of `data`.
DatasetStats describe(const Dataset& data);

/// Number of examples in which each feature is nonzero (size data.num_features).
std::vector<std::uint32_t> feature_counts(const Dataset& data);

/// The largest share of the data's squared mass (the sum of every stored value squared) that
/// one feature carries: about 1/D for D features of equal weight, 1/2 for a constant feature
/// of 1 beside rows of norm 1; 0 for data without a nonzero value. `counts`, feature_counts(data)
/// where the caller has them, let integer data (one-hot, binary) be weighed from them instead of
/// from a pass over every nonzero; the result is the same to the bit.
double heaviest_feature_share(const Dataset& data, std::span<const std::uint32_t> counts = {});

/// The features that each carry more than `min_share` of the data's squared mass, in
/// increasing order: at most 1 / min_share of them. `counts` as for heaviest_feature_share.
std::vector<std::uint32_t> heavy_features(const Dataset& data, double min_share,
                                          std::span<const std::uint32_t> counts = {});

/// The order shuffle_rows stores `n` examples in for `seed`: the i-th stored is the
/// order[i]-th given. Whoever copies examples in anyway can copy them in this order instead.
std::vector<std::size_t> storage_order(std::size_t n, std::uint64_t seed);

/// Rewrites the rows' storage in a random order drawn from `seed` (rows keep their labels),
/// so that runs of consecutive stored rows are random samples: what TrainConfig::block_rows
/// assumes of a file that may be sorted (by label, by date). Holds two copies while it runs.
void shuffle_rows(Dataset& data, std::uint64_t seed);

}  // namespace hogwild
