#include "hogwild/optimizer.h"

#include <fmt/format.h>

#include <cmath>

#include "hogwild/error.h"

namespace hogwild {

OptimizerKind parse_optimizer(std::string_view name) {
  if (name == "sgd") return OptimizerKind::kSgd;
  if (name == "momentum") return OptimizerKind::kMomentum;
  if (name == "nesterov") return OptimizerKind::kNesterov;
  if (name == "adagrad") return OptimizerKind::kAdagrad;
  if (name == "rmsprop") return OptimizerKind::kRmsprop;
  if (name == "adam") return OptimizerKind::kAdam;
  throw InputError(fmt::format(
      "--optimizer: expected one of sgd, momentum, nesterov, adagrad, rmsprop, adam; found '{}'",
      name));
}

std::string_view to_string(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return "sgd";
    case OptimizerKind::kMomentum:
      return "momentum";
    case OptimizerKind::kNesterov:
      return "nesterov";
    case OptimizerKind::kAdagrad:
      return "adagrad";
    case OptimizerKind::kRmsprop:
      return "rmsprop";
    case OptimizerKind::kAdam:
      break;
  }
  return "adam";
}

Schedule parse_schedule(std::string_view name) {
  if (name == "constant") return Schedule::kConstant;
  if (name == "epoch") return Schedule::kEpoch;
  if (name == "inverse") return Schedule::kInverse;
  if (name == "inverse-sqrt") return Schedule::kInverseSqrt;
  throw InputError(fmt::format(
      "--step-schedule: expected one of constant, epoch, inverse, inverse-sqrt; found '{}'", name));
}

std::string_view to_string(Schedule schedule) {
  switch (schedule) {
    case Schedule::kConstant:
      return "constant";
    case Schedule::kEpoch:
      return "epoch";
    case Schedule::kInverse:
      return "inverse";
    case Schedule::kInverseSqrt:
      break;
  }
  return "inverse-sqrt";
}

std::size_t state_buffers(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd:
      return 0;
    case OptimizerKind::kAdam:
      return 2;
    default:
      return 1;
  }
}

void OptimizerConfig::validate() const {
  auto fail = [](std::string_view option, std::string_view expected, auto found) {
    throw InputError(fmt::format("--{}: expected {}, found {}", option, expected, found));
  };
  auto fraction = [&](std::string_view option, double v) {
    if (!(v >= 0 && v < 1)) fail(option, "a factor in [0, 1)", v);
  };
  if (step && (!(*step > 0) || !std::isfinite(*step))) {
    fail("step", "a finite step size > 0", *step);
  }
  if (!(decay > 0 && decay <= 1)) fail("decay", "a factor in (0, 1]", decay);
  if (!(schedule_scale > 0) || !std::isfinite(schedule_scale)) {
    fail("step-schedule-scale", "a finite number of epochs > 0", schedule_scale);
  }
  fraction("momentum", momentum);
  fraction("rho", rho);
  fraction("beta1", beta1);
  fraction("beta2", beta2);
  if (!(epsilon > 0) || !std::isfinite(epsilon)) fail("epsilon", "a finite value > 0", epsilon);
  if (!(clip_norm >= 0) || !std::isfinite(clip_norm)) {
    fail("clip-norm", "a finite norm >= 0 (0 = off)", clip_norm);
  }
}

double OptimizerConfig::step_at(double step0, int epoch, double progress) const {
  switch (schedule) {
    case Schedule::kConstant:
      return step0;
    case Schedule::kEpoch:
      return step0 * std::pow(decay, epoch);
    case Schedule::kInverse:
      return step0 / (1 + progress / schedule_scale);
    case Schedule::kInverseSqrt:
      break;
  }
  return step0 / std::sqrt(1 + progress / schedule_scale);
}

}  // namespace hogwild
