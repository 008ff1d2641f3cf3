#pragma once

// The IDX reader's contract, checked on arbitrary bytes by the fuzzer (fuzz_idx.cc) and on the
// seed corpus by tests/test_fuzz_regressions.cc. On any input (plain or gzip), parse_idx_array
// either returns an array whose data holds exactly product(shape) bytes, with one size per
// dimension the header declares, or throws InputError with one line "NAME: expected ...".

#include <cstddef>
#include <exception>
#include <string>
#include <string_view>

#include "hogwild/error.h"
#include "hogwild/idx.h"

namespace hogwild::fuzz {

/// What parse_idx_array did with one input.
struct IdxOutcome {
  bool parsed = false;    ///< returned an array
  std::string error;      ///< the InputError message when it did not
  std::string violation;  ///< what broke the contract; empty when it held
};

/// Returns what is wrong with a one-line "NAME: expected ..." message, or "".
inline std::string name_message_violation(std::string_view message, std::string_view name) {
  const std::string prefix = std::string(name) + ": expected ";
  if (message.substr(0, prefix.size()) != prefix) {
    return "message does not start with 'NAME: expected '";
  }
  if (message.find_first_of("\n\r") != std::string_view::npos) return "message spans lines";
  return "";
}

/// Parses `bytes` and checks the contract.
inline IdxOutcome check_idx(std::string_view bytes, std::string_view name = "fuzz.idx") {
  IdxOutcome outcome;
  try {
    const IdxArray a = parse_idx_array(bytes, name);
    outcome.parsed = true;
    std::size_t total = 1;
    for (const auto s : a.shape) total *= s;
    if (a.shape.empty()) outcome.violation = "returned an array with no dimensions";
    if (a.data.size() != total) outcome.violation = "data size is not the product of the shape";
  } catch (const InputError& e) {
    outcome.error = e.what();
    outcome.violation = name_message_violation(outcome.error, name);
  } catch (const std::exception& e) {
    outcome.violation = std::string("threw something other than InputError: ") + e.what();
  } catch (...) {
    outcome.violation = "threw a non-std exception";
  }
  return outcome;
}

}  // namespace hogwild::fuzz
