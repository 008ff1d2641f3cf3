#pragma once

// Updates on their way to the parameters (--write-latency, virtual time): sent by a worker at
// one virtual time, they land on the shared parameters a fixed latency later, while every
// worker goes on computing.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace hogwild::detail {

/// The landing order of one simulation's updates in flight: each lands `latency_ns` after it
/// was sent; updates due at the same time land in the order sent. Send times never decrease
/// for one worker, so each worker's updates land in the order that worker sent them (a FIFO
/// per worker, InFlight, holds their payloads).
class Landings {
 public:
  /// Updates land `latency_ns` (>= 0) after they are sent.
  explicit Landings(std::int64_t latency_ns) : latency_ns_(latency_ns) {}

  /// The virtual time of the step in progress: updates sent from now on leave at it.
  void set_now(std::int64_t now_ns) { now_ns_ = now_ns; }
  /// Worker `worker` sent an update now.
  void sent(int worker) { queue_.push({now_ns_ + latency_ns_, order_++, worker}); }

  /// Calls land(worker, at_ns) for every update due at or before `now_ns`, in landing order:
  /// the worker's oldest update in flight lands at `at_ns`.
  template <class Land>
  void land_until(std::int64_t now_ns, Land&& land) {
    while (!queue_.empty() && queue_.top().due_ns <= now_ns) {
      const Flight flight = queue_.top();
      queue_.pop();
      land(flight.worker, flight.due_ns);
    }
  }

 private:
  struct Flight {
    std::int64_t due_ns;
    std::uint64_t order;  // sent before every flight with a larger order
    int worker;
    bool operator>(const Flight& other) const {
      return std::pair(due_ns, order) > std::pair(other.due_ns, other.order);
    }
  };
  std::int64_t latency_ns_;
  std::int64_t now_ns_ = 0;
  std::uint64_t order_ = 0;
  std::priority_queue<Flight, std::vector<Flight>, std::greater<>> queue_;
};

/// One worker's updates in flight, oldest first: a ring that grows as needed and reuses its
/// entries, so payload vectors inside them keep their capacity and sending does not allocate
/// once the ring is as large as the most updates ever in flight at once.
template <class Entry>
class InFlight {
 public:
  /// The entry of an update sent now, at the back: a reused one, holding an older update's
  /// values, which the caller overwrites.
  Entry& push() {
    if (size_ == ring_.size()) grow();
    Entry& entry = ring_[(head_ + size_) % ring_.size()];
    ++size_;
    return entry;
  }
  /// The oldest update in flight (not empty()).
  Entry& front() { return ring_[head_]; }
  /// Drops the oldest update in flight; its entry is reused by a later push().
  void pop() {
    head_ = (head_ + 1) % ring_.size();
    --size_;
  }

 private:
  void grow() {
    std::vector<Entry> larger(std::max<std::size_t>(4, 2 * ring_.size()));
    for (std::size_t i = 0; i < ring_.size(); ++i) {
      larger[i] = std::move(ring_[(head_ + i) % ring_.size()]);
    }
    ring_ = std::move(larger);
    head_ = 0;
  }

  std::vector<Entry> ring_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace hogwild::detail
