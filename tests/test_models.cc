// Finite-difference gradient checks for every model: softmax (sparse and dense features), the
// MLP, and matrix factorisation, with and without L2.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/rng.h"
#include "models/model.h"

using namespace hogwild;
using namespace hogwild::detail;

namespace {

// Evaluates a model's minibatch loss and gradient at full parameters `w`, gathering rows for
// sparse-gradient models as the trainer does. Returns the gradient in the full layout.
struct Probe {
  const Model& model;
  const Examples& data;
  std::vector<std::uint32_t> batch;
  std::unique_ptr<Workspace> ws = model.workspace(batch.size());

  double loss(const std::vector<float>& w, std::vector<float>* full_grad = nullptr) {
    const std::size_t width = model.row_width();
    if (width == 0) {
      std::vector<float> grad(w.size());
      const double value = model.gradient(data, batch, ParamView{w.data()}, grad.data(), ws.get());
      if (full_grad) *full_grad = grad;
      return value;
    }
    std::vector<std::uint32_t> rows;
    model.touched_rows(data, batch, rows);
    std::vector<std::int32_t> slot(w.size() / width, -1);
    std::vector<std::uint32_t> unique;
    for (const auto r : rows) {
      if (slot[r] < 0) {
        slot[r] = static_cast<std::int32_t>(unique.size());
        unique.push_back(r);
      }
    }
    std::vector<float> local(unique.size() * width), grad(unique.size() * width, 0.0f);
    for (std::size_t s = 0; s < unique.size(); ++s) {
      std::copy_n(w.begin() + unique[s] * width, width, local.begin() + s * width);
    }
    const double value = model.gradient(
        data, batch, ParamView{local.data(), slot.data(), width, unique}, grad.data(), ws.get());
    if (full_grad) {
      full_grad->assign(w.size(), 0.0f);
      for (std::size_t s = 0; s < unique.size(); ++s) {
        std::copy_n(grad.begin() + s * width, width, full_grad->begin() + unique[s] * width);
      }
    }
    return value;
  }
};

// Compares the analytic gradient of (mean loss + l2/2 |regularised w|^2) with central
// differences at `checks` coordinates; `regularised(i)` says whether coordinate i carries L2.
template <class Regularised>
void check_gradient(const Model& model, const Examples& data, std::vector<std::uint32_t> batch,
                    double l2, Regularised regularised, std::uint64_t seed, std::size_t checks = 60,
                    double h = 1e-2) {
  std::vector<float> w(model.num_params());
  model.init(w, seed);
  Rng rng(seed);
  for (auto& x : w) x += static_cast<float>(0.3 * rng.normal());
  Probe probe{model, data, std::move(batch)};
  std::vector<float> grad;
  probe.loss(w, &grad);
  auto objective = [&](const std::vector<float>& v) {
    double value = probe.loss(v);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (regularised(i)) value += 0.5 * l2 * double{v[i]} * v[i];
    }
    return value;
  };
  std::size_t nonzero = 0;
  for (std::size_t c = 0; c < checks; ++c) {
    const std::size_t i = c < w.size() ? (c * 7919) % w.size() : rng.below(w.size());
    auto plus = w, minus = w;
    plus[i] += static_cast<float>(h);
    minus[i] -= static_cast<float>(h);
    const double fd = (objective(plus) - objective(minus)) / (double{plus[i]} - minus[i]);
    // Coordinates the minibatch does not touch have no data gradient; L2 is lazy there.
    const bool touched = grad[i] != 0.0f || std::abs(fd) < 1e-6;
    if (!touched) continue;
    const double analytic = grad[i];
    CAPTURE(i);
    CAPTURE(analytic);
    CAPTURE(fd);
    CHECK(std::abs(analytic - fd) <= 2e-3 + 0.03 * std::abs(fd));
    nonzero += grad[i] != 0.0f;
  }
  CHECK(nonzero > checks / 4);
}

DenseDataset dense_data(std::size_t rows, std::size_t cols, std::size_t classes,
                        std::uint64_t seed) {
  DenseDataset d;
  d.cols = cols;
  Rng rng(seed);
  for (std::size_t i = 0; i < rows * cols; ++i)
    d.features.push_back(static_cast<float>(rng.uniform()));
  for (std::size_t i = 0; i < rows; ++i)
    d.labels.push_back(static_cast<std::int32_t>(rng.below(classes)));
  return d;
}

}  // namespace

TEST_CASE("dense softmax gradient matches finite differences") {
  const auto data = dense_data(12, 7, 4, 3);
  for (const float l2 : {0.0f, 0.1f}) {
    const auto model = make_dense_softmax(7, 4, l2);
    REQUIRE(model->num_params() == 8 * 4);
    // L2 applies to the weights (rows 0..d-1), not to the bias row.
    check_gradient(
        *model, Examples(data, data.labels), {0, 3, 5, 11, 2}, l2,
        [](std::size_t i) { return i < 28; }, 5);
  }
}

TEST_CASE("sparse softmax gradient matches finite differences on the touched rows") {
  Dataset data;
  Rng rng(11);
  for (int i = 0; i < 10; ++i) {
    std::vector<std::uint32_t> idx;
    std::vector<float> val;
    for (std::uint32_t j = 0; j < 9; ++j) {
      if (rng.uniform() < 0.4) {
        idx.push_back(j);
        val.push_back(static_cast<float>(rng.normal()));
      }
    }
    data.append(idx, val, static_cast<float>(i % 3));
  }
  data.num_features = 9;
  std::vector<std::int32_t> y;
  for (const float label : data.labels) y.push_back(static_cast<std::int32_t>(label));
  for (const float l2 : {0.0f, 0.2f}) {
    const auto model = make_sparse_softmax(9, 3, l2);
    // Lazy L2: only the weight rows of features present in the batch carry it.
    std::vector<bool> present(9, false);
    const std::vector<std::uint32_t> batch{1, 4, 7};
    for (const auto i : batch) {
      for (const auto j : data.row(i).indices) present[j] = true;
    }
    check_gradient(
        *model, Examples(data, y), batch, l2,
        [&](std::size_t i) { return i < 27 && present[i / 3]; }, 7, 40);
  }
}

TEST_CASE("MLP gradient matches finite differences through every layer") {
  const auto data = dense_data(10, 6, 3, 21);
  for (const float l2 : {0.0f, 0.05f}) {
    const auto model = make_mlp(6, {5, 4}, 3, l2);
    // Layout: W0 5x6, b0 5, W1 4x5, b1 4, W2 3x4, b2 3.
    REQUIRE(model->num_params() == 30 + 5 + 20 + 4 + 12 + 3);
    auto weight = [](std::size_t i) {
      return i < 30 || (i >= 35 && i < 55) || (i >= 59 && i < 71);
    };
    check_gradient(*model, Examples(data, data.labels), {0, 2, 3, 7, 9}, l2, weight, 13, 74, 1e-3);
  }
}

TEST_CASE("matrix factorisation gradient matches finite differences, one user and item row each") {
  Ratings r;
  Rng rng(5);
  for (std::uint32_t u = 0; u < 5; ++u) {
    for (std::uint32_t i = 0; i < 4; ++i) {
      if (rng.uniform() < 0.6) r.append(u, i, static_cast<float>(rng.normal()));
    }
  }
  REQUIRE(r.size() >= 6);
  for (const float l2 : {0.0f, 0.3f}) {
    const auto model = make_factorisation(5, 4, 3, 0.3f, l2, 0.5f);
    REQUIRE(model->row_width() == 3);
    REQUIRE(model->num_params() == (5 + 4) * 3);
    const std::vector<std::uint32_t> batch{0, 1, 2, 3};
    // Per-rating L2: each occurrence of a row in the batch adds l2/2 |row|^2 / B.
    std::vector<double> weight(model->num_params(), 0.0);
    for (const auto k : batch) {
      for (std::size_t f = 0; f < 3; ++f) {
        weight[r.users[k] * 3 + f] += 1.0 / batch.size();
        weight[(5 + r.items[k]) * 3 + f] += 1.0 / batch.size();
      }
    }
    std::vector<float> w(model->num_params());
    model->init(w, 2);
    const Examples examples(r);
    Probe probe{*model, examples, batch};
    std::vector<float> grad;
    probe.loss(w, &grad);
    for (std::size_t i = 0; i < w.size(); ++i) {
      auto plus = w, minus = w;
      const float h = 1e-2f;
      plus[i] += h;
      minus[i] -= h;
      auto objective = [&](const std::vector<float>& v) {
        double value = probe.loss(v);
        for (std::size_t j = 0; j < v.size(); ++j) value += 0.5 * l2 * weight[j] * v[j] * v[j];
        return value;
      };
      const double fd = (objective(plus) - objective(minus)) / (2 * h);
      CAPTURE(i);
      CHECK(grad[i] == doctest::Approx(fd).epsilon(0.02).scale(1e-2));
    }
  }
}
