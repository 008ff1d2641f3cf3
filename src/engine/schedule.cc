#include "hogwild/schedule.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "data/text.h"
#include "engine/samplers.h"
#include "hogwild/error.h"

namespace hogwild {
std::int64_t parse_duration_ns(std::string_view text, std::string_view option) {
  std::size_t unit = text.size();
  while (unit > 0 && std::isalpha(static_cast<unsigned char>(text[unit - 1]))) --unit;
  const std::string_view suffix = text.substr(unit);
  double value = 0;
  double scale = 0;
  if (suffix == "ns") scale = 1;
  if (suffix == "us") scale = 1e3;
  if (suffix == "ms") scale = 1e6;
  if (suffix == "s") scale = 1e9;
  if (scale == 0 || !detail::parse_number(text.substr(0, unit), value) || !(value > 0) ||
      !std::isfinite(value) || value * scale > 3.6e12) {
    throw InputError(fmt::format(
        "{}: expected a positive duration up to 1h with a unit (ns, us, ms, s), e.g. 200us; "
        "found '{}'",
        option, text));
  }
  return static_cast<std::int64_t>(std::llround(value * scale));
}

ScheduleSpec ScheduleSpec::parse(std::string_view spec) {
  ScheduleSpec s;
  s.text = std::string(spec);
  const auto [family, arg, has_arg] = detail::split_spec(spec);
  if (family == "fixed" && has_arg) {
    std::uint32_t b = 0;
    if (!detail::parse_number(arg, b) || b < 1 || b > (1u << 20)) {
      throw InputError(fmt::format(
          "--schedule: expected fixed:B with B a batch size in [1, 1048576], found '{}'", spec));
    }
    s.kind = Kind::kFixed;
    s.batch = b;
    return s;
  }
  if (family == "time" && has_arg) {
    s.kind = Kind::kTime;
    s.window_ns = parse_duration_ns(arg, "--schedule time:DURATION");
    return s;
  }
  throw InputError(
      fmt::format("--schedule: expected fixed:B or time:DURATION (e.g. time:200us), "
                  "found '{}'",
                  spec));
}

void SpeedModel::parse_speeds(std::string_view text) {
  speeds_text = std::string(text);
  speeds.clear();
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const auto comma = text.find(',', begin);
    const auto item =
        text.substr(begin, comma == std::string_view::npos ? text.npos : comma - begin);
    double v = 0;
    if (!detail::parse_number(item, v) || !(v > 0 && v <= 1)) {
      throw InputError(fmt::format(
          "--worker-speed: expected comma-separated relative speeds in (0, 1], found '{}' in '{}'",
          item, text));
    }
    speeds.push_back(v);
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
}

void SpeedModel::parse_straggler(std::string_view text) {
  straggler_text = std::string(text);
  constexpr std::string_view kPrefix = "shifted-exp:";
  const auto rest = text.substr(std::min(text.size(), kPrefix.size()));
  const auto colon = rest.find(':');
  if (text.substr(0, kPrefix.size()) != kPrefix || colon == std::string_view::npos) {
    throw InputError(fmt::format(
        "--straggler: expected shifted-exp:SHIFT:MEAN (durations, e.g. shifted-exp:1us:4us), "
        "found '{}'",
        text));
  }
  straggler_shift_ns =
      static_cast<double>(parse_duration_ns(rest.substr(0, colon), "--straggler SHIFT"));
  straggler_mean_ns =
      static_cast<double>(parse_duration_ns(rest.substr(colon + 1), "--straggler MEAN"));
}

void SpeedModel::parse_pause(std::string_view text) {
  pause_text = std::string(text);
  const auto colon = text.find(':');
  double p = 0;
  if (colon == std::string_view::npos || !detail::parse_number(text.substr(0, colon), p) ||
      !(p > 0 && p <= 1)) {
    throw InputError(fmt::format(
        "--pause: expected P:DURATION with P a probability in (0, 1], e.g. 0.001:1ms; found '{}'",
        text));
  }
  pause_probability = p;
  pause_ns = static_cast<double>(parse_duration_ns(text.substr(colon + 1), "--pause DURATION"));
}

namespace detail {

SpeedSampler::SpeedSampler(const SpeedModel& model, int worker, std::uint64_t seed)
    : model_(&model), slowdown_(1.0 / model.speed_of(worker) - 1.0), rng_(seed) {}

double SpeedSampler::pause_ns() {
  if (model_->pause_probability <= 0) return 0;
  return rng_.uniform() < model_->pause_probability ? model_->pause_ns : 0.0;
}

double SpeedSampler::extra_ns(double cost_ns) {
  double extra = cost_ns * slowdown_;
  if (model_->straggler_shift_ns > 0 || model_->straggler_mean_ns > 0) {
    extra += model_->straggler_shift_ns + model_->straggler_mean_ns * rng_.exponential();
  }
  return extra;
}

}  // namespace detail
}  // namespace hogwild
