#pragma once

// Helpers shared by the tests.

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "engine/rng.h"
#include "hogwild/dataset.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/generator.h"

namespace hogwild::test {

/// Three Gaussian classes in 5 dimensions, or (ring = true) an inner disc and an outer ring in
/// 2 dimensions, which no linear classifier separates.
inline DenseDataset blobs(std::size_t rows, std::uint64_t seed, bool ring = false) {
  DenseDataset d;
  d.cols = ring ? 2 : 5;
  detail::Rng rng(seed);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto label = static_cast<std::int32_t>(rng.below(ring ? 2 : 3));
    if (ring) {
      const double angle = 6.283185307179586 * rng.uniform();
      const double radius = label == 0 ? 0.5 * rng.uniform() : 0.9 + 0.4 * rng.uniform();
      d.features.push_back(static_cast<float>(radius * std::cos(angle)));
      d.features.push_back(static_cast<float>(radius * std::sin(angle)));
    } else {
      for (std::size_t j = 0; j < d.cols; ++j) {
        const double centre = (j == static_cast<std::size_t>(label)) ? 2.0 : 0.0;
        d.features.push_back(static_cast<float>(centre + 0.7 * rng.normal()));
      }
    }
    d.labels.push_back(label);
  }
  return d;
}

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

/// Checks that a report's JSON object lists each entry of `expected` (an ordered map) once, in
/// the map's order: the key as `key_of` parses it, the value as the map holds it.
template <class Map, class KeyOf>
void check_lists_in_order(const nlohmann::ordered_json& object, const Map& expected, KeyOf key_of) {
  REQUIRE(object.size() == expected.size());
  auto next = expected.begin();
  for (const auto& [key, value] : object.items()) {
    CHECK(key_of(key) == next->first);
    CHECK(value.template get<typename Map::mapped_type>() == next->second);
    ++next;
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

/// `data` with every value v of row r replaced by round(v, r): values a precision holds
/// exactly, binary data, signed values.
template <class Round>
Dataset rounded(Dataset data, Round round) {
  for (std::size_t r = 0; r < data.rows(); ++r) {
    for (auto k = data.row_offsets[r]; k < data.row_offsets[r + 1]; ++k) {
      data.values[k] = round(data.values[k], r);
    }
  }
  return data;
}

}  // namespace hogwild::test
