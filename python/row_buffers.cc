#include "row_buffers.h"

#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

namespace hogwild_python {
namespace {

// The kept storage; training calls run in several Python threads at once.
struct Kept {
  std::mutex mutex;
  std::vector<std::uint64_t> row_offsets;
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
};

Kept& kept() {
  static Kept k;
  return k;
}

std::size_t bytes_of(const std::vector<std::uint64_t>& offsets,
                     const std::vector<std::uint32_t>& indices, const std::vector<float>& values) {
  return offsets.capacity() * sizeof(std::uint64_t) + indices.capacity() * sizeof(std::uint32_t) +
         values.capacity() * sizeof(float);
}

}  // namespace

void take_row_buffers(hogwild::Dataset& data) {
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  if (bytes_of(k.row_offsets, k.indices, k.values) == 0) return;
  data.row_offsets = std::exchange(k.row_offsets, {});
  data.indices = std::exchange(k.indices, {});
  data.values = std::exchange(k.values, {});
  data.row_offsets.clear();
  data.indices.clear();
  data.values.clear();
}

void keep_row_buffers(hogwild::Dataset&& data) {
  const std::size_t bytes = bytes_of(data.row_offsets, data.indices, data.values);
  if (bytes > kKeptRowBytesMax) return;
  Kept& k = kept();
  std::vector<std::uint64_t> row_offsets;
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
  {
    const std::lock_guard lock(k.mutex);
    if (bytes <= bytes_of(k.row_offsets, k.indices, k.values)) return;
    // The smaller storage kept before is freed outside the lock.
    row_offsets = std::exchange(k.row_offsets, std::move(data.row_offsets));
    indices = std::exchange(k.indices, std::move(data.indices));
    values = std::exchange(k.values, std::move(data.values));
  }
}

std::size_t kept_row_bytes() {
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  return bytes_of(k.row_offsets, k.indices, k.values);
}

std::size_t release_row_buffers() {
  Kept& k = kept();
  std::vector<std::uint64_t> row_offsets;
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
  const std::lock_guard lock(k.mutex);
  const std::size_t bytes = bytes_of(k.row_offsets, k.indices, k.values);
  row_offsets.swap(k.row_offsets);
  indices.swap(k.indices);
  values.swap(k.values);
  return bytes;
}

}  // namespace hogwild_python
