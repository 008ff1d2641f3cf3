#pragma once

// Bounded staleness in threads (--bounded-staleness S, stale synchronous parallel): a worker
// does not start its update c + S + 1 before every other worker has applied its update c. The
// workers' applied counts are the ones the kernel publishes after every update, each in a cache
// line of its own (the staleness probe's counters); a worker reads the others' only to size its
// next range of samples, never per sample, and takes no lock.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <thread>

#include "engine/sampling.h"

namespace hogwild::detail {

/// The per-worker clocks of stale synchronous parallel training in threads.
class StalenessBound {
 public:
  /// Bound `bound` (>= 0) over the workers whose applied counts `published` holds, stored by
  /// each worker after every update.
  StalenessBound(std::span<const AppliedCounter> published, int bound)
      : published_(published),
        retired_(std::make_unique<Flag[]>(published.size())),
        bound_(static_cast<std::uint64_t>(bound)) {}

  /// Before a segment, while no worker runs: every worker holds the others back again.
  void reset() {
    for (std::size_t w = 0; w < published_.size(); ++w) retired_[w].value.store(false);
  }

  /// The worker has finished its share of the segment: it no longer holds the others back.
  void retire(int worker) {
    retired_[static_cast<std::size_t>(worker)].value.store(true, std::memory_order_relaxed);
  }

  /// Samples worker `worker` (with `applied` updates) may take before it looks again, each
  /// sample applying at most one update: waits (yielding) while it is S updates ahead of the
  /// slowest other worker; 0 when `stopped()` became true while it waited. A wait adds 1 to
  /// `waits` and its seconds to `waited`.
  template <class Stopped>
  std::uint64_t allowance(int worker, std::uint64_t applied, std::uint64_t& waits, double& waited,
                          Stopped&& stopped) const {
    std::uint64_t slowest = slowest_other(worker);
    if (applied <= slowest + bound_) return slowest + bound_ + 1 - applied;
    const auto start = std::chrono::steady_clock::now();
    ++waits;
    do {
      if (stopped()) return 0;
      std::this_thread::yield();
      slowest = slowest_other(worker);
    } while (applied > slowest + bound_);
    waited += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return slowest + bound_ + 1 - applied;
  }

 private:
  struct alignas(kCacheLine) Flag {
    std::atomic<bool> value{false};
  };
  // The fewest updates any other unretired worker has applied (the maximum when there is
  // none): adding the bound to the maximum must not wrap, so it saturates. Relaxed loads: a
  // count only sizes the next range; the parameters are shared without ordering anyway.
  std::uint64_t slowest_other(int worker) const {
    std::uint64_t slowest = std::numeric_limits<std::uint64_t>::max() - bound_ - 1;
    for (std::size_t v = 0; v < published_.size(); ++v) {
      if (v == static_cast<std::size_t>(worker) ||
          retired_[v].value.load(std::memory_order_relaxed)) {
        continue;
      }
      slowest = std::min(slowest, published_[v].value.load(std::memory_order_relaxed));
    }
    return slowest;
  }

  std::span<const AppliedCounter> published_;
  std::unique_ptr<Flag[]> retired_;
  std::uint64_t bound_;
};

}  // namespace hogwild::detail
