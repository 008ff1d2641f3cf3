#pragma once

// The update policies a run can choose; their implementations are in detail/policies.h.

#include <string_view>

namespace hogwild {

/// How concurrent workers write the shared parameters.
enum class Policy {
  kRacy,     ///< Hogwild!: relaxed atomic load and store per coordinate, lost updates allowed
  kAtomic,   ///< atomic read-modify-write per coordinate: no update lost
  kStriped,  ///< a spinlock per block of coordinates, taken per coordinate run
  kLocked,   ///< one mutex held for the whole update
  kSerial,   ///< one worker, plain loads and stores: the reference for every ratio
};

/// Parses "racy", "atomic", "striped", "locked" or "serial"; throws InputError otherwise.
Policy parse_policy(std::string_view name);
/// The command-line name of a policy.
std::string_view to_string(Policy policy);

}  // namespace hogwild
