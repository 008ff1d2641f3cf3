#include "row_buffers.h"

#include <algorithm>
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

// The kept storage, largest first; training calls run in several Python threads at once.
// Storage taken out of it or dropped is freed outside the lock.
struct Kept {
  std::mutex mutex;
  std::vector<Storage> copies;

  std::size_t bytes() const {
    std::size_t total = 0;
    for (const auto& copy : copies) total += copy.bytes();
    return total;
  }
};

Kept& kept() {
  static Kept k;
  return k;
}

}  // namespace

void take_row_buffers(hogwild::Dataset& data, std::size_t nnz) {
  Storage taken;
  {
    Kept& k = kept();
    const std::lock_guard lock(k.mutex);
    // Largest first: the last that holds nnz is the smallest that does. A copy of less than
    // half a storage's nonzeros leaves it to the copy it was made for: a prediction on a few
    // rows would otherwise shrink a training copy's arrays, and the next training copy would
    // zero-fill them again as it grows them back.
    auto fits = k.copies.end();
    for (auto at = k.copies.begin(); at != k.copies.end(); ++at) {
      const std::size_t room = std::min(at->indices.capacity(), at->values.capacity());
      if (room >= nnz && 2 * nnz >= room) fits = at;
    }
    if (fits == k.copies.end()) return;
    taken = std::move(*fits);
    k.copies.erase(fits);
  }
  taken.swap(data);
}

void keep_row_buffers(hogwild::Dataset&& data) {
  std::vector<Storage> dropped;
  Storage given;
  given.swap(data);
  if (given.bytes() == 0 || given.bytes() > kKeptRowBytesMax) return;
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  const auto at = std::find_if(k.copies.begin(), k.copies.end(),
                               [&](const Storage& s) { return s.bytes() < given.bytes(); });
  k.copies.insert(at, std::move(given));
  while (k.copies.size() > kKeptRowCopiesMax || k.bytes() > kKeptRowBytesMax) {
    dropped.push_back(std::move(k.copies.back()));
    k.copies.pop_back();
  }
}

std::size_t kept_row_bytes() {
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  return k.bytes();
}

std::size_t release_row_buffers() {
  std::vector<Storage> dropped;
  Kept& k = kept();
  const std::lock_guard lock(k.mutex);
  dropped.swap(k.copies);
  std::size_t total = 0;
  for (const auto& copy : dropped) total += copy.bytes();
  return total;
}

}  // namespace hogwild_python
