#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace hogwild {

/// A histogram of non-negative integers with fixed storage: exact below 64, then 32
/// log-linear buckets per power of two (about 3% relative resolution) up to 2^48.
/// Recording never allocates.
class Histogram {
 public:
  Histogram();
  /// Adds one value.
  void record(std::uint64_t value) {
    ++counts_[bucket_of(value)];
    ++count_;
    sum_ += static_cast<double>(value);
    if (value > max_) max_ = value;
  }
  /// Adds `value` `times` times.
  void record(std::uint64_t value, std::uint64_t times) {
    counts_[bucket_of(value)] += times;
    count_ += times;
    sum_ += static_cast<double>(value) * static_cast<double>(times);
    if (times > 0 && value > max_) max_ = value;
  }
  /// Adds every value of `other`.
  void merge(const Histogram& other);
  /// Number of values recorded.
  std::uint64_t count() const { return count_; }
  /// Mean of the values (0 if none).
  double mean() const { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
  /// Largest value.
  std::uint64_t max() const { return max_; }
  /// The q-quantile (q in [0, 1]): lower bound of the bucket holding it (exact below 64).
  std::uint64_t quantile(double q) const;
  /// Non-empty buckets as (lower bound, count), ascending.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> buckets() const;

  /// Bucket index of a value.
  static std::size_t bucket_of(std::uint64_t value);
  /// Smallest value of a bucket.
  static std::uint64_t lower_bound_of(std::size_t bucket);

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  double sum_ = 0;
  std::uint64_t max_ = 0;
};

/// Measured staleness of one worker (or all): in updates applied by other workers between
/// an update's parameter read and its write, and in nanoseconds between the two.
struct StalenessStats {
  Histogram updates;  ///< staleness in other workers' updates
  Histogram nanos;    ///< read-to-write time in nanoseconds
};

/// One point of the gradient-coherence curve: mean cosine similarity between a worker's
/// gradient and its gradient `lag` steps earlier, over the updates up to `update`.
struct CoherencePoint {
  std::uint64_t update = 0;   ///< global update index at the end of the window
  double cosine = 0;          ///< mean cosine similarity in the window
  std::uint64_t samples = 0;  ///< measured pairs in the window
};

}  // namespace hogwild
