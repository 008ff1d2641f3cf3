#pragma once

// The checkpoint reader's contract, checked on arbitrary bytes by the fuzzer
// (fuzz_checkpoint.cc) and on the seed corpus by tests/test_fuzz_regressions.cc. On any input,
// parse_checkpoint either returns a checkpoint whose arrays have the sizes its model's shape
// implies and which serialises back to the same bytes' meaning, or throws InputError with one
// line "NAME: expected ...". Random bytes rarely get past the CRC-32, so `with_valid_crc`
// rewrites an input's length and checksum fields first: the parser behind them is fuzzed too.

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "idx_contract.h"

namespace hogwild::fuzz {

/// The input with its length (bytes 16..23) and CRC-32 (bytes 12..15) made to match the rest;
/// inputs shorter than the header come back unchanged.
inline std::string with_valid_crc(std::string_view bytes) {
  std::string fixed(bytes);
  if (fixed.size() < 24) return fixed;
  const std::uint64_t length = fixed.size() - 24;
  for (std::size_t i = 0; i < 8; ++i) fixed[16 + i] = static_cast<char>((length >> (8 * i)) & 0xff);
  const uLong crc = crc32(crc32(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(fixed.data() + 16),
                          static_cast<uInt>(fixed.size() - 16));
  for (std::size_t i = 0; i < 4; ++i) fixed[12 + i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  return fixed;
}

/// Parses `bytes` and checks the contract.
inline IdxOutcome check_checkpoint(std::string_view bytes, std::string_view name = "fuzz.ckpt") {
  IdxOutcome outcome;
  try {
    const Checkpoint c = parse_checkpoint(bytes, name);
    outcome.parsed = true;
    const std::size_t params = checkpoint_parameters(c);
    if (params == 0 || c.weights.size() != params) {
      outcome.violation = "parameters do not match the model's shape";
      return outcome;
    }
    for (const auto& buffer : c.optimizer_state) {
      if (buffer.size() != params) outcome.violation = "optimiser state of the wrong size";
    }
    // What parsed, serialises and parses back to the same checkpoint.
    const Checkpoint back = parse_checkpoint(serialize_checkpoint(c), name);
    if (back.weights != c.weights || back.optimizer_state != c.optimizer_state ||
        back.labels != c.labels || back.model != c.model || back.epoch != c.epoch ||
        back.config != c.config) {
      outcome.violation = "serialize_checkpoint output does not parse back to the same checkpoint";
    }
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
