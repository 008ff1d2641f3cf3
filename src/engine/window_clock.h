#pragma once

// One worker's window clock: when a time window (--schedule time:W) is over, how many samples
// to compute before reading the clock again, and the costs the speed model injects
// (--worker-speed, --straggler, --pause), all read from the worker's clock (hogwild/clock.h).

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "engine/minibatch.h"
#include "engine/samplers.h"
#include "engine/sampling.h"
#include "hogwild/clock.h"
#include "hogwild/schedule.h"
#include "hogwild/staleness.h"

namespace hogwild::detail {

/// A worker's time windows and injected costs. Without a clock of its own it reads the steady
/// clock and busy-waits, with no virtual call, until the wait is over or the run is asked to
/// stop.
class WindowClock {
 public:
  /// A clock for fixed minibatches at full speed.
  WindowClock() = default;
  /// The clock of worker `worker` for `schedule` and `speed` (whose draws `seed` seeds); a
  /// null `clock` reads the steady clock, and then a set `stop` (the run's stop request, may
  /// be null) ends every wait at once.
  WindowClock(const ScheduleSpec& schedule, const SpeedModel& speed, int worker, std::uint64_t seed,
              std::shared_ptr<WorkerClock> clock, const std::atomic<bool>* stop = nullptr)
      : clock_(std::move(clock)),
        stop_(stop),
        window_ns_(schedule.kind == ScheduleSpec::Kind::kTime ? schedule.window_ns : 0) {
    if (speed.active()) speed_.emplace(speed, worker, seed);
  }

  /// True while a time window is open.
  bool is_open() const { return open_; }

  /// Before computing `samples` samples: the pauses drawn for them.
  void before(std::size_t samples) {
    if (!speed_) return;
    double pause = 0;
    for (std::size_t i = 0; i < samples; ++i) pause += speed_->pause_ns();
    if (pause > 0) wait_until(now() + static_cast<std::int64_t>(pause));
    begin_ns_ = now();
  }

  /// After computing them: the clock moves by their cost (a manual clock), then the speed
  /// model's slowdown of their measured time and a straggler draw per sample are waited out.
  void after(std::size_t samples) {
    if (clock_) clock_->computed(samples);
    if (!speed_) return;
    const std::int64_t now_at = now();
    double extra = speed_->extra_ns(static_cast<double>(now_at - begin_ns_));
    for (std::size_t i = 1; i < samples; ++i) extra += speed_->extra_ns(0.0);
    if (extra > 0) wait_until(now_at + static_cast<std::int64_t>(extra));
  }

  /// Appends the state that carries over to the next epoch to `words`: the speed model's
  /// draws and, with time windows, the time per sample the next window starts from.
  void save(std::vector<std::uint64_t>& words) const {
    if (speed_) speed_->save(words);
    if (window_ns_ > 0) words.push_back(std::bit_cast<std::uint64_t>(ns_per_sample_));
  }
  /// Continues from the state save() wrote.
  void restore(DrawReader& words) {
    if (speed_) speed_->restore(words);
    if (window_ns_ > 0) ns_per_sample_ = std::bit_cast<double>(words.next());
  }

  /// Opens a time window now.
  void open() {
    start_ns_ = now();
    elapsed_ns_ = 0;
    open_ = true;
  }

  /// Reads the clock: true when the open window has lasted W.
  bool passed() {
    elapsed_ns_ = now() - start_ns_;
    return elapsed_ns_ >= window_ns_;
  }

  /// Samples to compute before the next clock read, with `samples_in` in the open window and
  /// room for `room` more: half the time left at the window's time per sample so far (the
  /// previous window's before any; one sample for the first window), at least 1. While the
  /// time per sample holds steady a window then takes about log2 of its samples in reads and
  /// ends at most one sample past W.
  std::size_t next_check(std::size_t samples_in, std::size_t room) const {
    const double per_sample =
        samples_in > 0 ? static_cast<double>(elapsed_ns_) / static_cast<double>(samples_in)
                       : ns_per_sample_;
    if (!(per_sample > 0) || room <= 1) return 1;
    const double left = static_cast<double>(window_ns_ - elapsed_ns_);
    return static_cast<std::size_t>(
        std::clamp(std::floor(left / (2 * per_sample)), 1.0, static_cast<double>(room)));
  }

  /// Closes the open window of `samples` samples: its length goes into `lengths`, and its
  /// time per sample is the next window's first estimate.
  void close(std::size_t samples, Histogram& lengths) {
    elapsed_ns_ = now() - start_ns_;
    lengths.record(static_cast<std::uint64_t>(std::max<std::int64_t>(0, elapsed_ns_)));
    ns_per_sample_ = static_cast<double>(std::max<std::int64_t>(elapsed_ns_, 1)) /
                     static_cast<double>(std::max<std::size_t>(samples, 1));
    elapsed_ns_ = 0;
    open_ = false;
  }

  /// Forgets the open window without recording it (no sample was computed in it).
  void discard() { open_ = false; }

  /// The worker's time now.
  std::int64_t now() const { return clock_ ? clock_->now_ns() : now_ns(); }
  /// Waits `ns` (a latency): virtual time moves on, real time busy-waits.
  void wait_for(std::int64_t ns) const { wait_until(now() + ns); }

 private:
  // Once the run is asked to stop, steady-clock waits end at once, this one and every later
  // one: the worker then finishes its range at full speed and reaches the driver's stop check
  // as soon as an unslowed run would. A clock of its own keeps its waits: they are virtual
  // (instant) or the caller's to end.
  void wait_until(std::int64_t ns) const {
    if (clock_) {
      clock_->wait_until(ns);
    } else {
      busy_wait(ns, stop_);
    }
  }

  std::shared_ptr<WorkerClock> clock_;
  const std::atomic<bool>* stop_ = nullptr;  // the run's stop request, or null
  std::int64_t window_ns_ = 0;
  std::optional<SpeedSampler> speed_;
  bool open_ = false;
  std::int64_t start_ns_ = 0;
  std::int64_t begin_ns_ = 0;
  std::int64_t elapsed_ns_ = 0;  // in the open window, at the last read
  double ns_per_sample_ = 0;     // the previous window's
};

}  // namespace hogwild::detail
