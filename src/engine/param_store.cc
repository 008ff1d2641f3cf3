#include "hogwild/detail/param_store.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

#include "hogwild/detail/policies.h"

namespace hogwild::detail {

void ParamStore::AlignedFree::operator()(float* p) const noexcept { std::free(p); }

ParamStore::ParamStore(std::size_t size, std::size_t stripes)
    : size_(size), stripe_mask_(std::bit_ceil(std::max<std::size_t>(stripes, 1)) - 1) {
  // Round the allocation up to whole cache lines so vector loops may touch the tail line.
  const std::size_t bytes = std::max<std::size_t>(
      kCacheLine, (size * sizeof(float) + kCacheLine - 1) / kCacheLine * kCacheLine);
  data_.reset(static_cast<float*>(std::aligned_alloc(kCacheLine, bytes)));
  if (!data_) throw std::bad_alloc();
  std::fill_n(data_.get(), bytes / sizeof(float), 0.0f);
  stripes_ = std::make_unique<SpinLock[]>(stripe_mask_ + 1);
}

void ParamStore::fill(float value) { std::fill_n(data_.get(), size_, value); }

std::vector<float> ParamStore::snapshot() const {
  std::vector<float> copy(size_);
  for (std::size_t i = 0; i < size_; ++i) copy[i] = relaxed_load(data_[i]);
  return copy;
}

}  // namespace hogwild::detail
