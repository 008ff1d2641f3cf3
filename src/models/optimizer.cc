#include "hogwild/optimizer.h"

#include <fmt/format.h>

#include <cmath>

#include "hogwild/error.h"
#include "io/enum_names.h"

namespace hogwild {

namespace {

constexpr detail::EnumNames<OptimizerKind, 6> kOptimizers{{{"sgd", OptimizerKind::kSgd},
                                                           {"momentum", OptimizerKind::kMomentum},
                                                           {"nesterov", OptimizerKind::kNesterov},
                                                           {"adagrad", OptimizerKind::kAdagrad},
                                                           {"rmsprop", OptimizerKind::kRmsprop},
                                                           {"adam", OptimizerKind::kAdam}}};
constexpr detail::EnumNames<Schedule, 5> kSchedules{{{"constant", Schedule::kConstant},
                                                     {"epoch", Schedule::kEpoch},
                                                     {"inverse", Schedule::kInverse},
                                                     {"inverse-sqrt", Schedule::kInverseSqrt},
                                                     {"plateau", Schedule::kPlateau}}};

}  // namespace

OptimizerKind parse_optimizer(std::string_view name) {
  return detail::parse_enum(kOptimizers, "--optimizer", name);
}

std::string_view to_string(OptimizerKind kind) { return detail::enum_name(kOptimizers, kind); }

Schedule parse_schedule(std::string_view name) {
  return detail::parse_enum(kSchedules, "--step-schedule", name);
}

std::string_view to_string(Schedule schedule) { return detail::enum_name(kSchedules, schedule); }

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
  if (plateau_patience < 1) fail("plateau-patience", "a count of epochs >= 1", plateau_patience);
  if (!(plateau_factor > 0 && plateau_factor < 1)) {
    fail("plateau-factor", "a factor in (0, 1)", plateau_factor);
  }
  if (!(plateau_threshold >= 0 && plateau_threshold < 1)) {
    fail("plateau-threshold", "a fraction in [0, 1)", plateau_threshold);
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
    case Schedule::kPlateau:  // the driver scales it at each plateau
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
