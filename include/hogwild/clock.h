#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace hogwild {

/// Where one worker reads time: how long its time windows last (--schedule time:W) and the
/// costs the speed model injects (--worker-speed, --straggler, --pause). Training reads the
/// steady clock and busy-waits; a test or a study passes a clock it drives (ManualClock), so
/// that what depends on time is exact and independent of how the OS schedules threads.
class WorkerClock {
 public:
  virtual ~WorkerClock() = default;
  /// Nanoseconds since an arbitrary origin; never decreases.
  virtual std::int64_t now_ns() = 0;
  /// Returns once now_ns() >= `ns`: an injected cost.
  virtual void wait_until(std::int64_t ns) = 0;
  /// The worker has computed `samples` more samples: the steady clock moved by itself, a
  /// manual clock moves by their cost.
  virtual void computed(std::size_t samples) = 0;
};

/// A clock that moves only by what the worker does: each computed sample costs exactly
/// `sample_ns`, and a wait jumps to its end. Used by one worker at a time.
class ManualClock final : public WorkerClock {
 public:
  /// A clock at 0 on which a sample takes `sample_ns` nanoseconds (> 0).
  explicit ManualClock(std::int64_t sample_ns) : sample_ns_(sample_ns) {}
  std::int64_t now_ns() override { return now_; }
  void wait_until(std::int64_t ns) override {
    if (ns <= now_) return;
    waited_ += ns - now_;
    now_ = ns;
  }
  void computed(std::size_t samples) override {
    now_ += sample_ns_ * static_cast<std::int64_t>(samples);
  }
  /// Nanoseconds spent in waits so far: the injected costs.
  std::int64_t waited_ns() const { return waited_; }

 private:
  std::int64_t sample_ns_;
  std::int64_t now_ = 0;
  std::int64_t waited_ = 0;
};

/// Makes worker `worker`'s clock (0-based), once per worker before training starts; the
/// caller may keep a copy to read it afterwards. Unset: every worker reads the steady clock.
using ClockFactory = std::function<std::shared_ptr<WorkerClock>(int worker)>;

}  // namespace hogwild
