#pragma once

// The seeded per-worker draws behind the delay layer (--delay) and the speed model
// (--worker-speed, --straggler, --pause).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/draw_state.h"
#include "hogwild/delay.h"
#include "hogwild/detail/random.h"
#include "hogwild/schedule.h"

namespace hogwild::detail {

/// Draws delays from a DelaySpec for one worker; seeded, no allocation per draw.
class DelaySampler {
 public:
  /// A sampler for `spec` (which must outlive it) seeded with `seed` (use seed + worker).
  DelaySampler(const DelaySpec& spec, std::uint64_t seed);
  /// The next delay.
  std::uint32_t next();
  /// Appends the state of its draws to `words` (the generator and the trace's position).
  void save(std::vector<std::uint64_t>& words) const {
    save_rng(rng_, words);
    words.push_back(trace_pos_);
  }
  /// Continues from the state save() wrote.
  void restore(DrawReader& words) {
    words.restore(rng_);
    trace_pos_ = static_cast<std::size_t>(words.next());
    if (!spec_->trace.empty()) trace_pos_ %= spec_->trace.size();
  }

 private:
  const DelaySpec* spec_;
  Rng rng_;
  std::size_t trace_pos_ = 0;
  double log_q_ = 0;  // log(1 - p) for the geometric family
};

/// Draws one worker's injected costs from a SpeedModel (which must outlive it); seeded.
class SpeedSampler {
 public:
  /// A sampler for worker `worker` (speed and seed are per worker).
  SpeedSampler(const SpeedModel& model, int worker, std::uint64_t seed);
  /// Nanoseconds to stall before the next sample (0 unless a pause is drawn).
  double pause_ns();
  /// Extra nanoseconds after a sample whose own compute took `cost_ns`: the slowdown
  /// (cost/speed - cost) plus the straggler draw.
  double extra_ns(double cost_ns);
  /// Appends the state of its draws to `words`.
  void save(std::vector<std::uint64_t>& words) const { save_rng(rng_, words); }
  /// Continues from the state save() wrote.
  void restore(DrawReader& words) { words.restore(rng_); }

 private:
  const SpeedModel* model_;
  double slowdown_;  // 1/speed - 1
  Rng rng_;
};

}  // namespace hogwild::detail
