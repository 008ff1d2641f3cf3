#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hogwild {

/// An immutable dense dataset: a row-major matrix (one example per row) plus one integer class
/// label per row. The values are floats, or bytes each standing for byte x byte_scale: IDX
/// images load as their pixel bytes (a quarter of the memory of floats, and the same values,
/// pixel / 255 in [0, 1]). Read rows through copy_row / copy_rows, which serve both.
struct DenseDataset {
  std::vector<float> features;       ///< rows() x cols floats, row-major; or empty (bytes)
  std::vector<std::uint8_t> bytes;   ///< rows() x cols bytes, row-major, when `features` is empty
  float byte_scale = 1.0f / 255.0f;  ///< the value of byte 1 (IDX pixels: 1/255)
  std::vector<std::int32_t> labels;  ///< one class label per row
  std::size_t cols = 0;              ///< features per example
  std::vector<std::size_t> shape;    ///< the shape of one example as stored (e.g. {28, 28})
  std::string source;                ///< where it came from (a path), for messages
  /// Where the labels came from when not `source` (IDX: the labels file), for messages.
  std::string labels_source;

  /// The name messages about a label give: the labels' file, else `source`.
  const std::string& labels_name() const { return labels_source.empty() ? source : labels_source; }

  /// Number of examples.
  std::size_t rows() const { return labels.size(); }
  /// True when the values are stored as bytes (`bytes`), false for floats (`features`).
  bool stored_as_bytes() const { return features.empty() && !bytes.empty(); }
  /// Writes the i-th example's cols values to `out`.
  void copy_row(std::size_t i, float* out) const { copy_rows(i, i + 1, out); }
  /// Writes examples [begin, end) to `out`, row after row ((end - begin) x cols values).
  void copy_rows(std::size_t begin, std::size_t end, float* out) const {
    const std::size_t first = begin * cols, count = (end - begin) * cols;
    if (stored_as_bytes()) {
      const std::uint8_t* in = bytes.data() + first;
      for (std::size_t k = 0; k < count; ++k) out[k] = static_cast<float>(in[k]) * byte_scale;
    } else {
      std::copy_n(features.data() + first, count, out);
    }
  }
  /// Keeps the first `n` examples (a subset for quick runs and tests).
  void truncate(std::size_t n) {
    if (n >= rows()) return;
    if (stored_as_bytes()) {
      bytes.resize(n * cols);
    } else {
      features.resize(n * cols);
    }
    labels.resize(n);
  }
};

/// Rewrites the examples' storage in a random order drawn from `seed` (examples keep their
/// labels), as shuffle_rows does for sparse data: what TrainConfig::block_rows assumes.
void shuffle_rows(DenseDataset& data, std::uint64_t seed);

}  // namespace hogwild
