#pragma once

#include <cstddef>
#include <cstdint>

#include "hogwild/dataset.h"

namespace hogwild {

/// Parameters of the click-through-rate-like generator: one-hot categorical fields, hashed.
struct CtrGeneratorConfig {
  std::size_t rows = 1000000;  ///< training examples
  std::size_t test_rows = 0;   ///< test examples drawn from the same distribution
  /// Categorical fields, one active category each per row (Criteo's display-ads data has 26).
  std::size_t fields = 26;
  /// Categories of the largest field; field f of F (0-based) has about
  /// max_categories^((f + 1) / F), so cardinalities run from a handful to this, log-spaced.
  std::size_t max_categories = 10000000;
  double zipf = 1.1;               ///< power-law exponent of category frequencies in a field
  std::size_t features = 4194304;  ///< hashed dimension (2^22): (field, category) -> index
  double positive_rate = 0.05;     ///< mean click probability (the labels' +1 share)
  double signal = 1.5;             ///< standard deviation of the planted logit over rows
  std::uint64_t seed = 1;          ///< same seed, same data (independent of thread count)
};

/// Generated training and test sets and the planted model's intercept.
struct CtrProblem {
  Dataset train;      ///< `rows` examples, labels in {-1, +1}, values 1
  Dataset test;       ///< `test_rows` examples
  double bias = 0.0;  ///< the planted logit's intercept, set so clicks come at `positive_rate`
};

/// Number of categories of field `field` (0-based) under `config`: max_categories^((f+1)/F),
/// rounded, at least 2.
std::size_t ctr_field_categories(const CtrGeneratorConfig& config, std::size_t field);

/// Generates CTR-like data: per row, one category per field drawn from a power law over the
/// field's categories (a bounded Pareto over ranks, floored), each (field, category) hashed to
/// one of `features` indices (colliding pairs add up, as a feature hasher's do), value 1; the
/// label is +1 with probability sigmoid(bias + the sum of the row's planted category weights),
/// the weights normal with variance signal^2 / fields, and the bias solved so that the
/// training rows' mean probability is `positive_rate`. Throws InputError when the
/// configuration is out of range.
CtrProblem generate_ctr(const CtrGeneratorConfig& config);

}  // namespace hogwild
