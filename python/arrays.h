#pragma once

// numpy arrays as the library's datasets: copied into its element types, checked as the file
// readers check their input, and stored in a given order.

#include <pybind11/numpy.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hogwild/dataset.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/ratings.h"

namespace hogwild_python {

/// A C-contiguous array of T; other arrays are converted on the way in.
template <class T>
using Array = pybind11::array_t<T, pybind11::array::c_style | pybind11::array::forcecast>;

/// Rows in CSR form as a Dataset of `features` columns, checked as the LIBSVM reader checks a
/// file: indices strictly increasing within a row and below `features`, values finite as floats
/// (InputError "NAME: row I: expected ..., found ...", I the first bad row as given). Indices
/// may be int32 or int64 and values float32 or float64, as scipy holds them: each is
/// converted in the one parallel copy (other types are converted to int64 and float64 first). With
/// `intercept`, every row gets one more feature, index `features`, of value 1. Rows are stored in
/// `order` (the i-th stored is the order[i]-th given), as given when it is empty.
hogwild::Dataset sparse_data(const Array<std::uint64_t>& indptr, const pybind11::array& indices,
                             const pybind11::array& values, const Array<float>& labels,
                             std::size_t features, bool intercept, const std::string& name,
                             const std::vector<std::size_t>& order = {});

/// A row-major matrix and integer class labels as a DenseDataset, its rows stored in `order`.
hogwild::DenseDataset dense_data(const Array<float>& features, const Array<std::int32_t>& labels,
                                 const std::string& name,
                                 const std::vector<std::size_t>& order = {});

/// (user, item, rating) triplets as Ratings, stored in `order`.
hogwild::Ratings ratings_data(const Array<std::uint32_t>& users, const Array<std::uint32_t>& items,
                              const Array<float>& values, const std::string& name,
                              const std::vector<std::size_t>& order = {});

}  // namespace hogwild_python
