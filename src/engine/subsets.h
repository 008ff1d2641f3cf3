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

/// Number of examples (rows, or ratings).
inline std::size_t examples_in(const Dataset& data) { return data.rows(); }
/// Number of examples (rows, or ratings).
inline std::size_t examples_in(const DenseDataset& data) { return data.rows(); }
/// Number of examples (rows, or ratings).
inline std::size_t examples_in(const Ratings& data) { return data.size(); }

}  // namespace hogwild::detail
