#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hogwild/dataset.h"

namespace hogwild {

/// Parameters of the RCV1-like sparse binary classification generator.
struct SparseGeneratorConfig {
  std::size_t rows = 100000;        ///< training examples
  std::size_t test_rows = 0;        ///< test examples drawn from the same distribution
  std::size_t features = 47236;     ///< dimension (RCV1 has 47,236)
  std::size_t nnz_per_row = 75;     ///< distinct nonzeros per row (at most `features`)
  double zipf = 1.0;                ///< feature frequency ~ 1/(rank+1)^zipf; 0 is uniform
  double label_noise = 0.05;        ///< probability of flipping each label
  double hyperplane_density = 0.5;  ///< fraction of features with a nonzero hidden weight
  std::uint64_t seed = 1;           ///< same seed, same data (independent of thread count)
};

/// Generated training and test sets plus the hidden hyperplane that labelled them.
struct SparseProblem {
  Dataset train;                      ///< `rows` examples, labels in {-1, +1}
  Dataset test;                       ///< `test_rows` examples
  std::vector<float> hidden_weights;  ///< the planted hyperplane
};

/// Generates RCV1-like data: each row has `nnz_per_row` distinct features drawn from a
/// power-law over feature ranks, positive tf-idf-like values, L2-normalised; its label is the
/// sign of the hidden sparse hyperplane's margin, flipped with probability `label_noise`.
/// Throws InputError when the configuration is out of range.
SparseProblem generate_sparse(const SparseGeneratorConfig& config);

}  // namespace hogwild
