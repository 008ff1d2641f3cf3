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
    sums.correct += static_cast<std::size_t>(std::max_element(z.begin(), z.end()) - z.begin()) ==
                    static_cast<std::size_t>(y);
    sums.loss += softmax_in_place(z.data(), k, y);
  }
  return sums;
}

}  // namespace hogwild::detail
