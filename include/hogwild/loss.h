#pragma once

#include <cmath>
#include <string>
#include <string_view>

namespace hogwild {

/// The loss of a sparse linear model, as named on the command line.
enum class LossKind { kLogistic, kHinge, kSquared };

/// Parses "logistic", "hinge" or "squared"; throws InputError naming the valid choices.
LossKind parse_loss(std::string_view name);
/// The command-line name of a loss.
std::string_view to_string(LossKind loss);
/// True for the losses that classify (labels mapped to -1/+1, accuracy reported).
constexpr bool is_classifier(LossKind loss) { return loss != LossKind::kSquared; }

/// Logistic loss log(1 + exp(-y m)) for labels y in {-1, +1}.
struct LogisticLoss {
  static constexpr LossKind kind = LossKind::kLogistic;
  /// Loss at margin m.
  static double value(double m, double y) {
    const double z = -y * m;
    return z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z));
  }
  /// d loss / d margin.
  static float derivative(float m, float y) {
    const float z = y * m;
    // -y * sigmoid(-z), written to stay finite for large |z|.
    return z > 0 ? -y * std::exp(-z) / (1.0f + std::exp(-z)) : -y / (1.0f + std::exp(z));
  }
};

/// Hinge loss max(0, 1 - y m) (linear SVM) for labels y in {-1, +1}.
struct HingeLoss {
  static constexpr LossKind kind = LossKind::kHinge;
  /// Loss at margin m.
  static double value(double m, double y) { return std::max(0.0, 1.0 - y * m); }
  /// A subgradient with respect to the margin.
  static float derivative(float m, float y) { return y * m < 1.0f ? -y : 0.0f; }
};

/// Squared loss (m - y)^2 / 2 for real-valued labels.
struct SquaredLoss {
  static constexpr LossKind kind = LossKind::kSquared;
  /// Loss at margin m.
  static double value(double m, double y) { return 0.5 * (m - y) * (m - y); }
  /// d loss / d margin.
  static float derivative(float m, float y) { return m - y; }
};

/// d loss / d margin of the loss named at run time.
inline float loss_derivative(LossKind loss, float m, float y) {
  switch (loss) {
    case LossKind::kLogistic:
      return LogisticLoss::derivative(m, y);
    case LossKind::kHinge:
      return HingeLoss::derivative(m, y);
    case LossKind::kSquared:
      break;
  }
  return SquaredLoss::derivative(m, y);
}

}  // namespace hogwild
