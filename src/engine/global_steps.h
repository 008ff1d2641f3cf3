#pragma once

// Delays counted in global steps (--delay-unit global, as Dai et al. count them): for workers
// simulated on one thread, the steps every worker has ended and, per coming step, the workers
// holding updates due at it.

#include <cstdint>
#include <vector>

namespace hogwild::detail {

/// The global step clock of a simulation. An update held at global step g with delay d is due
/// at step g + d, which lies within the cap of the current step: a ring of cap + 1 lists of
/// workers, one per coming step, never allocates once each list has grown.
class GlobalSteps {
 public:
  /// For delays of at most `cap` steps.
  explicit GlobalSteps(std::uint32_t cap) : due_(std::size_t{cap} + 1) {}

  /// Steps ended so far, all workers.
  std::uint64_t now() const { return now_; }

  /// Worker `worker` holds an update due at step `due` (in [now, now + cap]).
  void note(std::uint64_t due, int worker) { due_[due % due_.size()].push_back(worker); }

  /// Ends the current step: release(worker) for each worker noted for it, in the order they
  /// were noted (a worker noted twice finds nothing left the second time), then the next step.
  template <class Release>
  void end_step(Release&& release) {
    auto& workers = due_[now_ % due_.size()];
    for (const int worker : workers) release(worker);
    workers.clear();
    ++now_;
  }

 private:
  std::vector<std::vector<int>> due_;
  std::uint64_t now_ = 0;
};

}  // namespace hogwild::detail
