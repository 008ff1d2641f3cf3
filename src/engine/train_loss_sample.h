#pragma once

// --train-loss-sample N: the training examples a run measures its training loss on, when not
// all of them. On large data a pass over every example after each epoch costs about as much as
// the epoch's training; a fixed random sample bounds that cost.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "hogwild/dataset.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/ratings.h"
#include "models/model.h"

namespace hogwild::detail {

/// The examples a training loss of `sample` examples out of `n` is measured on: a random choice
/// drawn from `seed`, in the data's order; empty when `sample` is 0 or at least `n` (every
/// example is measured, none copied).
std::vector<std::size_t> train_loss_rows(std::size_t n, std::size_t sample, std::uint64_t seed);

/// A copy of some of a model's examples with their targets, and the view a model computes on.
class ExamplesCopy {
 public:
  /// Copies the examples `rows` of `all`, in that order.
  ExamplesCopy(const Examples& all, std::span<const std::size_t> rows);
  ExamplesCopy(const ExamplesCopy&) = delete;  // the view points into this object
  ExamplesCopy& operator=(const ExamplesCopy&) = delete;
  /// The copied examples.
  const Examples& examples() const { return *view_; }

 private:
  std::variant<Dataset, DenseDataset, Ratings> data_;
  std::vector<std::int32_t> classes_;
  std::optional<Examples> view_;
};

}  // namespace hogwild::detail
