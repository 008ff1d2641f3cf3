#pragma once

// Bounded staleness in threads (--bounded-staleness S, stale synchronous parallel): a worker
// does not start its update c + S + 1 before every other worker has applied its update c. Each
// worker publishes its applied count in a cache line of its own after each range of samples;
// a worker reads the others' only to size its next range, never per sample, and takes no lock.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <thread>

#include "hogwild/detail/param_store.h"

namespace hogwild::detail {

/// The per-worker clocks of stale synchronous parallel training in threads.
class StalenessBound {
 public:
  /// For `workers` workers and bound `bound` (>= 0).
  StalenessBound(int workers, int bound)
      : counts_(std::make_unique<Count[]>(static_cast<std::size_t>(workers))),
        workers_(workers),
        bound_(static_cast<std::uint64_t>(bound)) {}

  /// Before a segment, while no worker runs: worker `worker` has applied `applied` updates.
  void reset(int worker, std::uint64_t applied) { count(worker).store(applied); }

  /// Worker `worker`, having applied `applied` updates, has applied them all for now.
  void publish(int worker, std::uint64_t applied) {
    count(worker).store(applied, std::memory_order_release);
  }

  /// The worker has finished its share of the segment: it no longer holds the others back.
  void retire(int worker) {
    count(worker).store(std::numeric_limits<std::uint64_t>::max(), std::memory_order_release);
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
  struct alignas(kCacheLine) Count {
    std::atomic<std::uint64_t> value{0};
  };
  std::atomic<std::uint64_t>& count(int worker) const {
    return counts_[static_cast<std::size_t>(worker)].value;
  }
  // The fewest updates any other worker has applied (the maximum when there is none): adding
  // the bound to the maximum must not wrap, so it saturates.
  std::uint64_t slowest_other(int worker) const {
    std::uint64_t slowest = std::numeric_limits<std::uint64_t>::max() - bound_ - 1;
    for (int v = 0; v < workers_; ++v) {
      if (v != worker) slowest = std::min(slowest, count(v).load(std::memory_order_acquire));
    }
    return slowest;
  }

  std::unique_ptr<Count[]> counts_;
  int workers_;
  std::uint64_t bound_;
};

}  // namespace hogwild::detail
