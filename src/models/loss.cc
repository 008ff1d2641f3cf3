#include "hogwild/loss.h"

#include <fmt/format.h>

#include "hogwild/error.h"

namespace hogwild {

LossKind parse_loss(std::string_view name) {
  if (name == "logistic") return LossKind::kLogistic;
  if (name == "hinge") return LossKind::kHinge;
  if (name == "squared") return LossKind::kSquared;
  throw InputError(
      fmt::format("--model: expected one of logistic, hinge, squared; found '{}'", name));
}

std::string_view to_string(LossKind loss) {
  switch (loss) {
    case LossKind::kLogistic:
      return "logistic";
    case LossKind::kHinge:
      return "hinge";
    case LossKind::kSquared:
      break;
  }
  return "squared";
}

}  // namespace hogwild
