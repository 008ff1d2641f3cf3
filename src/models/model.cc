// Evaluation from a model's forward pass, the same for every model.

#include "models/model.h"

#include <algorithm>
#include <cmath>

namespace hogwild::detail {

EvalSums Model::evaluate(const Examples& data, const float* w, std::size_t begin,
                         std::size_t end) const {
  const std::size_t k = output_width();
  std::vector<double> out((end - begin) * k);
  outputs(data, w, begin, end, out.data());
  EvalSums sums;
  if (!classifier()) {
    for (std::size_t i = begin; i < end; ++i) {
      const double e = out[i - begin] - data.target(i);
      sums.squared_error += e * e;
      sums.loss += 0.5 * e * e;
    }
    return sums;
  }
  // The logits were computed in float: back to float, exactly, for the softmax.
  std::vector<float> z(k);
  for (std::size_t i = begin; i < end; ++i) {
    const double* logits = out.data() + (i - begin) * k;
    std::copy(logits, logits + k, z.begin());
    const auto y = static_cast<std::int32_t>(data.target(i));
    // Logits that are not numbers (diverged weights) predict no class: max_element would
    // answer the first, which a NaN compares as the largest.
    const bool numbers = std::none_of(z.begin(), z.end(), [](float v) { return std::isnan(v); });
    sums.correct += numbers && static_cast<std::size_t>(std::max_element(z.begin(), z.end()) -
                                                        z.begin()) == static_cast<std::size_t>(y);
    sums.loss += softmax_in_place(z.data(), k, y);
  }
  return sums;
}

std::unique_ptr<Model> make_model(const Checkpoint& shape, float l2, float init_scale) {
  const auto d = static_cast<std::size_t>(shape.features);
  const auto k = static_cast<std::size_t>(shape.classes);
  if (shape.model == "mf") {
    return make_factorisation(
        static_cast<std::size_t>(shape.users), static_cast<std::size_t>(shape.items),
        static_cast<std::size_t>(shape.rank), static_cast<float>(shape.mean), l2, init_scale);
  }
  if (shape.model == "mlp") {
    return make_mlp(d, std::vector<std::size_t>(shape.hidden.begin(), shape.hidden.end()), k, l2);
  }
  return shape.format == "libsvm" ? make_sparse_softmax(d, k, l2) : make_dense_softmax(d, k, l2);
}

}  // namespace hogwild::detail
