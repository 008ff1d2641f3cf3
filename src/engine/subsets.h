#pragma once

// Copies of chosen examples of a data set: the samples --step auto calibrates on and the part
// --validation-fraction holds out.

#include <cstddef>
#include <span>

#include "hogwild/dataset.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/ratings.h"

namespace hogwild::detail {

/// The examples `rows` of `data`, in that order, with the data's dimensions (a model shaped
/// from the subset is shaped as one from the whole).
Dataset subset(const Dataset& data, std::span<const std::size_t> rows);
/// As above, for dense examples.
DenseDataset subset(const DenseDataset& data, std::span<const std::size_t> rows);
/// As above, for ratings: ids beyond the subset keep their factors.
Ratings subset(const Ratings& data, std::span<const std::size_t> rows);

/// Renumbers the features of `a` and `b` together to 0..k-1 in index order, k the number of
/// distinct features the two hold, and sets both dimensions to k. Each row keeps its values in
/// the same order, so a zero-initialised linear or softmax model trained on the pair computes
/// what it computes on the originals, bit for bit, with k weights per class instead of the
/// whole dimension (features no row holds keep weight 0 and take no part).
void compact_features(Dataset& a, Dataset& b);

/// Number of examples (rows, or ratings).
inline std::size_t examples_in(const Dataset& data) { return data.rows(); }
/// Number of examples (rows, or ratings).
inline std::size_t examples_in(const DenseDataset& data) { return data.rows(); }
/// Number of examples (rows, or ratings).
inline std::size_t examples_in(const Ratings& data) { return data.size(); }

}  // namespace hogwild::detail
