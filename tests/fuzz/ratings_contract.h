#pragma once

// The ratings reader's contract, checked on arbitrary bytes by the fuzzer (fuzz_ratings.cc) and
// on the seed corpus by tests/test_fuzz_regressions.cc. On any input, parse_ratings either
// returns ratings whose invariants hold (one user, item and finite value per rating, ids below
// num_users/num_items) and which survive a write/read round trip unchanged, or throws
// InputError with one line "NAME:LINE: expected ...".

#include <cmath>
#include <cstddef>
#include <exception>
#include <sstream>
#include <string>
#include <string_view>

#include "hogwild/error.h"
#include "hogwild/ratings.h"
#include "libsvm_contract.h"

namespace hogwild::fuzz {

/// Returns what is wrong with ratings the reader returned, or "".
inline std::string ratings_violation(const Ratings& r, std::string_view name) {
  if (r.users.size() != r.values.size() || r.items.size() != r.values.size()) {
    return "users, items and values differ in size";
  }
  if (r.source != name) return "source is not the name passed in";
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (!std::isfinite(r.values[i])) return "non-finite rating " + std::to_string(i);
    if (r.users[i] >= r.num_users) return "user id >= num_users at " + std::to_string(i);
    if (r.items[i] >= r.num_items) return "item id >= num_items at " + std::to_string(i);
  }
  return "";
}

/// Parses `text` and checks the contract.
inline Outcome check_ratings(std::string_view text, std::string_view name = "fuzz.ratings") {
  Outcome outcome;
  try {
    const Ratings r = parse_ratings(text, name);
    outcome.parsed = true;
    outcome.violation = ratings_violation(r, name);
    if (!outcome.violation.empty()) return outcome;
    std::ostringstream out;
    write_ratings(r, out);
    const Ratings back = parse_ratings(out.str(), name);
    if (back.users != r.users || back.items != r.items || back.values != r.values) {
      outcome.violation = "write_ratings output does not read back to the same ratings";
    }
  } catch (const InputError& e) {
    outcome.error = e.what();
    outcome.violation = message_violation(outcome.error, text, name);
  } catch (const std::exception& e) {
    outcome.violation = std::string("threw something other than InputError: ") + e.what();
  } catch (...) {
    outcome.violation = "threw a non-std exception";
  }
  return outcome;
}

}  // namespace hogwild::fuzz
