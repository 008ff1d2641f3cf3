#include "row_buffers.h"

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace hogwild_python {
namespace {

// The three arrays of a Dataset whose storage is kept.
struct Storage {
  std::vector<std::uint64_t> row_offsets;
  std::vector<std::uint32_t> indices;
  std::vector<float> values;

  std::size_t bytes() const {
    return row_offsets.capacity() * sizeof(std::uint64_t) +
           indices.capacity() * sizeof(std::uint32_t) + values.capacity() * sizeof(float);
  }
  void swap(hogwild::Dataset& data) {
    row_offsets.swap(data.row_offsets);
    indices.swap(data.indices);
    values.swap(data.values);
  }
};

// The kept storage; training calls run in several Python threads at once. Storage taken out
// of it is freed outside the lock.
struct Kept {
  std::mutex mutex;
  Storage storage;

  Storage take() {
    const std::lock_guard lock(mutex);
    return std::exchange(storage, {});
  }
};

Kept& kept() {
  static Kept k;
  return k;
}

}  // namespace

void take_row_buffers(hogwild::Dataset& data) {
  Storage taken = kept().take();
  if (taken.bytes() == 0) return;
  taken.swap(data);
  data.row_offsets.clear();
  data.indices.clear();
  data.values.clear();
}

void keep_row_buffers(hogwild::Dataset&& data) {
  Storage given;
  given.swap(data);
  if (given.bytes() > kKeptRowBytesMax) return;
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  // The smaller of the two is freed, after the lock (declared before it).
  if (given.bytes() > k.storage.bytes()) std::swap(given, k.storage);
}

std::size_t kept_row_bytes() {
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  return k.storage.bytes();
}

std::size_t release_row_buffers() { return kept().take().bytes(); }

}  // namespace hogwild_python
