#pragma once

// Helpers shared by the tests.

#include <nlohmann/json.hpp>

namespace hogwild::test {

/// Removes the keys that hold wall-clock measurements, so two reports of the same simulated
/// run compare equal.
inline void strip_timings(nlohmann::json& j) {
  if (j.is_object()) {
    for (const char* key :
         {"seconds", "elapsed", "train_seconds", "samples_per_second", "micros"}) {
      j.erase(key);
    }
    for (auto& [key, value] : j.items()) strip_timings(value);
  } else if (j.is_array()) {
    for (auto& value : j) strip_timings(value);
  }
}

}  // namespace hogwild::test
