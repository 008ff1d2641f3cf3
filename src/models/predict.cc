// Predictions of a checkpoint's model. Linear models use the linear evaluation; softmax, MLP
// and factorisation build the model from the checkpoint's shape and run its forward pass, the
// one training evaluates with (src/models/model.h), over the data to predict.

#include "hogwild/predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <span>

#include "hogwild/error.h"
#include "hogwild/loss.h"
#include "hogwild/trainer.h"
#include "models/classes.h"
#include "models/model.h"

namespace hogwild {
namespace {

// Each example's class index among the model's classes (0 for every example when `labelled` is
// false).
template <class Labels>
std::vector<std::int32_t> classes_of(const Checkpoint& model, const Labels& labels, bool labelled,
                                     std::string_view source) {
  if (!labelled) return std::vector<std::int32_t>(labels.size(), 0);
  return detail::class_indices(labels, model.labels, source);
}

// The model's outputs and, with labels, its evaluation, over all its training examples (the
// data to predict), a block at a time: classifiers predict the label of the arg-max class.
Predictions predict_with(const Checkpoint& checkpoint, const detail::Model& model,
                         const detail::Examples& data, bool labelled) {
  constexpr std::size_t kBlock = 4096;
  const std::size_t n = data.size();
  const std::size_t k = model.output_width();
  const float* w = checkpoint.weights.data();
  Predictions p;
  std::vector<double> out;
  detail::EvalSums sums;
  for (std::size_t begin = 0; begin < n; begin += kBlock) {
    const std::size_t end = std::min(n, begin + kBlock);
    out.resize((end - begin) * k);
    model.outputs(data, w, begin, end, out.data());
    if (model.classifier()) p.class_scores.insert(p.class_scores.end(), out.begin(), out.end());
    for (std::size_t i = 0; i < end - begin; ++i) {
      const double* o = out.data() + i * k;
      p.values.push_back(
          model.classifier()
              ? checkpoint.labels[static_cast<std::size_t>(std::max_element(o, o + k) - o)]
              : *o);
    }
    if (labelled) sums += model.evaluate(data, w, begin, end);
  }
  if (!labelled || n == 0) return p;
  const Evaluation e = sums.mean(n, model.classifier());
  p.loss = e.loss;
  p.accuracy = e.accuracy;
  p.rmse = e.rmse;
  return p;
}

std::string_view name_of(const std::string& source) {
  return source.empty() ? std::string_view("data") : std::string_view(source);
}

// The rows with the constant feature of an intercept model appended: index features - 1, value
// 1. Features at that index or beyond are beyond the model's input and ignored, as a plain
// model ignores those beyond its dimension (rows that carry the constant already keep one).
Dataset with_intercept_feature(const Dataset& data, std::size_t features) {
  const auto bias = static_cast<std::uint32_t>(features - 1);
  Dataset out;
  out.source = data.source;
  out.num_features = features;
  out.labels = data.labels;
  out.row_offsets.reserve(data.rows() + 1);
  out.indices.reserve(data.nnz() + data.rows());
  out.values.reserve(data.nnz() + data.rows());
  for (std::size_t i = 0; i < data.rows(); ++i) {
    const SparseRow row = data.row(i);
    const auto kept = static_cast<std::size_t>(
        std::lower_bound(row.indices.begin(), row.indices.end(), bias) - row.indices.begin());
    out.indices.insert(out.indices.end(), row.indices.begin(), row.indices.begin() + kept);
    out.values.insert(out.values.end(), row.values.begin(), row.values.begin() + kept);
    out.indices.push_back(bias);
    out.values.push_back(1.0f);
    out.row_offsets.push_back(out.indices.size());
  }
  return out;
}

}  // namespace

Predictions predict(const Checkpoint& model, const Dataset& data, bool labelled) {
  if (model.intercept && model.features > 0) {
    Checkpoint plain = model;
    plain.intercept = false;
    return predict(plain, with_intercept_feature(data, model.features), labelled);
  }
  Predictions out;
  if (model.model == "logistic" || model.model == "hinge" || model.model == "squared") {
    const LossKind loss = parse_loss(model.model);
    const std::span<const float> w(model.weights);
    for (std::size_t i = 0; i < data.rows(); ++i) {
      const auto row = data.row(i);
      double m = 0;
      for (std::size_t k = 0; k < row.indices.size(); ++k) {
        if (row.indices[k] < w.size()) m += double{w[row.indices[k]]} * row.values[k];
      }
      if (loss == LossKind::kSquared) {
        out.values.push_back(m);
      } else {
        out.values.push_back(m > 0 ? model.labels[1] : model.labels[0]);
        out.scores.push_back(loss == LossKind::kLogistic ? 1 / (1 + std::exp(-m)) : m);
        out.margins.push_back(m);
      }
    }
    if (labelled) {
      const std::vector<float> label_values(model.labels.begin(), model.labels.end());
      const Evaluation e = evaluate(loss, w, 0.0, data, label_values, 1);
      out.loss = e.loss;
      if (is_classifier(loss)) {
        out.accuracy = e.accuracy;
      } else {
        out.rmse = std::sqrt(2 * e.loss);
      }
    }
    return out;
  }
  if (model.model != "softmax" || model.format != "libsvm") {
    throw InputError(
        fmt::format("{}: expected IDX data for this {} model (trained on {}), found "
                    "LIBSVM data",
                    name_of(data.source), model.model, model.format));
  }
  const auto y = classes_of(model, data.labels, labelled, name_of(data.source));
  return predict_with(model, *detail::make_model(model, 0), detail::Examples(data, y), labelled);
}

Predictions predict(const Checkpoint& model, const DenseDataset& data, bool labelled) {
  if ((model.model != "softmax" && model.model != "mlp") || model.format != "idx") {
    throw InputError(fmt::format("{}: expected {} data for this {} model, found IDX data",
                                 name_of(data.source),
                                 model.format == "ratings" ? "ratings" : "LIBSVM", model.model));
  }
  const std::size_t d = static_cast<std::size_t>(model.features);
  if (data.cols != d) {
    throw InputError(fmt::format("{}: expected {} features per example (as the model), found {}",
                                 name_of(data.source), d, data.cols));
  }
  const auto y = classes_of(model, data.labels, labelled, name_of(data.labels_name()));
  return predict_with(model, *detail::make_model(model, 0), detail::Examples(data, y), labelled);
}

Predictions predict(const Checkpoint& model, const Ratings& data, bool labelled) {
  if (model.model != "mf") {
    throw InputError(fmt::format("{}: expected {} data for this {} model, found ratings",
                                 name_of(data.source), model.format == "idx" ? "IDX" : "LIBSVM",
                                 model.model));
  }
  return predict_with(model, *detail::make_model(model, 0), detail::Examples(data), labelled);
}

}  // namespace hogwild
