#pragma once

#include <optional>
#include <vector>

#include "hogwild/checkpoint.h"
#include "hogwild/dataset.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/ratings.h"

namespace hogwild {

/// A model's predictions on a dataset, and how they compare with its labels.
struct Predictions {
  /// Per example: the predicted label value (classifiers, in the training data's labels) or
  /// the predicted value (squared loss, factorisation).
  std::vector<double> values;
  /// Per example, binary models only: the probability of the positive label (logistic) or the
  /// margin w.x (hinge). Empty for the others.
  std::vector<double> scores;
  /// Per example, binary models only: the margin w.x (its sign is the prediction).
  std::vector<double> margins;
  /// Softmax and MLP models: each class's score (its logit) per example, `classes` values per
  /// example in class-index order; the class probabilities are their softmax.
  std::vector<double> class_scores;
  std::optional<double> loss;      ///< mean loss against the labels, when they are known
  std::optional<double> accuracy;  ///< classifiers with labels: fraction predicted correctly
  std::optional<double> rmse;      ///< squared loss and factorisation with labels
};

/// Predicts with a linear (logistic, hinge, squared) or softmax model trained on LIBSVM data.
/// Features beyond the model's dimension are ignored, as in training. With `labelled`, the
/// labels must be values the model was trained on (InputError names the example otherwise).
Predictions predict(const Checkpoint& model, const Dataset& data, bool labelled = true);

/// Predicts with a softmax or MLP model trained on IDX data; the examples must have the
/// model's number of features. Without `labelled` the labels are ignored.
Predictions predict(const Checkpoint& model, const DenseDataset& data, bool labelled = true);

/// Predicts ratings with a factorisation model: the training mean plus u . v; a user or item
/// the model never saw contributes no factor (the prediction is the training mean).
Predictions predict(const Checkpoint& model, const Ratings& data, bool labelled = true);

}  // namespace hogwild
