#pragma once

// A worker's private replica of the parameters, merged into the shared store: what --replicate
// does for the linear kernel (whole replicas) and for the dense models of the window kernel.
// Between merges the worker reads and writes only its replica; a merge adds what the replica
// changed since the last one (replica - base) to the shared store under the policy and re-reads
// the shared store into replica and base in the same pass. Cache lines then move between cores
// once per merge instead of once per colliding write.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "engine/staleness_probe.h"
#include "engine/worker_stats.h"
#include "hogwild/detail/param_store.h"
#include "hogwild/detail/policies.h"

namespace hogwild::detail {

/// A replica's bookkeeping between merges: samples since the last one, updates made on the
/// replica and not merged yet (and how many of them are measured for staleness), and the
/// staleness reading taken when the replica last read the shared store. A replica's updates
/// count as applied, and measured ones record their staleness, at the merge that carries them:
/// the updates the others applied since the worker's last read.
struct ReplicaCounts {
  std::uint64_t since_merge = 0;        ///< samples since the last merge
  std::uint64_t unmerged = 0;           ///< updates in the replica, not in the shared store yet
  std::uint64_t unmerged_measured = 0;  ///< of which measured for staleness
  StalenessProbe::Reading refresh;      ///< when the replica last read the shared store

  /// The replica has just read the shared store.
  void refreshed(const StalenessProbe& probe) {
    since_merge = 0;
    if (probe.on()) refresh = probe.read();
  }
  /// One update made on the replica.
  void updated(bool measured) {
    ++unmerged;
    if (measured) ++unmerged_measured;
  }
  /// A merge has carried the unmerged updates to the shared store and re-read it.
  void merged(const StalenessProbe& probe, WorkerStats& stats) {
    // As for single updates, the record comes before the count it publishes.
    if (probe.on()) refresh = probe.record(refresh, stats.staleness, unmerged_measured);
    stats.applied += unmerged;
    probe.publish(stats.applied);
    unmerged = 0;
    unmerged_measured = 0;
    since_merge = 0;
  }
};

/// Rewrites the replica's change of the weights at `slots` (replica - base) as the mean change
/// of `workers` workers, so that the next merge adds it rather than the whole change. For
/// features every worker moves from the same stale read as far as its own samples ask (an
/// intercept's constant feature), the workers' sum would overshoot.
inline void to_mean_change(float* replica, const float* base, std::span<const std::uint32_t> slots,
                           int workers) {
  const float share = 1.0f / static_cast<float>(workers);
  for (const std::uint32_t slot : slots) {
    replica[slot] = base[slot] + (replica[slot] - base[slot]) * share;
  }
}

/// Copies the shared store's [0, size) into replica and base, read under P (other workers may
/// be writing).
template <class P>
void refresh_replica(const ParamStore& store, float* replica, float* base, std::size_t size) {
  const float* shared = store.data();
  for (std::size_t i = 0; i < size; ++i) replica[i] = base[i] = P::load(shared[i]);
}

#ifdef HOGWILD_X86_RELAXED_VECTORS
/// The vector merge below ran 2 workers at 1.29x the element loop's rate here (2 cores,
/// bench/interleave.sh, table f). An earlier vectorised merge (racy's dense_update, 32-byte
/// loads and stores) was level with the element loop at 2 and 4 workers on a 16-core Xeon but
/// ran 8 and 16 workers at a third and a tenth of its rate, for a reason not found; until this
/// one is measured there, more workers keep the element loop.
inline constexpr int kVectorMergeMaxWorkers = 4;

/// merge_replica for racy over whole lines [0, dim), dim a multiple of 16, with the shared store
/// read and written four floats per instruction (movups: each aligned float of it is read or
/// written whole, as by a relaxed atomic access; ThreadSanitizer builds do not compile this). A
/// quarter of the shared-store instructions of the element loop.
inline void merge_lines_x86(float* shared, float* replica, float* base, std::size_t dim) {
  for (std::size_t begin = 0; begin < dim; begin += 16) {
    __m128 delta[4];
    __m128 any = _mm_setzero_ps();
    for (int q = 0; q < 4; ++q) {
      delta[q] =
          _mm_sub_ps(_mm_loadu_ps(replica + begin + 4 * q), _mm_loadu_ps(base + begin + 4 * q));
      any = _mm_or_ps(any, _mm_cmpneq_ps(delta[q], _mm_setzero_ps()));
    }
    const bool changed = _mm_movemask_ps(any) != 0;
    for (int q = 0; q < 4; ++q) {
      float* w = shared + begin + 4 * q;
      __m128 v = relaxed_load4(w);
      if (changed) {
        v = _mm_add_ps(v, delta[q]);
        relaxed_store4(w, v);  // the line's unchanged floats get their value back
      }
      _mm_storeu_ps(replica + begin + 4 * q, v);
      _mm_storeu_ps(base + begin + 4 * q, v);
    }
  }
}
#endif

/// Adds replica - base to the shared store's [0, dim) under P, a cache line at a time, and
/// re-reads it into replica and base: lines the replica changed go through the policy's dense
/// update, the others are only re-read, so untouched lines stay where they are. (Per coordinate,
/// with a branch on each change, the racy merge ran fewer instructions but was 25-40% slower end
/// to end.) `workers` is how many merge concurrently (it picks the vector merge, which
/// ThreadSanitizer builds do not compile).
template <class P>
void merge_replica(ParamStore& store, float* replica, float* base, std::size_t dim,
                   [[maybe_unused]] int workers) {
  const float* shared = store.data();
  constexpr std::size_t kBlock = 16;  // one cache line of floats
  std::size_t whole = 0;              // lines done four floats at a time (racy, x86-64)
#ifdef HOGWILD_X86_RELAXED_VECTORS
  if constexpr (std::is_same_v<P, RacyPolicy>) {
    if (workers <= kVectorMergeMaxWorkers) {
      whole = dim / kBlock * kBlock;
      merge_lines_x86(store.data(), replica, base, whole);
    }
  }
#endif
  for (std::size_t begin = whole; begin < dim; begin += kBlock) {
    const std::size_t n = std::min(kBlock, dim - begin);
    float delta[kBlock];
    bool changed = false;
    for (std::size_t k = 0; k < n; ++k) {
      delta[k] = replica[begin + k] - base[begin + k];
      changed |= delta[k] != 0.0f;
    }
    if (!changed) {
      for (std::size_t k = 0; k < n; ++k) {
        replica[begin + k] = base[begin + k] = P::load(shared[begin + k]);
      }
      continue;
    }
    if constexpr (std::is_same_v<P, RacyPolicy>) {
      // One relaxed load and store per float, not racy's vectorised dense_update: with it the
      // merges of 8 and 16 workers on a 16-core Xeon ran end to end at a third and a tenth of
      // this loop's rate (docs/benchmarks.md, table f).
      float* w = store.data() + begin;
      for (std::size_t k = 0; k < n; ++k) {
        const float v = relaxed_load(w[k]) + delta[k];
        relaxed_store(w[k], v);
        replica[begin + k] = base[begin + k] = v;
      }
      continue;
    }
    // The policy may call the op more than once (compare-exchange); the last call's value is
    // the one stored, and the one the replica keeps.
    P::dense_update(store, begin, n, [&](float old, std::size_t k) {
      const float v = old + delta[k];
      replica[begin + k] = base[begin + k] = v;
      return v;
    });
  }
}

}  // namespace hogwild::detail
