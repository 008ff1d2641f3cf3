#pragma once

// Vectors whose storage starts on a cache line.

#include <cstddef>
#include <new>
#include <vector>

namespace hogwild::detail {

/// An allocator of storage aligned to `Alignment` bytes.
template <class T, std::size_t Alignment>
struct AlignedAllocator {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = AlignedAllocator<U, Alignment>;
  };
  AlignedAllocator() = default;
  template <class U>
  explicit AlignedAllocator(const AlignedAllocator<U, Alignment>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(Alignment)));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t(Alignment)); }
  friend bool operator==(const AlignedAllocator&, const AlignedAllocator&) { return true; }
};

/// Floats on a cache line of their own: vectorised kernels (Eigen's) split their loops at the
/// first aligned element, so the order of a sum, and its last bits, would otherwise depend on
/// where the heap put the buffer.
using AlignedFloats = std::vector<float, AlignedAllocator<float, 64>>;

}  // namespace hogwild::detail
