#pragma once

// Class labels as the softmax and MLP models see them: class c is the c-th smallest distinct label
// value of the training data; training, evaluation and prediction map labels the same way.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include "hogwild/error.h"

namespace hogwild::detail {

/// The distinct values of `labels`, increasing: the model's classes.
template <class Label>
std::vector<double> class_values(const std::vector<Label>& labels) {
  std::vector<double> values(labels.begin(), labels.end());
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

/// Each example's class index among `classes`; InputError naming `source` and the example for a
/// label that is not one of them.
template <class Label>
std::vector<std::int32_t> class_indices(const std::vector<Label>& labels,
                                        const std::vector<double>& classes,
                                        std::string_view source) {
  std::map<double, std::int32_t> index;
  for (std::size_t c = 0; c < classes.size(); ++c) index[classes[c]] = static_cast<std::int32_t>(c);
  std::vector<std::int32_t> y(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto it = index.find(static_cast<double>(labels[i]));
    if (it == index.end()) {
      throw InputError(
          fmt::format("{}: expected labels among the {} training classes, found {} in example {}",
                      source, classes.size(), labels[i], i + 1));
    }
    y[i] = it->second;
  }
  return y;
}

}  // namespace hogwild::detail
