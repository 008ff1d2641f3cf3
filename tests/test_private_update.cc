// The plain loop's update of weights no other worker writes (the one worker's shared weights
// under the serial policy or racy, or a worker's replica, whole or of the hot features alone): it
// writes each weight from the value the sample's margin read, plus the step. The full step, which
// every measured sample takes, reads each weight again as it writes it. With every update measured
// (staleness_sample 1) a run takes the full step on every sample; with none measured, the plain
// loop: both runs must give the same losses and weights bit for bit, on every row layout (16- and
// 32-bit indices, float, half, byte and no values), loss and L2 setting, with rows whose lengths
// leave one or three nonzeros after the last group of four.
#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "engine/packed_rows.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;

namespace {

struct Layout {
  std::string name;
  Dataset data;
  DataPrecision precision;
  double step;  // one that does not diverge with squared loss on these values
};

std::vector<Layout> layouts() {
  // 300 features: 16-bit indices; 70,000: 32-bit. Rows of 13 and 15 nonzeros.
  Dataset narrow = test::sparse_problem(700, 300, 13, 11).train;
  Dataset wide = test::sparse_problem(700, 70000, 15, 12).train;
  std::vector<Layout> out;
  out.push_back({"f32, 16-bit indices", narrow, DataPrecision::kF32, 0.3});
  out.push_back({"f32, 32-bit indices", wide, DataPrecision::kF32, 0.3});
  out.push_back({"binary", test::rounded(narrow, [](float, std::size_t) { return 1.0f; }),
                 DataPrecision::kF32, 0.02});
  out.push_back(
      {"f16",
       test::rounded(
           narrow, [](float v, std::size_t) { return detail::widen_half(detail::narrow_half(v)); }),
       DataPrecision::kF16, 0.3});
  // Integers up to 255 hold exactly with a row scale of 1.
  out.push_back({"u8",
                 test::rounded(wide, [](float v, std::size_t) { return std::round(v * 40) + 1; }),
                 DataPrecision::kU8, 0.0005});
  return out;
}

// Where the one worker writes: the shared weights under the serial or the racy policy, or its
// replica (merged every `replicate` samples) of every feature or of the `hot` hottest.
struct Target {
  Policy policy;
  int replicate;
  std::size_t hot;
};

TrainConfig config(const Layout& layout, LossKind loss, double l2, Target target, double measured) {
  TrainConfig c;
  c.model = LinearModel{loss};
  c.data_precision = layout.precision;
  c.policy = target.policy;
  c.threads = 1;
  c.replicate = target.replicate;
  c.hot_features = target.hot;
  c.epochs = 3;
  c.optimizer.step = layout.step;
  c.l2 = l2;
  c.staleness_sample = measured;
  c.coherence_sample = 0;
  c.keep_weights = true;
  return c;
}

}  // namespace

TEST_CASE("the plain loop's private update is the full step's, bit for bit") {
  for (const Layout& layout : layouts()) {
    for (const LossKind loss : {LossKind::kLogistic, LossKind::kHinge, LossKind::kSquared}) {
      for (const double l2 : {0.0, 1e-3}) {
        for (const Target target : {Target{Policy::kSerial, 0, 0}, Target{Policy::kRacy, 0, 0},
                                    Target{Policy::kRacy, 64, 0}, Target{Policy::kRacy, 64, 40}}) {
          CAPTURE(layout.name);
          CAPTURE(static_cast<int>(loss));
          CAPTURE(l2);
          CAPTURE(static_cast<int>(target.policy));
          CAPTURE(target.replicate);
          CAPTURE(target.hot);
          // The hot layout keeps float values: f16 and u8 rows take no hot replicas.
          if (target.hot > 0 && layout.precision != DataPrecision::kF32) continue;
          const Report plain = train(config(layout, loss, l2, target, 0), layout.data, nullptr);
          const Report stepped = train(config(layout, loss, l2, target, 1), layout.data, nullptr);
          REQUIRE(plain.config.hot_features == target.hot);  // the hot loop ran
          REQUIRE(plain.epochs.size() == stepped.epochs.size());
          CHECK(plain.epochs.back().train.loss < plain.epochs.front().train.loss);
          for (std::size_t e = 0; e < plain.epochs.size(); ++e) {
            CHECK(plain.epochs[e].train.loss == stepped.epochs[e].train.loss);
          }
          REQUIRE(!plain.weights.empty());
          CHECK(plain.weights == stepped.weights);
        }
      }
    }
  }
}
