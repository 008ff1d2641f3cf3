#pragma once

// The delay layer's queue, shared by the trainers.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hogwild::detail {

/// Updates held back by an injected delay, taken out in order of the worker step they are due
/// at, ties in order of computation. Entry has std::uint64_t members `due` and `seq`.
template <class Entry>
class DelayQueue {
 public:
  /// Room for n entries, so pushes do not allocate (at most max_delay + 1 are pending).
  void reserve(std::size_t n) { heap_.reserve(n); }
  /// No entry pending.
  bool empty() const { return heap_.empty(); }
  /// Whether the earliest entry is due at worker step `step`.
  bool due(std::uint64_t step) const { return !heap_.empty() && heap_.front().due <= step; }
  /// Holds back an entry.
  void push(const Entry& entry) {
    heap_.push_back(entry);
    std::push_heap(heap_.begin(), heap_.end(), later_first);
  }
  /// Takes out the earliest entry (the queue must not be empty).
  Entry pop() {
    std::pop_heap(heap_.begin(), heap_.end(), later_first);
    Entry entry = heap_.back();
    heap_.pop_back();
    return entry;
  }

 private:
  static bool later_first(const Entry& a, const Entry& b) {
    return a.due != b.due ? a.due > b.due : a.seq > b.seq;
  }
  std::vector<Entry> heap_;  // a heap with the earliest entry in front
};

}  // namespace hogwild::detail
