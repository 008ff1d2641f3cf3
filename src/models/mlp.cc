// Multilayer perceptron: ReLU hidden layers, softmax output, cross-entropy loss.
//
// Glossary: L = number of weight layers, n[l] = width of layer l (n[0] = inputs, n[L] =
// classes), W_l (n[l+1] x n[l], column-major) and b_l = layer l's weights and bias, stored one
// after the other in the one parameter buffer; A_l = activations entering layer l (A_0 = X, one
// example per column), Z = output logits, D = d loss / d pre-activation, B = minibatch size.

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "engine/rng.h"
#include "models/model.h"

namespace hogwild::detail {
namespace {

using Matrix = Eigen::MatrixXf;
using MapMatrix = Eigen::Map<Matrix>;
using ConstMapMatrix = Eigen::Map<const Matrix>;

struct MlpWorkspace final : Workspace {
  std::vector<Matrix> a;  // a[l] = A_l, n[l] x max_batch; a[L] holds the logits
  Matrix delta;           // max width x max_batch
  Matrix delta_prev;
};

class Mlp final : public Model {
 public:
  Mlp(std::size_t features, const std::vector<std::size_t>& hidden, std::size_t classes, float l2)
      : l2_(l2) {
    width_.push_back(features);
    width_.insert(width_.end(), hidden.begin(), hidden.end());
    width_.push_back(classes);
    std::size_t offset = 0;
    for (std::size_t l = 0; l + 1 < width_.size(); ++l) {
      weight_offset_.push_back(offset);
      offset += width_[l + 1] * width_[l];
      bias_offset_.push_back(offset);
      offset += width_[l + 1];
    }
    size_ = offset;
  }
  std::size_t num_params() const override { return size_; }
  void init(std::span<float> w, std::uint64_t seed) const override {
    // He initialisation for ReLU layers; zero biases.
    Rng rng(derive_seed(seed, 0x6d6c70));
    std::fill(w.begin(), w.end(), 0.0f);
    for (std::size_t l = 0; l < layers(); ++l) {
      const double sd = std::sqrt(2.0 / static_cast<double>(width_[l]));
      float* p = w.data() + weight_offset_[l];
      for (std::size_t i = 0; i < width_[l + 1] * width_[l]; ++i) {
        p[i] = static_cast<float>(sd * rng.normal());
      }
    }
  }
  std::unique_ptr<Workspace> workspace(std::size_t max_batch) const override {
    auto ws = std::make_unique<MlpWorkspace>();
    const auto b = static_cast<Eigen::Index>(max_batch);
    for (const auto n : width_) ws->a.emplace_back(static_cast<Eigen::Index>(n), b);
    const auto widest = static_cast<Eigen::Index>(*std::max_element(width_.begin(), width_.end()));
    ws->delta.resize(widest, b);
    ws->delta_prev.resize(widest, b);
    return ws;
  }
  double gradient(const Examples& data, std::span<const std::uint32_t> batch, const ParamView& w,
                  float* grad, Workspace* workspace) const override {
    auto& ws = *static_cast<MlpWorkspace*>(workspace);
    const auto b = static_cast<Eigen::Index>(batch.size());
    copy_batch(data.dense(), batch, ws.a[0].data());
    forward(w.values, ws.a, b);
    auto z = ws.a[layers()].leftCols(b);
    double loss = 0;
    const std::size_t k = width_.back();
    for (Eigen::Index i = 0; i < b; ++i) {
      const std::int32_t y = data.classes[batch[i]];
      loss += softmax_in_place(z.col(i).data(), k, y);
      z(y, i) -= 1.0f;
    }
    auto delta = ws.delta.topLeftCorner(static_cast<Eigen::Index>(k), b);
    delta = z * (1.0f / static_cast<float>(b));
    for (std::size_t l = layers(); l-- > 0;) {
      const auto out = static_cast<Eigen::Index>(width_[l + 1]);
      const auto in = static_cast<Eigen::Index>(width_[l]);
      auto dl = ws.delta.topLeftCorner(out, b);
      const auto a = ws.a[l].leftCols(b);
      MapMatrix grad_w(grad + weight_offset_[l], out, in);
      grad_w.noalias() = dl * a.transpose();
      const ConstMapMatrix weights(w.values + weight_offset_[l], out, in);
      if (l2_ > 0) grad_w += l2_ * weights;
      Eigen::Map<Eigen::VectorXf>(grad + bias_offset_[l], out) = dl.rowwise().sum();
      if (l == 0) break;
      auto prev = ws.delta_prev.topLeftCorner(in, b);
      prev.noalias() = weights.transpose() * dl;
      mask_by_relu(prev, a);
      std::swap(ws.delta, ws.delta_prev);
    }
    return loss / static_cast<double>(b);
  }
  std::size_t output_width() const override { return width_.back(); }
  void outputs(const Examples& data, const float* w, std::size_t begin, std::size_t end,
               double* out) const override {
    const auto b = static_cast<Eigen::Index>(end - begin);
    std::vector<Matrix> a;
    for (const auto n : width_) a.emplace_back(static_cast<Eigen::Index>(n), b);
    data.dense().copy_rows(begin, end, a[0].data());
    forward(w, a, b);
    Eigen::Map<Eigen::MatrixXd>(out, a.back().rows(), b) = a.back().cast<double>();
  }

 private:
  std::size_t layers() const { return width_.size() - 1; }

  // d *= (a > 0), entry by entry: the ReLU's derivative at the activations a. As a plain
  // loop the compiler vectorises it; Eigen's product with the comparison cast to float ran
  // one entry at a time (1% of an MLP's training).
  template <class Delta, class Activations>
  static void mask_by_relu(Delta& d, const Activations& a) {
    for (Eigen::Index j = 0; j < d.cols(); ++j) {
      float* out = d.col(j).data();
      const float* in = a.col(j).data();
      for (Eigen::Index i = 0; i < d.rows(); ++i) out[i] *= in[i] > 0.0f ? 1.0f : 0.0f;
    }
  }

  // a[0] holds the inputs; fills a[1..L] (hidden activations after ReLU, then the logits).
  void forward(const float* w, std::vector<Matrix>& a, Eigen::Index b) const {
    for (std::size_t l = 0; l < layers(); ++l) {
      const auto out = static_cast<Eigen::Index>(width_[l + 1]);
      const auto in = static_cast<Eigen::Index>(width_[l]);
      const ConstMapMatrix weights(w + weight_offset_[l], out, in);
      const Eigen::Map<const Eigen::VectorXf> bias(w + bias_offset_[l], out);
      auto next = a[l + 1].leftCols(b);
      next.noalias() = weights * a[l].leftCols(b);
      next.colwise() += bias;
      if (l + 1 < layers()) next = next.cwiseMax(0.0f);
    }
  }

  float l2_;
  std::vector<std::size_t> width_;
  std::vector<std::size_t> weight_offset_, bias_offset_;
  std::size_t size_ = 0;
};

}  // namespace

std::unique_ptr<Model> make_mlp(std::size_t features, const std::vector<std::size_t>& hidden,
                                std::size_t classes, float l2) {
  return std::make_unique<Mlp>(features, hidden, classes, l2);
}

}  // namespace hogwild::detail
