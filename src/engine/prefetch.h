#pragma once

// Asking the caches for memory a loop will read a little later.

#include <cstddef>
#include <cstdint>

namespace hogwild::detail {

/// Asks the caches for every 64-byte line of [begin, begin + bytes): a hint, no effect on
/// results. The lines are counted as integer addresses: the same loop over a char pointer and
/// an offset left no prefetch instruction in the dense models' object code (GCC 12 deleted it).
inline void prefetch_lines(const void* begin, std::size_t bytes) {
  constexpr std::uintptr_t kLine = 64;
  const auto end = reinterpret_cast<std::uintptr_t>(begin) + bytes;
  for (auto at = reinterpret_cast<std::uintptr_t>(begin) & ~(kLine - 1); at < end; at += kLine) {
    __builtin_prefetch(reinterpret_cast<const void*>(at));
  }
}

}  // namespace hogwild::detail
