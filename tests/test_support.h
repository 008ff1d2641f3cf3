#pragma once

// Helpers shared by the tests.

#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "hogwild/dataset.h"
#include "hogwild/generator.h"

namespace hogwild::test {

/// Checks that two datasets hold the same rows, values and labels.
inline void check_same_rows(const Dataset& a, const Dataset& b) {
  CHECK(a.row_offsets == b.row_offsets);
  CHECK(a.indices == b.indices);
  CHECK(a.values == b.values);
  CHECK(a.labels == b.labels);
}

/// Removes the keys that hold wall-clock measurements, so two reports of the same simulated
/// run compare equal (nlohmann::json or ordered_json).
template <class Json>
void strip_timings(Json& j) {
  if (j.is_object()) {
    for (const char* key :
         {"seconds", "elapsed", "train_seconds", "samples_per_second", "micros", "window_micros"}) {
      j.erase(key);
    }
    for (auto& [key, value] : j.items()) strip_timings(value);
  } else if (j.is_array()) {
    for (auto& value : j) strip_timings(value);
  }
}

/// Seeded RCV1-like data: `rows` training rows of `nnz` nonzeros over `features` features,
/// and `test_rows` test rows from the same distribution.
inline SparseProblem sparse_problem(std::size_t rows, std::size_t features, std::size_t nnz,
                                    std::uint64_t seed, std::size_t test_rows = 0) {
  SparseGeneratorConfig c;
  c.rows = rows;
  c.test_rows = test_rows;
  c.features = features;
  c.nnz_per_row = nnz;
  c.seed = seed;
  return generate_sparse(c);
}

}  // namespace hogwild::test
