#include "hogwild/detail/param_store.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <new>

#include <sys/mman.h>

#include "hogwild/detail/policies.h"

namespace hogwild::detail {

namespace {
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}  // namespace

void ParamStore::AlignedFree::operator()(float* p) const noexcept { std::free(p); }

ParamStore::ParamStore(std::size_t size, std::size_t stripes)
    : size_(size), stripe_mask_(std::bit_ceil(std::max<std::size_t>(stripes, 1)) - 1) {
  // Round the allocation up to whole cache lines so vector loops may touch the tail line.
  const std::size_t bytes = std::max<std::size_t>(
      kCacheLine, (size * sizeof(float) + kCacheLine - 1) / kCacheLine * kCacheLine);
  // Stores of 2 MiB and more are aligned to, and asked for in, huge pages: one page fault per
  // 2 MiB instead of per 4 KiB on first touch (on a virtual machine a fault costs tens of
  // microseconds: zeroing a fresh 80 MB store took most of a second), and fewer TLB misses for
  // the scattered updates of a large model. Where transparent huge pages are off, advice only.
  const bool huge = bytes >= kHugePage;
  const std::size_t rounded = huge ? (bytes + kHugePage - 1) / kHugePage * kHugePage : bytes;
  data_.reset(static_cast<float*>(std::aligned_alloc(huge ? kHugePage : kCacheLine, rounded)));
  if (!data_) throw std::bad_alloc();
  if (huge) ::madvise(data_.get(), rounded, MADV_HUGEPAGE);
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
