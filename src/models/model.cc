// Evaluation from a model's forward pass, the same for every model.

#include "models/model.h"

#include <algorithm>
#include <cmath>

namespace hogwild::detail {

EvalSums Model::evaluate(const float* w, bool test, std::size_t begin, std::size_t end) const {
  const std::size_t k = output_width();
  std::vector<double> out((end - begin) * k);
  outputs(w, test, begin, end, out.data());
  EvalSums sums;
  if (!classifier()) {
    for (std::size_t i = begin; i < end; ++i) {
      const double e = out[i - begin] - target(test, i);
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
    const auto y = static_cast<std::int32_t>(target(test, i));
    sums.correct += static_cast<std::size_t>(std::max_element(z.begin(), z.end()) - z.begin()) ==
                    static_cast<std::size_t>(y);
    sums.loss += softmax_in_place(z.data(), k, y);
  }
  return sums;
}

}  // namespace hogwild::detail
