#include "engine/linear_evaluation.h"

#include <fmt/format.h>

#include <set>

#include "data/two_values.h"
#include "hogwild/error.h"

namespace hogwild {
namespace detail {

std::string_view source_name(const Dataset& data, std::string_view fallback) {
  return data.source.empty() ? fallback : std::string_view(data.source);
}

std::vector<float> binary_label_values(const Dataset& data) {
  std::set<float> distinct;
  // Two values in one pass (two_values); a label of a third is looked for afterwards.
  const auto two = data.rows() > 0 ? detail::two_values(data.labels) : detail::TwoValues{};
  const bool found = data.rows() > 0 && two.cover(data.rows());
  if (found) {
    distinct.insert(two.first);
    if (two.second_count > 0) distinct.insert(two.second);
  }
  for (std::size_t i = 0; !found && i < data.rows(); ++i) {
    const float y = data.labels[i];
    if (distinct.insert(y).second && distinct.size() > 2) {
      distinct.erase(y);
      throw InputError(fmt::format(
          "{}: expected two label classes for a binary model, found a third, {}, in example {} "
          "(after {} and {})",
          source_name(data, "training data"), y, i + 1, *distinct.begin(), *distinct.rbegin()));
    }
  }
  if (distinct.size() == 2) return {*distinct.begin(), *distinct.rbegin()};
  const float only = *distinct.begin();
  return only > 0 ? std::vector<float>{-only, only} : std::vector<float>{only, 1.0f};
}

std::vector<float> mapped_labels(const Dataset& data, std::span<const float> label_values,
                                 std::string_view role) {
  if (label_values.empty()) return data.labels;
  std::vector<float> y(data.rows());
  // Without a branch per label (two classes in random order); a label of neither class is
  // looked for afterwards.
  std::size_t known = 0;
  for (std::size_t i = 0; i < data.rows(); ++i) {
    const bool positive = data.labels[i] == label_values[1];
    known += std::size_t{positive} + std::size_t{data.labels[i] == label_values[0]};
    y[i] = positive ? 1.0f : -1.0f;
  }
  for (std::size_t i = 0; known != data.rows() && i < data.rows(); ++i) {
    if (data.labels[i] != label_values[1] && data.labels[i] != label_values[0]) {
      throw InputError(fmt::format(
          "{}: expected labels {} or {} (the training classes), found {} in example {}",
          source_name(data, role), label_values[0], label_values[1], data.labels[i], i + 1));
    }
  }
  return y;
}

}  // namespace detail

using detail::binary_label_values;
using detail::dispatch_loss;
using detail::evaluate_mapped;
using detail::EvaluatedRows;
using detail::mapped_labels;

std::vector<float> label_values(LossKind loss, const Dataset& data) {
  if (!is_classifier(loss) || data.rows() == 0) return {};
  return binary_label_values(data);
}

Evaluation evaluate(LossKind loss, std::span<const float> weights, double l2, const Dataset& data,
                    std::span<const float> label_values, int threads) {
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  const std::vector<float> y = mapped_labels(data, label_values, "data");
  return dispatch_loss(loss, [&](auto loss_type) {
    return evaluate_mapped<decltype(loss_type)>(weights, l2, EvaluatedRows(data), y, arena);
  });
}

}  // namespace hogwild
