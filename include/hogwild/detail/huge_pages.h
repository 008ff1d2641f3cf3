#pragma once

// Large buffers backed by transparent huge pages where the kernel offers them on request.

#include <cstddef>
#include <cstdint>

#ifdef __linux__
#include <sys/mman.h>
#endif

namespace hogwild::detail {

/// Buffers of at least this many bytes ask for huge pages: below it a 2 MiB page would hold
/// most of the buffer's neighbours too.
inline constexpr std::size_t kHugePagesMinBytes = std::size_t{4} << 20;

/// Fresh storage of at least this many bytes is faulted in by touch_pages before it is
/// written: one call per 2 MiB costs about a microsecond a 4 KiB page where a fault on first
/// write cost 12-14 us on a virtual machine measured (docs/python.md).
inline constexpr std::size_t kPopulateMinBytes = std::size_t{1} << 20;

/// Reserves room for `n` elements in `v` (a vector or a string), asking the kernel to back new
/// storage of at least kHugePagesMinBytes with transparent huge pages (madvise MADV_HUGEPAGE,
/// Linux, where THP is set to "always" or "madvise"). Each 4 KiB page of fresh memory otherwise
/// costs a page fault on first touch: on a virtual machine measured, copying the RCV1-like rows (75
/// MB) into fresh buffers took 0.17-0.20 s of faults against 0.015 s into reused ones
/// (docs/python.md).
template <class Container>
void reserve_on_huge_pages(Container& v, std::size_t n) {
  using T = typename Container::value_type;
  if (n <= v.capacity()) return;
  v.reserve(n);
#ifdef __linux__
  if (n * sizeof(T) >= kHugePagesMinBytes) {
    constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
    const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
    const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
    const std::uintptr_t last = (begin + n * sizeof(T)) & ~(kHuge - 1);
    // Advice only: where the kernel refuses, the buffer keeps its small pages.
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
#endif
}

/// Faults in every page of the `bytes` bytes at `begin` (storage that holds no object yet)
/// writable, from oneTBB's threads in the calling arena so that fresh memory's page faults are
/// taken on every core at once: with madvise MADV_POPULATE_WRITE (Linux 5.14) where the kernel
/// takes it, one call for 2 MiB rather than a fault per 4 KiB page of a buffer's unaligned
/// ends; else by a write of zero to each page.
void touch_pages(void* begin, std::size_t bytes);

/// Resizes `v` (a vector or a string) to `n` elements (value-initialised) on storage from
/// reserve_on_huge_pages. Where that storage is fresh and at least kPopulateMinBytes, its pages
/// are faulted in on every core first: the zero-fill of resize would take them all on one. After
/// other work has returned memory to the system, the faults of a fresh 60 MB took most of the
/// Python module's copy of the rows (docs/python.md).
template <class Container>
void resize_on_huge_pages(Container& v, std::size_t n) {
  using T = typename Container::value_type;
  const std::size_t capacity = v.capacity();
  reserve_on_huge_pages(v, n);
  const std::size_t added = n > v.size() ? n - v.size() : 0;
  if (v.capacity() != capacity && added * sizeof(T) >= kPopulateMinBytes) {
    touch_pages(v.data() + v.size(), added * sizeof(T));
  }
  v.resize(n);
}

}  // namespace hogwild::detail
