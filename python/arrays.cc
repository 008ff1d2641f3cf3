#include "arrays.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "hogwild/detail/huge_pages.h"
#include "hogwild/error.h"

namespace hogwild_python {
namespace {

// CSR arrays as given, for checking one row at a time.
struct CsrView {
  const std::uint64_t* offsets;
  const std::uint32_t* indices;
  const float* values;
  std::size_t features;

  // True when row i's indices increase and stay below `features` and its values are finite.
  bool valid(std::size_t i) const {
    for (auto k = offsets[i]; k < offsets[i + 1]; ++k) {
      if (indices[k] >= features || (k > offsets[i] && indices[k] <= indices[k - 1]) ||
          !std::isfinite(values[k])) {
        return false;
      }
    }
    return true;
  }

  // Throws the InputError for the first bad entry of row i (which valid(i) refused).
  [[noreturn]] void fail(std::size_t i, const std::string& name) const {
    for (auto k = offsets[i]; k < offsets[i + 1]; ++k) {
      if (!std::isfinite(values[k])) {
        throw hogwild::InputError(
            fmt::format("{}: row {}: expected a finite value, found {}", name, i, values[k]));
      }
      if (indices[k] >= features || (k > offsets[i] && indices[k] <= indices[k - 1])) {
        throw hogwild::InputError(
            fmt::format("{}: row {}: expected increasing column indices below {}, found {}", name,
                        i, features, indices[k]));
      }
    }
    throw hogwild::InputError(fmt::format("{}: row {}: expected a valid row", name, i));
  }
};

}  // namespace

hogwild::Dataset sparse_data(const Array<std::uint64_t>& indptr,
                             const Array<std::uint32_t>& indices, const Array<float>& values,
                             const Array<float>& labels, std::size_t features, bool intercept,
                             const std::string& name, const std::vector<std::size_t>& order) {
  const std::size_t rows = labels.size();
  const CsrView csr{indptr.data(), indices.data(), values.data(), features};
  if (indptr.size() != rows + 1 || csr.offsets[0] != 0 || csr.offsets[rows] != indices.size() ||
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
  const auto given = [&](std::size_t stored) { return order.empty() ? stored : order[stored]; };
  const std::size_t extra = intercept ? 1 : 0;
  hogwild::Dataset data;
  data.num_features = features + extra;
  data.source = name;
  data.labels.resize(rows);
  data.row_offsets.resize(rows + 1);
  for (std::size_t stored = 0; stored < rows; ++stored) {
    const std::size_t i = given(stored);
    data.row_offsets[stored + 1] =
        data.row_offsets[stored] + (csr.offsets[i + 1] - csr.offsets[i]) + extra;
  }
  hogwild::detail::resize_on_huge_pages(data.indices, data.row_offsets[rows]);
  hogwild::detail::resize_on_huge_pages(data.values, data.row_offsets[rows]);
  // Rows are checked and copied in parallel; on a bad row, the first one as given is reported.
  std::atomic<bool> bad{false};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 1024), [&](const auto& range) {
    for (std::size_t stored = range.begin(); stored < range.end(); ++stored) {
      const std::size_t i = given(stored);
      if (!csr.valid(i)) {
        bad = true;
        return;
      }
      const auto begin = csr.offsets[i], end = csr.offsets[i + 1];
      const auto to = data.row_offsets[stored];
      std::copy(csr.indices + begin, csr.indices + end, data.indices.begin() + to);
      std::copy(csr.values + begin, csr.values + end, data.values.begin() + to);
      if (intercept) {
        data.indices[data.row_offsets[stored + 1] - 1] = static_cast<std::uint32_t>(features);
        data.values[data.row_offsets[stored + 1] - 1] = 1.0f;
      }
      data.labels[stored] = labels.data()[i];
    }
  });
  if (bad) {
    for (std::size_t i = 0; i < rows; ++i) {
      if (!csr.valid(i)) csr.fail(i, name);
    }
  }
  return data;
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
