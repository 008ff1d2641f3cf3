#pragma once

// The staleness probe: which updates are measured, and how stale each measured one was.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <span>

#include "engine/sampling.h"
#include "hogwild/clock.h"
#include "hogwild/staleness.h"

namespace hogwild::detail {

/// One worker's staleness measurement (--staleness-sample): a measured update notes the updates
/// the other workers had applied, and the time, when it read the parameters, and records how
/// many they applied, and how long it took, until it was written. Workers publish their applied
/// counts (one relaxed store per update) only when there are others to read them.
class StalenessProbe {
 public:
  /// Other workers' applied updates and the steady clock, at one moment.
  struct Reading {
    std::uint64_t others = 0;
    std::int64_t ns = 0;
  };

  /// Off: no update measured, nothing published.
  StalenessProbe() = default;
  /// Measures a fraction `rate` of updates (sampled from `seed`) of worker `worker`, whose
  /// applied counts `counters` hold, one per worker; times read `time` (virtual time), or the
  /// steady clock when null. With `publish` the worker publishes its count even when it
  /// measures nothing (--bounded-staleness reads the counts).
  StalenessProbe(double rate, std::uint64_t seed, std::span<AppliedCounter> counters, int worker,
                 WorkerClock* time = nullptr, bool publish = false)
      : clock_(rate, seed),
        time_(time),
        counters_(counters),
        worker_(static_cast<std::size_t>(worker)),
        on_(rate > 0),
        publishes_((rate > 0 || publish) && counters.size() > 1) {}

  /// Measurement is on.
  bool on() const { return on_; }
  /// Other workers read this one's applied count.
  bool publishes() const { return publishes_; }
  /// Whether the next update is measured.
  bool tick() { return clock_.tick(); }
  /// Updates tick() passes over before the next measured one.
  std::uint64_t until_next() const { return clock_.until_next(); }
  /// Passes over `n` updates at once (n <= until_next()).
  void skip(std::uint64_t n) { clock_.skip(n); }

  /// The other workers' applied updates now, and the time.
  Reading read() const {
    const std::uint64_t others = others_applied();
    return {others, time_ ? time_->now_ns() : now_ns()};
  }
  /// Records `count` updates read at `at_read` and written now; returns the reading now.
  Reading record(const Reading& at_read, StalenessStats& stats, std::uint64_t count = 1) const {
    const Reading now = read();
    stats.updates.record(now.others - at_read.others, count);
    stats.nanos.record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, now.ns - at_read.ns)),
                       count);
    return now;
  }
  /// Records one update read at `at_read` and landing at virtual time `at_ns` (an update in
  /// flight lands after its worker's clock has moved on).
  void record_landed(const Reading& at_read, StalenessStats& stats, std::int64_t at_ns) const {
    stats.updates.record(others_applied() - at_read.others, 1);
    stats.nanos.record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, at_ns - at_read.ns)),
                       1);
  }
  /// Makes this worker's applied count visible to the others' measurements. Release: a record
  /// made before it (which reads the others' counts) is not moved after it, where the others
  /// could already have moved on on the strength of this count (a plain store on x86).
  void publish(std::uint64_t applied) const {
    if (publishes_) counters_[worker_].value.store(applied, std::memory_order_release);
  }
  /// This worker's published count, for loops that store it themselves.
  std::atomic<std::uint64_t>& counter() const { return counters_[worker_].value; }

 private:
  std::uint64_t others_applied() const {
    std::uint64_t sum = 0;
    for (std::size_t v = 0; v < counters_.size(); ++v) {
      if (v != worker_) sum += counters_[v].value.load(std::memory_order_relaxed);
    }
    return sum;
  }

  SampleClock clock_{0.0, 0};
  WorkerClock* time_ = nullptr;
  std::span<AppliedCounter> counters_;
  std::size_t worker_ = 0;
  bool on_ = false;
  bool publishes_ = false;
};

}  // namespace hogwild::detail
