#pragma once

// Update policies: how a worker reads and writes the shared ParamStore. Each policy is a type
// with static members, so the choice is made once per run (dispatch_policy) and the hot loop
// is compiled for it: no virtual call or branch per coordinate.
//
// Glossary: w = parameter buffer, idx = sparse indices, k = position within an update,
// op(old, k) = the new value of coordinate idx[k] given its current value.

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <utility>

#include "hogwild/detail/param_store.h"
#include "hogwild/policy.h"

namespace hogwild::detail {

#if defined(__SANITIZE_THREAD__)
#define HOGWILD_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define HOGWILD_TSAN 1
#endif
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(HOGWILD_TSAN)
// On x86-64 an aligned 4-byte load or store is single-copy atomic, and a relaxed atomic access
// is one plain move; these are exactly that move. GCC compiles std::atomic_ref<float> through
// an integer register (mov + movd each way, two more instructions per weight and a bypass
// between the integer and vector units, which cost racy 26% against serial on a Xeon,
// docs/benchmarks.md); movss goes straight to the vector register. ThreadSanitizer builds
// use std::atomic_ref, which it instruments, so the same code is checked there.

/// Relaxed atomic load of a float that other threads may be writing.
inline float relaxed_load(const float& x) {
  float v;
  asm("movss %1, %0" : "=x"(v) : "m"(x));
  return v;
}
/// Relaxed atomic store.
inline void relaxed_store(float& x, float v) { asm volatile("movss %1, %0" : "=m"(x) : "x"(v)); }

#define HOGWILD_X86_RELAXED_VECTORS 1
/// Four relaxed atomic loads, p[0..3], in one instruction (p 4-byte aligned).
inline __m128 relaxed_load4(const float* p) {
  __m128 v;
  asm("movups %1, %0" : "=x"(v) : "m"(*reinterpret_cast<const float(*)[4]>(p)));
  return v;
}
/// Four relaxed atomic stores, p[0..3] = v, in one instruction.
inline void relaxed_store4(float* p, __m128 v) {
  asm volatile("movups %1, %0" : "=m"(*reinterpret_cast<float(*)[4]>(p)) : "x"(v));
}
#else
/// Relaxed atomic load of a float that other threads may be writing.
inline float relaxed_load(const float& x) {
  return std::atomic_ref<float>(const_cast<float&>(x)).load(std::memory_order_relaxed);
}
/// Relaxed atomic store.
inline void relaxed_store(float& x, float v) {
  std::atomic_ref<float>(x).store(v, std::memory_order_relaxed);
}
#endif
/// dst[i] = a relaxed atomic load of src[i] for i in [0, n): a snapshot of values other threads
/// may be writing. On x86-64 four at a time (the dense models' snapshot of every parameter per
/// minibatch ran one scalar move per float).
inline void relaxed_copy(const float* src, float* dst, std::size_t n) {
  std::size_t i = 0;
#if defined(HOGWILD_X86_RELAXED_VECTORS)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(dst + i, relaxed_load4(src + i));
#endif
  for (; i < n; ++i) dst[i] = relaxed_load(src[i]);
}

/// Calls fn(k) for k = 0, 1, ..., n - 1 in that order, four calls to a loop iteration: a sparse
/// update's nonzeros are each a few instructions, and the loop's own count, compare and branch
/// per nonzero cost one serial thread 8-11% of its samples/s on the RCV1-like data
/// (docs/benchmarks.md). The same writes in the same order as the plain loop.
template <class Fn>
inline void for_each_by_four(std::size_t n, Fn&& fn) {
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    fn(k);
    fn(k + 1);
    fn(k + 2);
    fn(k + 3);
  }
  for (; k < n; ++k) fn(k);
}

/// Read-modify-write that loses no concurrent update (compare-exchange loop).
template <class Op>
inline void atomic_rmw(float& x, Op&& op) {
  std::atomic_ref<float> ref(x);
  float old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(old, op(old), std::memory_order_relaxed)) {
  }
}

/// Hogwild!: each coordinate is read and written with relaxed atomics; a concurrent write to
/// the same coordinate may be lost, never torn. Dense updates on x86-64 are the exception: a
/// documented benign race with plain vectorised accesses (see dense_update), which
/// ThreadSanitizer builds replace with the atomic loop, so they stay ThreadSanitizer-clean.
struct RacyPolicy {
  static constexpr Policy kind = Policy::kRacy;
  static constexpr bool kConcurrent = true;
  /// Reads coordinate x.
  static float load(const float& x) { return detail::relaxed_load(x); }
  /// w[idx[k]] = op(w[idx[k]], k) for every k (idx: a span or vector of 16- or 32-bit indices).
  template <class Indices, class Op>
  static void sparse_update(ParamStore& store, const Indices& idx, Op&& op) {
    float* w = store.data();
    for_each_by_four(idx.size(), [&](std::size_t k) {
      float& x = w[idx[k]];
      detail::relaxed_store(x, op(detail::relaxed_load(x), k));
    });
  }
  /// w[begin + k] = op(w[begin + k], k) for k in [0, n).
  template <class Op>
  static void dense_update(ParamStore& store, std::size_t begin, std::size_t n, Op&& op) {
    float* w = store.data() + begin;
#if defined(__x86_64__) && !defined(HOGWILD_TSAN)
    // A benign race, on purpose: plain loads and stores, so the compiler vectorises the loop
    // (a relaxed atomic access per float cannot be). On x86-64 each aligned float of a vector
    // load or store is read or written whole, so a concurrent writer's value is either seen or
    // overwritten, never torn: what the relaxed atomics give. Measured 1.5-2.9x the atomic
    // loop's dense throughput (docs/benchmarks.md, "Dense axpy"). ThreadSanitizer builds run
    // the atomic loop below, so the race is not hidden from it, only kept out of its reports.
    for (std::size_t k = 0; k < n; ++k) w[k] = op(w[k], k);
#else
    for (std::size_t k = 0; k < n; ++k)
      detail::relaxed_store(w[k], op(detail::relaxed_load(w[k]), k));
#endif
  }
};

/// Atomic read-modify-write per coordinate: every update lands.
struct AtomicPolicy {
  static constexpr Policy kind = Policy::kAtomic;
  static constexpr bool kConcurrent = true;
  /// Reads coordinate x.
  static float load(const float& x) { return detail::relaxed_load(x); }
  /// w[idx[k]] = op(w[idx[k]], k) atomically for every k.
  template <class Indices, class Op>
  static void sparse_update(ParamStore& store, const Indices& idx, Op&& op) {
    float* w = store.data();
    for (std::size_t k = 0; k < idx.size(); ++k) {
      detail::atomic_rmw(w[idx[k]], [&](float old) { return op(old, k); });
    }
  }
  /// w[begin + k] = op(w[begin + k], k) atomically for k in [0, n).
  template <class Op>
  static void dense_update(ParamStore& store, std::size_t begin, std::size_t n, Op&& op) {
    float* w = store.data() + begin;
    for (std::size_t k = 0; k < n; ++k)
      detail::atomic_rmw(w[k], [&](float old) { return op(old, k); });
  }
};

/// Striped spinlocks: coordinates in the same block share a lock, taken once per run of
/// consecutive indices in that block. Readers do not lock (relaxed loads).
struct StripedPolicy {
  static constexpr Policy kind = Policy::kStriped;
  static constexpr bool kConcurrent = true;
  /// Reads coordinate x.
  static float load(const float& x) { return detail::relaxed_load(x); }
  /// w[idx[k]] = op(w[idx[k]], k) for every k, each under its stripe's lock.
  template <class Indices, class Op>
  static void sparse_update(ParamStore& store, const Indices& idx, Op&& op) {
    float* w = store.data();
    std::size_t k = 0;
    while (k < idx.size()) {
      const std::size_t stripe = store.stripe_index(idx[k]);
      std::lock_guard guard(store.stripe_for(idx[k]));
      do {
        float& x = w[idx[k]];
        detail::relaxed_store(x, op(detail::relaxed_load(x), k));
        ++k;
      } while (k < idx.size() && store.stripe_index(idx[k]) == stripe);
    }
  }
  /// w[begin + k] = op(w[begin + k], k) for k in [0, n), block by block under the locks.
  template <class Op>
  static void dense_update(ParamStore& store, std::size_t begin, std::size_t n, Op&& op) {
    float* w = store.data();
    std::size_t i = begin;
    const std::size_t end = begin + n;
    while (i < end) {
      const std::size_t block_end =
          std::min(end, (i / ParamStore::kStripeBlock + 1) * ParamStore::kStripeBlock);
      std::lock_guard guard(store.stripe_for(i));
      for (; i < block_end; ++i)
        detail::relaxed_store(w[i], op(detail::relaxed_load(w[i]), i - begin));
    }
  }
};

/// One global mutex held for the whole update: the classic baseline.
struct LockedPolicy {
  static constexpr Policy kind = Policy::kLocked;
  static constexpr bool kConcurrent = true;
  /// Reads coordinate x.
  static float load(const float& x) { return detail::relaxed_load(x); }
  /// w[idx[k]] = op(w[idx[k]], k) for every k, under the global mutex.
  template <class Indices, class Op>
  static void sparse_update(ParamStore& store, const Indices& idx, Op&& op) {
    std::lock_guard guard(store.global_mutex());
    RacyPolicy::sparse_update(store, idx, std::forward<Op>(op));
  }
  /// w[begin + k] = op(w[begin + k], k) for k in [0, n), under the global mutex.
  template <class Op>
  static void dense_update(ParamStore& store, std::size_t begin, std::size_t n, Op&& op) {
    std::lock_guard guard(store.global_mutex());
    RacyPolicy::dense_update(store, begin, n, std::forward<Op>(op));
  }
};

/// One worker, plain loads and stores (vectorisable): the reference.
struct SerialPolicy {
  static constexpr Policy kind = Policy::kSerial;
  static constexpr bool kConcurrent = false;
  /// Reads coordinate x.
  static float load(const float& x) { return x; }
  /// w[idx[k]] = op(w[idx[k]], k) for every k.
  template <class Indices, class Op>
  static void sparse_update(ParamStore& store, const Indices& idx, Op&& op) {
    float* w = store.data();
    for_each_by_four(idx.size(), [&](std::size_t k) { w[idx[k]] = op(w[idx[k]], k); });
  }
  /// w[begin + k] = op(w[begin + k], k) for k in [0, n).
  template <class Op>
  static void dense_update(ParamStore& store, std::size_t begin, std::size_t n, Op&& op) {
    float* w = store.data() + begin;
    for (std::size_t k = 0; k < n; ++k) w[k] = op(w[k], k);
  }
};

/// Calls fn(PolicyType{}) for the policy named by `policy`: the one dispatch per run.
template <class Fn>
decltype(auto) dispatch_policy(Policy policy, Fn&& fn) {
  switch (policy) {
    case Policy::kRacy:
      return fn(RacyPolicy{});
    case Policy::kAtomic:
      return fn(AtomicPolicy{});
    case Policy::kStriped:
      return fn(StripedPolicy{});
    case Policy::kLocked:
      return fn(LockedPolicy{});
    case Policy::kSerial:
      break;
  }
  return fn(SerialPolicy{});
}

}  // namespace hogwild::detail
