#pragma once

// Pieces of minibatch scheduling (schedule.h) shared by the linear and the window kernels:
// option checks, the busy-wait of the speed model, how an epoch is cut into evaluation
// segments and into the chunks that dynamic sharding hands out.

#include <fmt/format.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/sampling.h"
#include "hogwild/error.h"
#include "hogwild/schedule.h"

namespace hogwild::detail {

/// Samples a worker claims at a time from an epoch's shuffle under dynamic sharding (one
/// atomic add per claim).
inline constexpr std::size_t kShardChunk = 256;

/// The largest value --max-batch takes.
inline constexpr std::uint32_t kMaxBatchLimit = 1u << 20;

/// Start of part k of `segments` equal parts of a range of length `len` (k = segments gives
/// len): an epoch, or a worker's slice of it, is cut into --evals-per-epoch segments.
inline std::size_t segment_start(std::size_t len, int k, int segments) {
  return len * static_cast<std::size_t>(k) / static_cast<std::size_t>(segments);
}

/// Spins until the steady clock reaches `until_ns`: the speed model's injected costs, precise
/// to the clock's resolution rather than the scheduler's. A set `stop` (the run's stop request,
/// when given) ends the wait at once: a pause may last up to an hour, far longer than a stop
/// may take.
inline void busy_wait(std::int64_t until_ns, const std::atomic<bool>* stop = nullptr) {
  while (now_ns() < until_ns) {
    // Relaxed, as the driver reads it: the flag guards no data, it only ends the wait.
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

}  // namespace hogwild::detail
