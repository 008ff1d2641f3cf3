// Multinomial (softmax) regression.
//
// Glossary: d = features, k = classes, W = weights (feature j's k class weights are row j,
// contiguous; the bias is row d), x = an example, z = logits W^T x + b, p = softmax(z),
// y = class index, B = minibatch size, l2 = L2 strength on W (not on the bias).

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "models/model.h"

namespace hogwild::detail {
namespace {

struct SoftmaxWorkspace final : Workspace {
  std::vector<float> z;
  Eigen::MatrixXf x;  // dense models: the minibatch, one example per column
  Eigen::MatrixXf logits;
};

class SparseSoftmax final : public Model {
 public:
  SparseSoftmax(std::size_t d, std::size_t k, float l2) : d_(d), k_(k), l2_(l2) {}
  std::size_t num_params() const override { return (d_ + 1) * k_; }
  std::size_t row_width() const override { return k_; }
  std::size_t max_rows_per_example(const Examples& data) const override {
    std::size_t max_nnz = 0;
    for (std::size_t i = 0; i < data.size(); ++i) {
      max_nnz = std::max<std::size_t>(max_nnz, data.sparse().row(i).indices.size());
    }
    return max_nnz + 1;
  }
  void touched_rows(const Examples& data, std::span<const std::uint32_t> batch,
                    std::vector<std::uint32_t>& rows) const override {
    for (const auto i : batch) {
      const auto row = data.sparse().row(i);
      rows.insert(rows.end(), row.indices.begin(), row.indices.end());
    }
    rows.push_back(static_cast<std::uint32_t>(d_));
  }
  void init(std::span<float> w, std::uint64_t) const override {
    std::fill(w.begin(), w.end(), 0.0f);
  }
  std::unique_ptr<Workspace> workspace(std::size_t) const override {
    auto ws = std::make_unique<SoftmaxWorkspace>();
    ws->z.resize(k_);
    return ws;
  }
  double gradient(const Examples& data, std::span<const std::uint32_t> batch, const ParamView& w,
                  float* grad, Workspace* workspace) const override {
    const Dataset& rows = data.sparse();
    float* z = static_cast<SoftmaxWorkspace*>(workspace)->z.data();
    const float inv_b = 1.0f / static_cast<float>(batch.size());
    const float* bias = w.row(d_);
    float* grad_bias = grad + static_cast<std::size_t>(w.slot[d_]) * k_;
    double loss = 0;
    for (const auto i : batch) {
      const auto row = rows.row(i);
      std::copy(bias, bias + k_, z);
      for (std::size_t n = 0; n < row.indices.size(); ++n) {
        const float* wj = w.row(row.indices[n]);
        const float x = row.values[n];
        for (std::size_t c = 0; c < k_; ++c) z[c] += x * wj[c];
      }
      const std::int32_t y = data.classes[i];
      loss += softmax_in_place(z, k_, y);
      for (std::size_t c = 0; c < k_; ++c) z[c] *= inv_b;  // z is now d loss / d logits
      z[y] -= inv_b;
      for (std::size_t n = 0; n < row.indices.size(); ++n) {
        float* gj = grad + static_cast<std::size_t>(w.slot[row.indices[n]]) * k_;
        const float x = row.values[n];
        for (std::size_t c = 0; c < k_; ++c) gj[c] += x * z[c];
      }
      for (std::size_t c = 0; c < k_; ++c) grad_bias[c] += z[c];
    }
    if (l2_ > 0) {
      // Lazy L2: applied to the rows this minibatch touches.
      for (const auto r : w.rows) {
        if (r == d_) continue;
        const float* wr = w.row(r);
        float* gr = grad + static_cast<std::size_t>(w.slot[r]) * k_;
        for (std::size_t c = 0; c < k_; ++c) gr[c] += l2_ * wr[c];
      }
    }
    return loss / static_cast<double>(batch.size());
  }
  std::size_t output_width() const override { return k_; }
  // Features beyond the model's d (in test or prediction data) are ignored.
  void outputs(const Examples& data, const float* w, std::size_t begin, std::size_t end,
               double* out) const override {
    std::vector<float> z(k_);
    for (std::size_t i = begin; i < end; ++i) {
      const auto row = data.sparse().row(i);
      std::copy(w + d_ * k_, w + (d_ + 1) * k_, z.begin());
      for (std::size_t n = 0; n < row.indices.size(); ++n) {
        if (row.indices[n] >= d_) continue;
        const float* wj = w + std::size_t{row.indices[n]} * k_;
        for (std::size_t c = 0; c < k_; ++c) z[c] += row.values[n] * wj[c];
      }
      std::copy(z.begin(), z.end(), out + (i - begin) * k_);
    }
  }

 private:
  std::size_t d_, k_;
  float l2_;
};

// Dense features: minibatches as matrix products, Z = W X + b.
class DenseSoftmax final : public Model {
 public:
  DenseSoftmax(std::size_t d, std::size_t k, float l2) : d_(d), k_(k), l2_(l2) {}
  std::size_t num_params() const override { return (d_ + 1) * k_; }
  void init(std::span<float> w, std::uint64_t) const override {
    std::fill(w.begin(), w.end(), 0.0f);
  }
  std::unique_ptr<Workspace> workspace(std::size_t max_batch) const override {
    auto ws = std::make_unique<SoftmaxWorkspace>();
    ws->x.resize(static_cast<Eigen::Index>(d_), static_cast<Eigen::Index>(max_batch));
    ws->logits.resize(static_cast<Eigen::Index>(k_), static_cast<Eigen::Index>(max_batch));
    return ws;
  }
  double gradient(const Examples& data, std::span<const std::uint32_t> batch, const ParamView& w,
                  float* grad, Workspace* workspace) const override {
    auto& ws = *static_cast<SoftmaxWorkspace*>(workspace);
    const auto b = static_cast<Eigen::Index>(batch.size());
    const auto d = static_cast<Eigen::Index>(d_);
    const auto k = static_cast<Eigen::Index>(k_);
    copy_batch(data.dense(), batch, ws.x.data());
    const Eigen::Map<const Eigen::MatrixXf> weights(w.values, k, d);
    const Eigen::Map<const Eigen::VectorXf> bias(w.values + d_ * k_, k);
    auto x = ws.x.leftCols(b);
    auto z = ws.logits.leftCols(b);
    z.noalias() = weights * x;
    z.colwise() += bias;
    double loss = 0;
    const float inv_b = 1.0f / static_cast<float>(b);
    for (Eigen::Index i = 0; i < b; ++i) {
      const std::int32_t y = data.classes[batch[i]];
      loss += softmax_in_place(z.col(i).data(), k_, y);
      z(y, i) -= 1.0f;
    }
    z *= inv_b;
    Eigen::Map<Eigen::MatrixXf> grad_w(grad, k, d);
    grad_w.noalias() = z * x.transpose();
    if (l2_ > 0) grad_w += l2_ * weights;
    Eigen::Map<Eigen::VectorXf>(grad + d_ * k_, k) = z.rowwise().sum();
    return loss / static_cast<double>(b);
  }
  std::size_t output_width() const override { return k_; }
  void outputs(const Examples& data, const float* w, std::size_t begin, std::size_t end,
               double* out) const override {
    const auto d = static_cast<Eigen::Index>(d_);
    const auto k = static_cast<Eigen::Index>(k_);
    const Eigen::Map<const Eigen::MatrixXf> weights(w, k, d);
    const Eigen::Map<const Eigen::VectorXf> bias(w + d_ * k_, k);
    const DenseDataset& rows = data.dense();
    const auto n = static_cast<Eigen::Index>(end - begin);
    Eigen::MatrixXf z;
    if (rows.stored_as_bytes()) {
      Eigen::MatrixXf x(d, n);
      rows.copy_rows(begin, end, x.data());
      z = weights * x;
    } else {
      z = weights * Eigen::Map<const Eigen::MatrixXf>(rows.features.data() + begin * d_, d, n);
    }
    z.colwise() += bias;
    Eigen::Map<Eigen::MatrixXd>(out, k, z.cols()) = z.cast<double>();
  }

 private:
  std::size_t d_, k_;
  float l2_;
};

}  // namespace

std::unique_ptr<Model> make_sparse_softmax(std::size_t features, std::size_t classes, float l2) {
  return std::make_unique<SparseSoftmax>(features, classes, l2);
}

std::unique_ptr<Model> make_dense_softmax(std::size_t features, std::size_t classes, float l2) {
  return std::make_unique<DenseSoftmax>(features, classes, l2);
}

}  // namespace hogwild::detail
