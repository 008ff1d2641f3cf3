#include "hogwild/staleness.h"

#include <bit>
#include <cmath>

namespace hogwild {
namespace {
constexpr std::size_t kExact = 64;        // values below are their own bucket
constexpr std::size_t kSubBuckets = 32;   // per power of two above
constexpr std::size_t kSubBits = 5;       // log2(kSubBuckets)
constexpr std::size_t kMaxExponent = 48;  // values are clamped below 2^48
constexpr std::size_t kBuckets = kExact + (kMaxExponent - 6) * kSubBuckets;
}  // namespace

Histogram::Histogram() : counts_(kBuckets, 0) {}

std::size_t Histogram::bucket_of(std::uint64_t value) {
  if (value < kExact) return static_cast<std::size_t>(value);
  if (value >= (std::uint64_t{1} << kMaxExponent)) return kBuckets - 1;
  const std::size_t exponent = static_cast<std::size_t>(std::bit_width(value)) - 1;  // >= 6
  const std::size_t sub =
      static_cast<std::size_t>(value >> (exponent - kSubBits)) & (kSubBuckets - 1);
  return kExact + (exponent - 6) * kSubBuckets + sub;
}

std::uint64_t Histogram::lower_bound_of(std::size_t bucket) {
  if (bucket < kExact) return bucket;
  const std::size_t exponent = (bucket - kExact) / kSubBuckets + 6;
  const std::size_t sub = (bucket - kExact) % kSubBuckets;
  return (std::uint64_t{1} << exponent) + (std::uint64_t{sub} << (exponent - kSubBits));
}

void Histogram::merge(const Histogram& other) {
  for (std::size_t b = 0; b < counts_.size(); ++b) counts_[b] += other.counts_[b];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

std::uint64_t Histogram::quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= std::max<std::uint64_t>(rank, 1)) return std::min(lower_bound_of(b), max_);
  }
  return max_;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> Histogram::buckets() const {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (std::size_t b = 0; b < counts_.size(); ++b) {
    if (counts_[b]) out.emplace_back(lower_bound_of(b), counts_[b]);
  }
  return out;
}

}  // namespace hogwild
