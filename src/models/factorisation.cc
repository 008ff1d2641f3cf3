// Matrix factorisation of ratings, the Hogwild! paper's sparse pattern: each rating touches one
// user row and one item row of the factor matrices.
//
// Glossary: U, I = users, items, R = rank, u = a user's factor row (row u of the buffer),
// v = an item's factor row (row U + i), mu = the training ratings' mean (fixed, not learned),
// e = mu + u . v - r, the error; per-rating loss e^2 / 2 + l2 / 2 (|u|^2 + |v|^2) in training,
// e^2 / 2 in reports.

#include <algorithm>
#include <cmath>

#include "engine/rng.h"
#include "models/model.h"

namespace hogwild::detail {
namespace {

class Factorisation final : public Model {
 public:
  Factorisation(std::size_t users, std::size_t items, std::size_t rank, float mean, float l2,
                float init_scale)
      : users_(users), items_(items), r_(rank), mean_(mean), l2_(l2), init_scale_(init_scale) {}
  std::size_t num_params() const override { return (users_ + items_) * r_; }
  std::size_t row_width() const override { return r_; }
  std::size_t max_rows_per_example(const Examples&) const override { return 2; }
  void touched_rows(const Examples& data, std::span<const std::uint32_t> batch,
                    std::vector<std::uint32_t>& rows) const override {
    const Ratings& ratings = data.ratings();
    for (const auto i : batch) {
      rows.push_back(ratings.users[i]);
      rows.push_back(static_cast<std::uint32_t>(users_ + ratings.items[i]));
    }
  }
  void init(std::span<float> w, std::uint64_t seed) const override {
    Rng rng(derive_seed(seed, 0x6d66));
    for (auto& x : w) x = static_cast<float>(init_scale_ * rng.normal());
  }
  double gradient(const Examples& data, std::span<const std::uint32_t> batch, const ParamView& w,
                  float* grad, Workspace*) const override {
    const Ratings& ratings = data.ratings();
    const float inv_b = 1.0f / static_cast<float>(batch.size());
    double loss = 0;
    for (const auto i : batch) {
      const std::uint32_t user_row = ratings.users[i];
      const auto item_row = static_cast<std::uint32_t>(users_ + ratings.items[i]);
      const float* u = w.row(user_row);
      const float* v = w.row(item_row);
      float dot = 0;
      for (std::size_t f = 0; f < r_; ++f) dot += u[f] * v[f];
      const float e = mean_ + dot - ratings.values[i];
      loss += 0.5 * double{e} * e;
      float* gu = grad + static_cast<std::size_t>(w.slot[user_row]) * r_;
      float* gv = grad + static_cast<std::size_t>(w.slot[item_row]) * r_;
      for (std::size_t f = 0; f < r_; ++f) {
        gu[f] += inv_b * (e * v[f] + l2_ * u[f]);
        gv[f] += inv_b * (e * u[f] + l2_ * v[f]);
      }
    }
    return loss / static_cast<double>(batch.size());
  }
  std::size_t output_width() const override { return 1; }
  // mu + u . v; a user or item beyond the model's (in prediction data) contributes no factor.
  void outputs(const Examples& data, const float* w, std::size_t begin, std::size_t end,
               double* out) const override {
    const Ratings& ratings = data.ratings();
    for (std::size_t i = begin; i < end; ++i) {
      double dot = 0;
      if (ratings.users[i] < users_ && ratings.items[i] < items_) {
        const float* u = w + std::size_t{ratings.users[i]} * r_;
        const float* v = w + (users_ + ratings.items[i]) * r_;
        for (std::size_t f = 0; f < r_; ++f) dot += double{u[f]} * v[f];
      }
      out[i - begin] = mean_ + dot;
    }
  }
  bool classifier() const override { return false; }

 private:
  std::size_t users_, items_, r_;
  float mean_, l2_, init_scale_;
};

}  // namespace

std::unique_ptr<Model> make_factorisation(std::size_t users, std::size_t items, std::size_t rank,
                                          float mean, float l2, float init_scale) {
  return std::make_unique<Factorisation>(users, items, rank, mean, l2, init_scale);
}

}  // namespace hogwild::detail
