#pragma once

// Models trained by the window kernel (engine/window_kernel.cc): multinomial softmax regression on
// sparse or dense features, a multilayer perceptron on dense features, and matrix
// factorisation of ratings. A model is its parameter layout and its maths: built from its shape
// alone, it takes the examples per call, so training, evaluation and prediction (predict.cc)
// run the one forward pass. Every parameter of a model lives in one ParamStore buffer.
//
// Sparse-gradient models (sparse softmax, factorisation) lay their parameters out as rows of
// `row_width()` floats: the trainer gathers the rows a minibatch touches (read under the
// policy), the model computes on the gathered copy, and the optimiser writes back only those
// rows. Dense-gradient models (dense softmax, MLP) read all parameters and write all of them.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <variant>
#include <vector>

#include "engine/prefetch.h"
#include "hogwild/checkpoint.h"
#include "hogwild/dataset.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/ratings.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// Sums over a range of examples, reduced across evaluation tasks.
struct EvalSums {
  double loss = 0;           ///< sum of per-example losses (no regulariser)
  double squared_error = 0;  ///< regression: sum of squared errors
  std::size_t correct = 0;   ///< classifiers: examples whose arg-max class is the label
  /// Adds another range's sums.
  EvalSums& operator+=(const EvalSums& o) {
    loss += o.loss;
    squared_error += o.squared_error;
    correct += o.correct;
    return *this;
  }
  /// The means over `n` examples: the loss, and the accuracy (classifiers) or the RMSE.
  Evaluation mean(std::size_t n, bool classifier) const {
    const double count = static_cast<double>(std::max<std::size_t>(1, n));
    Evaluation e;
    e.loss = loss / count;
    if (classifier) {
      e.accuracy = static_cast<double>(correct) / count;
    } else {
      e.rmse = std::sqrt(squared_error / count);
    }
    return e;
  }
};

/// The examples a model computes on, passed per call: LIBSVM rows, dense rows or ratings, and
/// each example's class index (classifiers; empty for ratings).
struct Examples {
  /// LIBSVM rows with class indices `y`.
  Examples(const Dataset& rows, std::span<const std::int32_t> y)
      : data(&rows), classes(y), count(rows.rows()) {}
  /// Dense rows with class indices `y`.
  Examples(const DenseDataset& rows, std::span<const std::int32_t> y)
      : data(&rows), classes(y), count(rows.rows()) {}
  /// Ratings, their own targets.
  explicit Examples(const Ratings& ratings) : data(&ratings), count(ratings.size()) {}

  std::variant<const Dataset*, const DenseDataset*, const Ratings*> data;
  std::span<const std::int32_t> classes;
  std::size_t count;
  /// Number of examples.
  std::size_t size() const { return count; }
  /// The sparse rows (sparse softmax).
  const Dataset& sparse() const { return *std::get<const Dataset*>(data); }
  /// The dense rows (dense softmax, MLP).
  const DenseDataset& dense() const { return *std::get<const DenseDataset*>(data); }
  /// The ratings (factorisation).
  const Ratings& ratings() const { return *std::get<const Ratings*>(data); }
  /// Example i's class index (classifiers) or rating.
  double target(std::size_t i) const {
    return classes.empty() ? double{ratings().values[i]} : static_cast<double>(classes[i]);
  }
};

/// The parameters a gradient is computed at: all of them (dense), or the gathered rows.
struct ParamView {
  const float* values = nullptr;        ///< dense: all parameters; sparse: gathered rows
  const std::int32_t* slot = nullptr;   ///< sparse: slot of each row in values (else null)
  std::size_t width = 0;                ///< floats per row (sparse)
  std::span<const std::uint32_t> rows;  ///< sparse: the gathered rows, in slot order
  /// Row r's parameters (sparse models).
  const float* row(std::size_t r) const {
    return values + static_cast<std::size_t>(slot[r]) * width;
  }
};

/// A model's per-worker scratch space.
class Workspace {
 public:
  virtual ~Workspace() = default;
};

/// The interface the window kernel drives: virtual per minibatch, never per coordinate.
class Model {
 public:
  virtual ~Model() = default;
  /// Number of parameters.
  virtual std::size_t num_params() const = 0;
  /// Floats per parameter row for sparse-gradient models; 0 for dense-gradient models.
  virtual std::size_t row_width() const { return 0; }
  /// Appends the parameter rows examples `batch` of `data` touch (duplicates allowed); sparse
  /// models only.
  virtual void touched_rows(const Examples& /*data*/, std::span<const std::uint32_t> /*batch*/,
                            std::vector<std::uint32_t>& /*rows*/) const {}
  /// Upper bound on the rows one example of `data` touches (sparse models).
  virtual std::size_t max_rows_per_example(const Examples& /*data*/) const { return 0; }
  /// Sets the initial parameters (deterministic for a seed).
  virtual void init(std::span<float> w, std::uint64_t seed) const = 0;
  /// Scratch space for minibatches of up to `max_batch` examples.
  virtual std::unique_ptr<Workspace> workspace(std::size_t /*max_batch*/) const { return nullptr; }
  /// Mean loss over examples `batch` of `data`, excluding the regulariser, and the gradient of
  /// the mean loss plus the regulariser. Sparse models add into `grad` (zeroed, laid out like
  /// the gathered rows); dense models overwrite all num_params() entries.
  virtual double gradient(const Examples& data, std::span<const std::uint32_t> batch,
                          const ParamView& w, float* grad, Workspace* ws) const = 0;
  /// Values outputs() gives per example: one logit per class (classifiers) or the prediction.
  virtual std::size_t output_width() const = 0;
  /// The forward pass at parameters w over examples [begin, end) of `data`, output_width()
  /// values per example into `out`: what evaluation and prediction share.
  virtual void outputs(const Examples& data, const float* w, std::size_t begin, std::size_t end,
                       double* out) const = 0;
  /// True for classifiers (accuracy is meaningful).
  virtual bool classifier() const { return true; }
  /// Sums over examples [begin, end) of `data` at parameters w, from outputs(): cross-entropy
  /// and arg-max hits (classifiers), or squared error and half of it as the loss.
  EvalSums evaluate(const Examples& data, const float* w, std::size_t begin, std::size_t end) const;
};

/// Replaces logits z[0, k) by probabilities; returns the cross-entropy -log p[y], computed from
/// the logits (stable). Inline: the dense models call it per example with their own flags.
inline double softmax_in_place(float* z, std::size_t k, std::int32_t y) {
  const float top = *std::max_element(z, z + k);
  double sum = 0;
  for (std::size_t c = 0; c < k; ++c) sum += std::exp(double{z[c]} - top);
  const double loss = std::log(sum) - (double{z[y]} - top);
  const auto inv = static_cast<float>(1 / sum);
  for (std::size_t c = 0; c < k; ++c) z[c] = std::exp(z[c] - top) * inv;
  return loss;
}

/// Writes the examples `batch` of `rows` to `out`, one after the other (rows.cols values each:
/// the columns of a column-major matrix), having first asked the caches for all of them: a
/// minibatch's examples lie anywhere in the data, and copied one by one each waited for memory
/// in turn (60% of the dense softmax's own time was that wait).
inline void copy_batch(const DenseDataset& rows, std::span<const std::uint32_t> batch, float* out) {
  const bool bytes = rows.stored_as_bytes();
  for (const std::uint32_t r : batch) {
    const std::size_t at = std::size_t{r} * rows.cols;
    if (bytes) {
      prefetch_lines(rows.bytes.data() + at, rows.cols);
    } else {
      prefetch_lines(rows.features.data() + at, rows.cols * sizeof(float));
    }
  }
  for (std::size_t i = 0; i < batch.size(); ++i) rows.copy_row(batch[i], out + i * rows.cols);
}

/// Softmax regression on sparse features over `features` columns and `classes` classes.
std::unique_ptr<Model> make_sparse_softmax(std::size_t features, std::size_t classes, float l2);
/// Softmax regression on dense features.
std::unique_ptr<Model> make_dense_softmax(std::size_t features, std::size_t classes, float l2);
/// MLP with ReLU hidden layers of the given widths and a softmax output.
std::unique_ptr<Model> make_mlp(std::size_t features, const std::vector<std::size_t>& hidden,
                                std::size_t classes, float l2);
/// Matrix factorisation r ~ mean + u . v of `users` x `items` at `rank`, with L2 strength l2 on
/// the touched rows and normal initial factors of standard deviation `init_scale`.
std::unique_ptr<Model> make_factorisation(std::size_t users, std::size_t items, std::size_t rank,
                                          float mean, float l2, float init_scale);

/// The softmax, MLP or factorisation model a checkpoint's shape describes (softmax on sparse
/// features for LIBSVM data, dense for IDX), with L2 strength l2 and, for factorisation, initial
/// factors of standard deviation `init_scale`: what training and prediction both build.
std::unique_ptr<Model> make_model(const Checkpoint& shape, float l2, float init_scale = 0);

}  // namespace hogwild::detail
