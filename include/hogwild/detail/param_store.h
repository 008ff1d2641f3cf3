#pragma once

// The shared parameter buffer and its locks: what the update policies (policies.h) work on.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace hogwild::detail {

/// Size of a cache line on the machines hogwild targets; used for alignment and padding.
inline constexpr std::size_t kCacheLine = 64;

/// A test-and-test-and-set spinlock alone on its cache line.
class alignas(kCacheLine) SpinLock {
 public:
  /// Spins until the lock is held.
  void lock() noexcept {
    for (;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    }
  }
  /// Releases the lock.
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

/// The shared parameter vector: one 64-byte-aligned float buffer, plus the locks the
/// `striped` and `locked` policies use. Reads and writes during training go through a policy
/// (policy.h); between runs the buffer may be accessed directly.
class ParamStore {
 public:
  /// Coordinates per lock stripe: one cache line of floats.
  static constexpr std::size_t kStripeBlock = kCacheLine / sizeof(float);

  /// Allocates `size` zero-initialised parameters and `stripes` spinlocks (a power of two).
  explicit ParamStore(std::size_t size, std::size_t stripes = 1024);

  /// Number of parameters.
  std::size_t size() const { return size_; }
  /// The buffer (64-byte aligned).
  float* data() { return data_.get(); }
  /// The buffer (64-byte aligned), read-only.
  const float* data() const { return data_.get(); }
  /// The buffer as a span.
  std::span<float> values() { return {data_.get(), size_}; }
  /// The buffer as a read-only span.
  std::span<const float> values() const { return {data_.get(), size_}; }
  /// Sets every parameter to `value` (not concurrently with training).
  void fill(float value);
  /// A copy of the parameters, read with relaxed atomic loads (safe during training).
  std::vector<float> snapshot() const;

  /// The spinlock guarding coordinate `i` under the `striped` policy.
  SpinLock& stripe_for(std::size_t i) { return stripes_[(i / kStripeBlock) & stripe_mask_]; }
  /// Index of the stripe guarding coordinate `i`.
  std::size_t stripe_index(std::size_t i) const { return (i / kStripeBlock) & stripe_mask_; }
  /// The global mutex of the `locked` policy.
  std::mutex& global_mutex() { return mutex_; }

 private:
  struct AlignedFree {
    void operator()(float* p) const noexcept;
  };
  std::size_t size_;
  std::unique_ptr<float[], AlignedFree> data_;
  std::unique_ptr<SpinLock[]> stripes_;
  std::size_t stripe_mask_;
  std::mutex mutex_;
};

}  // namespace hogwild::detail
