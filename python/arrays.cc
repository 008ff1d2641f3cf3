#include "arrays.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "hogwild/detail/huge_pages.h"
#include "hogwild/error.h"
#include "row_buffers.h"

namespace hogwild_python {
namespace {

// CSR arrays as given, in the caller's index and value types, copied a row at a time into the
// library's (uint32 indices, float values) and checked on the way.
template <class Index, class Value>
struct CsrView {
  const std::uint64_t* offsets;
  const Index* indices;
  const Value* values;
  std::size_t features;

  // Copies row i to `to_indices` and `to_values`; true when its indices increase and stay below
  // `features` and its values are finite as floats. A negative index becomes a large unsigned
  // one, beyond any `features`. Three branch-free passes.
  bool copy_row(std::size_t i, std::uint32_t* to_indices, float* to_values) const {
    using Unsigned = std::make_unsigned_t<Index>;
    const auto begin = offsets[i], count = offsets[i + 1] - offsets[i];
    const Index* from_indices = indices + begin;
    const Value* from_values = values + begin;
    bool valid = true;
    for (std::uint64_t k = 0; k < count; ++k) {
      const auto value = static_cast<float>(from_values[k]);
      valid &= std::isfinite(value);
      to_values[k] = value;
    }
    for (std::uint64_t k = 0; k < count; ++k) {
      const auto index = static_cast<Unsigned>(from_indices[k]);
      valid &= index < features;
      to_indices[k] = static_cast<std::uint32_t>(index);
    }
    for (std::uint64_t k = 1; k < count; ++k) {
      valid &= static_cast<Unsigned>(from_indices[k]) > static_cast<Unsigned>(from_indices[k - 1]);
    }
    return valid;
  }

  // Throws the InputError for the first bad entry of row i (which copy_row refused).
  [[noreturn]] void fail(std::size_t i, const std::string& name) const {
    using Unsigned = std::make_unsigned_t<Index>;
    for (auto k = offsets[i]; k < offsets[i + 1]; ++k) {
      if (!std::isfinite(values[k])) {
        throw hogwild::InputError(
            fmt::format("{}: row {}: expected a finite value, found {}", name, i, values[k]));
      }
      if (!std::isfinite(static_cast<float>(values[k]))) {
        throw hogwild::InputError(fmt::format(
            "{}: row {}: expected a value within float32's range, found {}", name, i, values[k]));
      }
      const auto index = static_cast<Unsigned>(indices[k]);
      if (index >= features || (k > offsets[i] && index <= static_cast<Unsigned>(indices[k - 1]))) {
        throw hogwild::InputError(
            fmt::format("{}: row {}: expected increasing column indices below {}, found {}", name,
                        i, features, indices[k]));
      }
    }
    throw hogwild::InputError(fmt::format("{}: row {}: expected a valid row", name, i));
  }
};

// Calls f with `a` as a C-contiguous array of T, converting it only when it is not one already.
template <class T, class F>
decltype(auto) as_array_of(const pybind11::handle& a, const std::string& what, F&& f) {
  const auto array = Array<T>::ensure(a);
  if (!array) {
    PyErr_Clear();  // ensure() leaves the conversion's error set
    throw hogwild::InputError(
        fmt::format("{}: expected a numeric array, found {}", what,
                    pybind11::str(pybind11::type::of(a)).cast<std::string>()));
  }
  return f(array);
}

// Calls f with `indices` as int32 or int64 (another type converted to int64) and
// `values` as float32 or float64 (another converted to float64): scipy's own index types and the
// usual value types reach the copy as they are, without a converted copy first.
template <class F>
decltype(auto) with_csr_types(const pybind11::array& indices, const pybind11::array& values,
                              const std::string& name, F&& f) {
  const auto with_values = [&](const auto& index_array) -> decltype(auto) {
    if (pybind11::isinstance<pybind11::array_t<float>>(values)) {
      return as_array_of<float>(values, name, [&](const auto& v) { return f(index_array, v); });
    }
    return as_array_of<double>(values, name, [&](const auto& v) { return f(index_array, v); });
  };
  if (pybind11::isinstance<pybind11::array_t<std::int32_t>>(indices)) {
    return as_array_of<std::int32_t>(indices, name, with_values);
  }
  return as_array_of<std::int64_t>(indices, name, with_values);
}

// How many rows ahead the copy asks for the storage offset and label slot of the row it will
// write: each is a cache miss of its own in a scattered order, which the loops of a row (75
// entries on the RCV1-like data) are too long for the processor to reach by itself.
constexpr std::size_t kPrefetchRows = 4;

template <class Index, class Value>
hogwild::Dataset copy_sparse(const Array<std::uint64_t>& indptr, const Array<Index>& indices,
                             const Array<Value>& values, const Array<float>& labels,
                             std::size_t features, bool intercept, const std::string& name,
                             const std::vector<std::size_t>& order) {
  const std::size_t rows = labels.size();
  const CsrView<Index, Value> csr{indptr.data(), indices.data(), values.data(), features};
  if (indptr.size() != rows + 1 || csr.offsets[0] != 0 ||
      csr.offsets[rows] != static_cast<std::uint64_t>(indices.size()) ||
      values.size() != indices.size()) {
    throw hogwild::InputError(fmt::format(
        "{}: expected CSR arrays of {} rows (indptr of {} entries from 0 to the {} nonzeros), "
        "found indptr of {} entries",
        name, rows, rows + 1, indices.size(), indptr.size()));
  }
  for (std::size_t i = 0; i < rows; ++i) {
    if (csr.offsets[i + 1] < csr.offsets[i]) {
      throw hogwild::InputError(
          fmt::format("{}: row {}: expected increasing indptr, found {} after {}", name, i,
                      csr.offsets[i + 1], csr.offsets[i]));
    }
  }
  const std::size_t extra = intercept ? 1 : 0;
  hogwild::Dataset data;
  take_row_buffers(data, indices.size() + rows * extra);
  data.num_features = features + extra;
  data.source = name;
  data.labels.resize(rows);
  data.row_offsets.resize(rows + 1);
  data.row_offsets[0] = 0;  // kept storage holds another copy's offsets
  // stored[i]: where row i as given is stored.
  std::vector<std::size_t> stored(order.empty() ? 0 : rows);
  for (std::size_t at = 0; at < order.size(); ++at) stored[order[at]] = at;
  const auto place = [&](std::size_t i) { return order.empty() ? i : stored[i]; };
  for (std::size_t at = 0; at < rows; ++at) {
    const std::size_t i = order.empty() ? at : order[at];
    data.row_offsets[at + 1] = data.row_offsets[at] + (csr.offsets[i + 1] - csr.offsets[i]) + extra;
  }
  hogwild::detail::resize_on_huge_pages(data.indices, data.row_offsets[rows]);
  hogwild::detail::resize_on_huge_pages(data.values, data.row_offsets[rows]);
  // Rows are copied and checked in parallel, read in the order given (a sequential read of the
  // caller's arrays, which sit on small pages) and written to their places in the copy (on huge
  // pages, where scattered writes miss the TLB less). On a bad row, the first one as given is
  // reported.
  std::atomic<bool> bad{false};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 1024), [&](const auto& range) {
    for (std::size_t i = range.begin(); i < range.end(); ++i) {
      if (i + kPrefetchRows < rows) {
        const std::size_t ahead = place(i + kPrefetchRows);
        __builtin_prefetch(&data.row_offsets[ahead]);
        __builtin_prefetch(&data.labels[ahead], 1);
      }
      const std::size_t at = place(i);
      const auto to = data.row_offsets[at];
      if (!csr.copy_row(i, data.indices.data() + to, data.values.data() + to)) {
        bad = true;
        return;
      }
      if (intercept) {
        data.indices[data.row_offsets[at + 1] - 1] = static_cast<std::uint32_t>(features);
        data.values[data.row_offsets[at + 1] - 1] = 1.0f;
      }
      data.labels[at] = labels.data()[i];
    }
  });
  if (bad) {
    std::vector<std::uint32_t> row_indices;
    std::vector<float> row_values;
    for (std::size_t i = 0; i < rows; ++i) {
      const auto length = csr.offsets[i + 1] - csr.offsets[i];
      row_indices.resize(length);
      row_values.resize(length);
      if (!csr.copy_row(i, row_indices.data(), row_values.data())) csr.fail(i, name);
    }
  }
  return data;
}

}  // namespace

hogwild::Dataset sparse_data(const Array<std::uint64_t>& indptr, const pybind11::array& indices,
                             const pybind11::array& values, const Array<float>& labels,
                             std::size_t features, bool intercept, const std::string& name,
                             const std::vector<std::size_t>& order) {
  return with_csr_types(indices, values, name,
                        [&](const auto& typed_indices, const auto& typed_values) {
                          return copy_sparse(indptr, typed_indices, typed_values, labels, features,
                                             intercept, name, order);
                        });
}

hogwild::DenseDataset dense_data(const Array<float>& features, const Array<std::int32_t>& labels,
                                 const std::string& name, const std::vector<std::size_t>& order) {
  if (features.ndim() != 2 || static_cast<std::size_t>(features.shape(0)) != labels.size()) {
    throw hogwild::InputError(fmt::format("{}: expected a matrix of {} rows, found {} dimensions",
                                          name, labels.size(), features.ndim()));
  }
  hogwild::DenseDataset data;
  data.cols = static_cast<std::size_t>(features.shape(1));
  data.shape = {data.cols};
  data.source = name;
  const std::size_t rows = labels.size(), cols = data.cols;
  const float* x = features.data();
  hogwild::detail::resize_on_huge_pages(data.features, features.size());
  data.labels.resize(rows);
  // Rows are checked and copied in parallel; on a non-finite value, the first row as given is
  // reported.
  std::atomic<bool> bad{false};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 256), [&](const auto& range) {
    for (std::size_t stored = range.begin(); stored < range.end(); ++stored) {
      const std::size_t i = order.empty() ? stored : order[stored];
      const float* row = x + i * cols;
      if (!std::all_of(row, row + cols, [](float v) { return std::isfinite(v); })) bad = true;
      std::copy_n(row, cols, data.features.data() + stored * cols);
      data.labels[stored] = labels.data()[i];
    }
  });
  for (std::size_t i = 0; bad && i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      if (!std::isfinite(x[i * cols + j])) {
        throw hogwild::InputError(
            fmt::format("{}: row {}, column {}: expected a finite value, "
                        "found {}",
                        name, i, j, x[i * cols + j]));
      }
    }
  }
  return data;
}

hogwild::Ratings ratings_data(const Array<std::uint32_t>& users, const Array<std::uint32_t>& items,
                              const Array<float>& values, const std::string& name,
                              const std::vector<std::size_t>& order) {
  if (users.size() != values.size() || items.size() != values.size()) {
    throw hogwild::InputError(fmt::format("{}: expected {} users and items, found {} and {}", name,
                                          values.size(), users.size(), items.size()));
  }
  hogwild::Ratings data;
  data.source = name;
  for (std::size_t stored = 0; stored < values.size(); ++stored) {
    const std::size_t i = order.empty() ? stored : order[stored];
    data.append(users.data()[i], items.data()[i], values.data()[i]);
  }
  return data;
}

}  // namespace hogwild_python
