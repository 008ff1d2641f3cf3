#pragma once

// A linear model's evaluation: its labels mapped to -1/+1, and the loss and accuracy of weights
// on a data set, summed in an order fixed whatever the threads (serial and simulated runs
// report the same losses to the last bit). The training kernel takes its losses through the
// same functions.

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/force_inline.h"
#include "engine/packed_rows.h"
#include "hogwild/dataset.h"
#include "hogwild/loss.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// The data set's file name, or `fallback` where it came from no file.
std::string_view source_name(const Dataset& data, std::string_view fallback);

/// A classifier's two label values, the one to train as -1 first. Classifiers train on -1/+1:
/// the smaller of two label values is negative; one class alone is positive when its value is
/// > 0 (so 0/1 and -1/+1 files both work). Throws InputError at a third value.
std::vector<float> binary_label_values(const Dataset& data);

/// The labels as trained: -1/+1 by `label_values` (the labels themselves where it is empty).
/// Throws InputError, naming the data set as `role` where it has no file name, at a label of
/// neither class.
std::vector<float> mapped_labels(const Dataset& data, std::span<const float> label_values,
                                 std::string_view role);

/// Adds nonzero k of `row` to the margin m: in double, features beyond w skipped (a test row
/// may hold features the training data does not; kBounded says none does).
template <bool kBounded, class Row>
HOGWILD_FORCE_INLINE inline void add_term(std::span<const float> w, const Row& row, std::size_t k,
                                          double& m) {
  const std::uint32_t j = row.indices[k];
  if (kBounded || j < w.size()) m += double{w[j]} * row.values[k];
}

/// The rows an evaluation reads: the data set's nonzeros with their indices as stored, or as the
/// run numbers its features (the weights then in that numbering too: the same products).
struct EvaluatedRows {
  const Dataset& data;
  const std::uint32_t* indices;
  explicit EvaluatedRows(const Dataset& d, const std::uint32_t* numbered = nullptr)
      : data(d), indices(numbered != nullptr ? numbered : d.indices.data()) {}
  SparseRow row(std::size_t i) const {
    const std::uint64_t begin = data.row_offsets[i];
    const std::size_t n = data.row_offsets[i + 1] - begin;
    return {{indices + begin, n}, {data.values.data() + begin, n}};
  }
  std::size_t count() const { return data.rows(); }
  std::size_t num_features() const { return data.num_features; }
};

/// Rows as PackedRows lays them out (visit_exact: the training rows, or the test rows packed
/// alike), for an evaluation: 16- or 32-bit indices and the data's own values, or none for
/// binary data, so fewer bytes than the data set's and the same products.
template <class Index, class Values>
struct PackedEvaluatedRows {
  /// One row: its indices and a view of its values.
  struct Row {
    std::span<const Index> indices;
    Values values;
  };
  const std::uint64_t* offsets;
  const Index* indices;
  Values values;
  std::size_t rows;
  std::size_t features;

  Row row(std::size_t i) const {
    const std::uint64_t begin = offsets[i];
    const std::size_t n = offsets[i + 1] - begin;
    return {{indices + begin, n}, from(begin)};
  }
  std::size_t count() const { return rows; }
  std::size_t num_features() const { return features; }

 private:
  Values from(std::uint64_t begin) const {
    if constexpr (std::is_same_v<Values, F32Values>) {
      return {values.at + begin};
    } else {
      return values;
    }
  }
};

/// Calls fn with the exact() packed rows of `data` (PackedEvaluatedRows of their layout);
/// returns what fn returns.
template <class Fn>
decltype(auto) with_packed_rows(const PackedRows& packed, const Dataset& data, Fn&& fn) {
  return packed.visit_exact([&](const auto* indices, auto values) {
    using Index = std::remove_cvref_t<decltype(*indices)>;
    return fn(PackedEvaluatedRows<Index, decltype(values)>{data.row_offsets.data(), indices, values,
                                                           data.rows(), data.num_features});
  });
}

/// The margins of the kMarginRows rows from `first`, each summed in its own index order (the
/// bits of one row at a time), but as independent chains the core overlaps: one row's chain of
/// dependent double additions alone made an evaluation pass slower than a training pass.
constexpr std::size_t kMarginRows = 4;
template <bool kBounded, class Rows>
std::array<double, kMarginRows> margins(std::span<const float> w, const Rows& data,
                                        std::size_t first) {
  std::array<decltype(data.row(first)), kMarginRows> rows;
  std::size_t common = SIZE_MAX;
  for (std::size_t r = 0; r < kMarginRows; ++r) {
    rows[r] = data.row(first + r);
    common = std::min(common, rows[r].indices.size());
  }
  std::array<double, kMarginRows> m{};
  for (std::size_t k = 0; k < common; ++k) {
    for (std::size_t r = 0; r < kMarginRows; ++r) add_term<kBounded>(w, rows[r], k, m[r]);
  }
  for (std::size_t r = 0; r < kMarginRows; ++r) {
    for (std::size_t k = common; k < rows[r].indices.size(); ++k) {
      add_term<kBounded>(w, rows[r], k, m[r]);
    }
  }
  return m;
}

/// One row's margin, summed in its index order.
template <bool kBounded, class Row>
double margin_of(std::span<const float> w, const Row& row) {
  double m = 0;
  for (std::size_t k = 0; k < row.indices.size(); ++k) add_term<kBounded>(w, row, k, m);
  return m;
}

/// The loss, objective (with l2) and accuracy of w on `rows` with mapped labels y.
template <class Loss, class Rows>
Evaluation evaluate_mapped(std::span<const float> w, double l2, const Rows& rows,
                           std::span<const float> y, tbb::task_arena& arena) {
  struct Sums {
    double loss = 0;
    std::size_t correct = 0;
    void add(double m, float label) {
      loss += Loss::value(m, label);
      // A margin that is not a number (diverged weights) predicts nothing: no example right.
      correct += !std::isnan(m) && (m >= 0 ? 1.0f : -1.0f) == label;
    }
  };
  // Rows in groups of kMarginRows, their losses added in row order.
  const auto sum_range = [&]<bool kBounded>(std::size_t begin, std::size_t end, Sums& acc) {
    std::size_t i = begin;
    for (; i + kMarginRows <= end; i += kMarginRows) {
      const auto m = margins<kBounded>(w, rows, i);
      for (std::size_t r = 0; r < kMarginRows; ++r) acc.add(m[r], y[i + r]);
    }
    for (; i < end; ++i) acc.add(margin_of<kBounded>(w, rows.row(i)), y[i]);
  };
  const bool bounded = rows.num_features() <= w.size();
  // Deterministic: the same split and order of sums whatever the threads and their timing, so
  // serial and simulated runs report the same losses to the last bit.
  const Sums sums = arena.execute([&] {
    return tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::size_t>(0, rows.count(), 1024), Sums{},
        [&](const tbb::blocked_range<std::size_t>& range, Sums acc) {
          if (bounded) {
            sum_range.template operator()<true>(range.begin(), range.end(), acc);
          } else {
            sum_range.template operator()<false>(range.begin(), range.end(), acc);
          }
          return acc;
        },
        [](Sums a, const Sums& b) {
          a.loss += b.loss;
          a.correct += b.correct;
          return a;
        });
  });
  Evaluation e;
  const double n = static_cast<double>(std::max<std::size_t>(1, rows.count()));
  e.loss = sums.loss / n;
  double norm2 = 0;
  for (const float v : w) norm2 += double{v} * v;
  e.objective = e.loss + 0.5 * l2 * norm2;
  if constexpr (Loss::kind != LossKind::kSquared) {
    e.accuracy = static_cast<double>(sums.correct) / n;
  }
  return e;
}

/// fn called with the loss type of `loss` (LogisticLoss, HingeLoss or SquaredLoss).
template <class Fn>
decltype(auto) dispatch_loss(LossKind loss, Fn&& fn) {
  switch (loss) {
    case LossKind::kLogistic:
      return fn(LogisticLoss{});
    case LossKind::kHinge:
      return fn(HingeLoss{});
    case LossKind::kSquared:
      break;
  }
  return fn(SquaredLoss{});
}

}  // namespace hogwild::detail
