#pragma once

// The delay layer's per-worker store of held-back updates: a ring of buckets.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace hogwild::detail {

/// Updates held back by an injected delay of at most `cap` worker steps, released in order of
/// the step they are due at, ties in order of computation (first in, first out).
///
/// A ring of cap + 1 buckets indexed by due step modulo (cap + 1): an update computed at step
/// t is due in [t, t + cap], and everything due before t was released at earlier steps, so the
/// pending updates' due steps span at most cap + 1 values and each bucket holds one of them.
/// Within a bucket, entries form a FIFO list through preallocated nodes: push and release are
/// O(1) and never allocate. A node's index (its slot) stays the entry's until it is released,
/// so callers keep a payload per slot (a minibatch's coordinates, a dense gradient) in storage
/// of their own sized by capacity().
///
/// Usage per worker step t: push(t + d, entry) for an update computed now (if any), then
/// release(t, apply); at the end of an epoch, flush(apply).
template <class Entry>
class DelayLine {
 public:
  /// A line for delays in [0, cap]. One update is pushed per step at most, so at most cap + 1
  /// are pending at once.
  explicit DelayLine(std::uint32_t cap = 0)
      : buckets_(std::size_t{cap} + 1), nodes_(std::size_t{cap} + 1) {
    for (std::size_t i = nodes_.size(); i > 0; --i) {
      nodes_[i - 1].next = free_;
      free_ = static_cast<std::uint32_t>(i - 1);
    }
  }

  /// Slots there are: payload storage indexed by slot needs this many entries.
  std::size_t capacity() const { return nodes_.size(); }
  /// Entries pending.
  std::size_t size() const { return size_; }
  /// No entry pending.
  bool empty() const { return size_ == 0; }

  /// Holds back `entry` until step `due`, which lies in [next step to release, that + cap].
  /// Returns the entry's slot, valid until it is released.
  std::uint32_t push(std::uint64_t due, const Entry& entry) {
    if (free_ == kNone || due < next_ || due - next_ >= buckets_.size()) {
      throw std::logic_error("DelayLine::push: due step outside the ring or no free slot");
    }
    const std::uint32_t slot = free_;
    Node& node = nodes_[slot];
    free_ = node.next;
    node.entry = entry;
    node.next = kNone;
    Bucket& bucket = buckets_[due % buckets_.size()];
    if (bucket.tail == kNone) {
      bucket.head = slot;
    } else {
      nodes_[bucket.tail].next = slot;
    }
    bucket.tail = slot;
    ++size_;
    return slot;
  }

  /// Calls apply(entry, slot) for every entry due at or before `step`, in due order, first in
  /// first out within a step; their slots are free again after each call returns.
  template <class Apply>
  void release(std::uint64_t step, Apply&& apply) {
    while (next_ <= step) {
      if (size_ == 0) {
        next_ = step + 1;
        return;
      }
      drain(buckets_[next_ % buckets_.size()], apply);
      ++next_;
    }
  }

  /// Moves past the steps before `step`, at which nothing is due (a line whose steps are
  /// another clock's, released only at steps it holds entries for).
  void advance(std::uint64_t step) {
    if (size_ == 0) {
      next_ = std::max(next_, step);
      return;
    }
    for (; next_ < step; ++next_) {
      const Bucket& bucket = buckets_[next_ % buckets_.size()];
      if (bucket.head != kNone) throw std::logic_error("DelayLine::advance: an entry was due");
    }
  }

  /// Releases every pending entry, in due order (the end of an epoch).
  template <class Apply>
  void flush(Apply&& apply) {
    for (std::uint64_t due = next_; size_ > 0; ++due) drain(buckets_[due % buckets_.size()], apply);
  }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  struct Node {
    Entry entry{};
    std::uint32_t next = kNone;
  };
  struct Bucket {
    std::uint32_t head = kNone;
    std::uint32_t tail = kNone;
  };

  template <class Apply>
  void drain(Bucket& bucket, Apply& apply) {
    for (std::uint32_t slot = bucket.head; slot != kNone;) {
      Node& node = nodes_[slot];
      const std::uint32_t next = node.next;
      apply(static_cast<const Entry&>(node.entry), slot);
      node.next = free_;
      free_ = slot;
      --size_;
      slot = next;
    }
    bucket.head = bucket.tail = kNone;
  }

  std::vector<Bucket> buckets_;
  std::vector<Node> nodes_;
  std::uint32_t free_ = kNone;  // free nodes, linked through `next`
  std::size_t size_ = 0;
  std::uint64_t next_ = 0;  // the earliest step not released yet
};

}  // namespace hogwild::detail
