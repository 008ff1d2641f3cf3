#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hogwild/dataset.h"

namespace hogwild {

/// Parameters of the RCV1-like sparse classification generator (binary, or text-like multiclass).
struct SparseGeneratorConfig {
  std::size_t rows = 100000;        ///< training examples
  std::size_t test_rows = 0;        ///< test examples drawn from the same distribution
  std::size_t features = 47236;     ///< dimension (RCV1 has 47,236)
  std::size_t nnz_per_row = 75;     ///< distinct nonzeros per row (at most `features`)
  double zipf = 1.0;                ///< feature frequency ~ 1/(rank+1)^zipf; 0 is uniform
  double label_noise = 0.05;        ///< probability of flipping each label
  double hyperplane_density = 0.5;  ///< fraction of features with a nonzero hidden weight
  std::uint64_t seed = 1;           ///< same seed, same data (independent of thread count)
  /// Label classes: 2 gives labels -1/+1 (one hidden hyperplane); K > 2 gives 0..K-1, the class
  /// whose hidden hyperplane (one per class) has the largest margin.
  std::size_t classes = 2;
  bool normalize = true;  ///< scale each row to unit L2 norm
  bool counts = false;    ///< term counts as values (1, 2, 3 ...) instead of tf-idf weights
  /// Real-valued targets instead of labels: the hidden hyperplane's margin scaled to unit
  /// variance over the training rows, plus Gaussian noise of standard deviation `label_noise`.
  bool regression = false;
};

/// Generated training and test sets plus the hidden hyperplanes that labelled them.
struct SparseProblem {
  Dataset train;  ///< `rows` examples, labels in {-1, +1} (2 classes) or 0..classes-1
  Dataset test;   ///< `test_rows` examples
  /// The planted hyperplane (2 classes), or one per class, class c at [c * features, (c + 1) *
  /// features).
  std::vector<float> hidden_weights;
};

/// Generates RCV1-like data: each row has `nnz_per_row` distinct features drawn from a
/// power-law over feature ranks, positive tf-idf-like values (or term counts), L2-normalised
/// unless asked otherwise; its label is the sign of the hidden sparse hyperplane's margin
/// (2 classes) or the class of the largest margin, replaced with probability `label_noise` (by
/// the other sign, or another class drawn uniformly), or with `regression` its standardised
/// margin plus Gaussian noise. Throws InputError when the configuration
/// is out of range.
SparseProblem generate_sparse(const SparseGeneratorConfig& config);

}  // namespace hogwild
