// Predictions of a checkpoint's model, from the parameter layouts the models train with.
//
// Glossary: d = features, k = classes, W = parameters; softmax: feature j's k class weights
// are W[j k .. j k + k) and the bias is row d (the layout of src/models/softmax.cc for sparse
// and dense data alike); mlp: layer l is an n[l+1] x n[l] column-major matrix followed by its
// n[l+1] biases (src/models/mlp.cc); mf: user u's factors are row u, item i's row users + i,
// r = mean + u . v (src/models/factorisation.cc). z = logits.

#include "hogwild/predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <span>

#include "hogwild/error.h"
#include "hogwild/loss.h"
#include "hogwild/trainer.h"

namespace hogwild {
namespace {

// Class index of each label value; InputError for a label the model was not trained on.
class ClassIndex {
 public:
  ClassIndex(const std::vector<double>& labels, std::string_view source)
      : labels_(labels), source_(source) {
    for (std::size_t c = 0; c < labels.size(); ++c) index_[labels[c]] = c;
  }
  std::size_t operator()(double label, std::size_t example) const {
    const auto it = index_.find(label);
    if (it == index_.end()) {
      throw InputError(
          fmt::format("{}: expected labels among the {} training classes, found {} in example {}",
                      source_, labels_.size(), label, example + 1));
    }
    return it->second;
  }

 private:
  const std::vector<double>& labels_;
  std::string_view source_;
  std::map<double, std::size_t> index_;
};

// The softmax cross-entropy -log softmax(z)[y], computed from the logits (stable).
double cross_entropy(std::span<const float> z, std::size_t y) {
  const float top = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (std::size_t c = 0; c < z.size(); ++c) sum += std::exp(double{z[c]} - top);
  return std::log(sum) - (double{z[y]} - top);
}

// Accumulates a classifier's predictions from logits.
void classify(const Checkpoint& model, std::span<const float> z, double label, std::size_t i,
              const ClassIndex* index, Predictions& out, double& loss, std::size_t& correct) {
  const auto best = static_cast<std::size_t>(std::max_element(z.begin(), z.end()) - z.begin());
  out.values.push_back(model.labels[best]);
  if (index) {
    const std::size_t y = (*index)(label, i);
    loss += cross_entropy(z, y);
    correct += best == y;
  }
}

void finish_classifier(Predictions& out, bool labelled, double loss, std::size_t correct) {
  if (!labelled || out.values.empty()) return;
  const auto n = static_cast<double>(out.values.size());
  out.loss = loss / n;
  out.accuracy = static_cast<double>(correct) / n;
}

std::string_view name_of(const std::string& source) {
  return source.empty() ? std::string_view("data") : std::string_view(source);
}

}  // namespace

Predictions predict(const Checkpoint& model, const Dataset& data, bool labelled) {
  Predictions out;
  const std::size_t d = static_cast<std::size_t>(model.features);
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
  const std::size_t k = static_cast<std::size_t>(model.classes);
  const float* w = model.weights.data();
  const ClassIndex index(model.labels, name_of(data.source));
  std::vector<float> z(k);
  double loss = 0;
  std::size_t correct = 0;
  for (std::size_t i = 0; i < data.rows(); ++i) {
    const auto row = data.row(i);
    std::copy(w + d * k, w + (d + 1) * k, z.begin());
    for (std::size_t n = 0; n < row.indices.size(); ++n) {
      if (row.indices[n] >= d) continue;  // beyond the training dimension: ignored
      const float* wj = w + std::size_t{row.indices[n]} * k;
      for (std::size_t c = 0; c < k; ++c) z[c] += row.values[n] * wj[c];
    }
    classify(model, z, data.labels[i], i, labelled ? &index : nullptr, out, loss, correct);
  }
  finish_classifier(out, labelled, loss, correct);
  return out;
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
  const std::size_t k = static_cast<std::size_t>(model.classes);
  std::vector<std::size_t> width{d};
  if (model.model == "mlp") width.insert(width.end(), model.hidden.begin(), model.hidden.end());
  width.push_back(k);
  const ClassIndex index(model.labels, name_of(data.source));
  Predictions out;
  std::vector<float> a, next;
  double loss = 0;
  std::size_t correct = 0;
  for (std::size_t i = 0; i < data.rows(); ++i) {
    const auto x = data.row(i);
    a.assign(x.begin(), x.end());
    const float* w = model.weights.data();
    for (std::size_t l = 0; l + 1 < width.size(); ++l) {
      const std::size_t in = width[l];
      const std::size_t outs = width[l + 1];
      // Softmax: W is k x d column-major then the bias, the same as one MLP layer.
      const float* weights = w;
      const float* bias = w + in * outs;
      next.assign(bias, bias + outs);
      for (std::size_t j = 0; j < in; ++j) {
        const float aj = a[j];
        if (aj == 0.0f) continue;
        const float* column = weights + j * outs;
        for (std::size_t o = 0; o < outs; ++o) next[o] += column[o] * aj;
      }
      if (l + 2 < width.size()) {
        for (auto& v : next) v = std::max(v, 0.0f);
      }
      std::swap(a, next);
      w = bias + outs;
    }
    classify(model, a, static_cast<double>(data.labels[i]), i, labelled ? &index : nullptr, out,
             loss, correct);
  }
  finish_classifier(out, labelled, loss, correct);
  return out;
}

Predictions predict(const Checkpoint& model, const Ratings& data, bool labelled) {
  if (model.model != "mf") {
    throw InputError(fmt::format("{}: expected {} data for this {} model, found ratings",
                                 name_of(data.source), model.format == "idx" ? "IDX" : "LIBSVM",
                                 model.model));
  }
  const std::size_t r = static_cast<std::size_t>(model.rank);
  const auto users = static_cast<std::size_t>(model.users);
  const auto items = static_cast<std::size_t>(model.items);
  const auto mean = static_cast<float>(model.mean);
  Predictions out;
  double squared = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    double dot = 0;
    if (data.users[i] < users && data.items[i] < items) {
      const float* u = model.weights.data() + std::size_t{data.users[i]} * r;
      const float* v = model.weights.data() + (users + data.items[i]) * r;
      for (std::size_t f = 0; f < r; ++f) dot += double{u[f]} * v[f];
    }
    const double prediction = mean + dot;
    out.values.push_back(prediction);
    const double e = prediction - data.values[i];
    squared += e * e;
  }
  if (labelled && data.size() > 0) {
    const auto n = static_cast<double>(data.size());
    out.loss = 0.5 * squared / n;
    out.rmse = std::sqrt(squared / n);
  }
  return out;
}

}  // namespace hogwild
