#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hogwild {

/// An immutable dense dataset: a row-major float matrix (one example per row) plus one
/// integer class label per row. IDX images load into it with pixels scaled to [0, 1].
struct DenseDataset {
  std::vector<float> features;       ///< rows() x cols, row-major
  std::vector<std::int32_t> labels;  ///< one class label per row
  std::size_t cols = 0;              ///< features per example
  std::vector<std::size_t> shape;    ///< the shape of one example as stored (e.g. {28, 28})
  std::string source;                ///< where it came from (a path), for messages

  /// Number of examples.
  std::size_t rows() const { return labels.size(); }
  /// The i-th example's features.
  std::span<const float> row(std::size_t i) const { return {features.data() + i * cols, cols}; }
  /// Keeps the first `n` examples (a subset for quick runs and tests).
  void truncate(std::size_t n) {
    if (n >= rows()) return;
    labels.resize(n);
    features.resize(n * cols);
  }
};

/// Rewrites the examples' storage in a random order drawn from `seed` (examples keep their
/// labels), as shuffle_rows does for sparse data: what TrainConfig::block_rows assumes.
void shuffle_rows(DenseDataset& data, std::uint64_t seed);

}  // namespace hogwild
