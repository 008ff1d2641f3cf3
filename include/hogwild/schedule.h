#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hogwild {

/// How a worker forms its minibatch, as given by `--schedule`:
/// `fixed:B` takes B samples per update; `time:DURATION` (e.g. `time:200us`, `time:2ms`) keeps
/// taking samples until the window has passed (at least one sample), then applies one update.
struct ScheduleSpec {
  /// Fixed-size or fixed-time minibatches.
  enum class Kind { kFixed, kTime };
  Kind kind = Kind::kFixed;        ///< family
  std::uint32_t batch = 1;         ///< fixed: samples per update
  std::int64_t window_ns = 0;      ///< time: the window in nanoseconds
  std::uint32_t max_batch = 4096;  ///< time: a window also closes after this many samples
  bool mean = true;                ///< update with the mean (true) or the sum of the gradients
  std::string text = "fixed:1";    ///< the spec as given

  /// Parses `fixed:B` or `time:DURATION`; throws InputError("--schedule: ...").
  static ScheduleSpec parse(std::string_view spec);
  /// The largest number of samples one update can hold.
  std::uint32_t capacity() const { return kind == Kind::kFixed ? batch : max_batch; }
};

/// Parses a duration with a unit (`ns`, `us`, `ms`, `s`) into nanoseconds; throws
/// InputError naming `option` when it is malformed or not positive.
std::int64_t parse_duration_ns(std::string_view text, std::string_view option);

/// Injected heterogeneity, per worker, realised by busy-waiting so timings stay precise.
struct SpeedModel {
  std::vector<double> speeds;     ///< --worker-speed: relative speeds in (0, 1], per worker
  double straggler_shift_ns = 0;  ///< --straggler shifted-exp:SHIFT:MEAN: fixed extra cost
  double straggler_mean_ns = 0;   ///< ... plus an exponential extra cost with this mean
  double pause_probability = 0;   ///< --pause P:DURATION: chance of a stall before a sample
  double pause_ns = 0;            ///< ... and its length
  std::string speeds_text;        ///< the options as given, for the report
  std::string straggler_text;     ///< "
  std::string pause_text;         ///< "

  /// Parses `--worker-speed 1,1,0.5`; throws InputError("--worker-speed: ...").
  void parse_speeds(std::string_view text);
  /// Parses `--straggler shifted-exp:SHIFT:MEAN` (durations with units).
  void parse_straggler(std::string_view text);
  /// Parses `--pause P:DURATION`.
  void parse_pause(std::string_view text);
  /// True when any heterogeneity is injected.
  bool active() const {
    return !speeds.empty() || straggler_shift_ns > 0 || straggler_mean_ns > 0 ||
           pause_probability > 0;
  }
  /// Relative speed of worker `w` (1 when not given).
  double speed_of(int w) const {
    return static_cast<std::size_t>(w) < speeds.size() ? speeds[static_cast<std::size_t>(w)] : 1.0;
  }
};

}  // namespace hogwild
