#pragma once

// The LIBSVM reader's contract, checked on arbitrary bytes by the fuzzer (fuzz_libsvm.cc) and
// on the seed corpus and regression inputs by tests/test_fuzz_regressions.cc. On any input,
// parse_libsvm either returns a Dataset whose invariants hold, and which survives a write/read
// round trip unchanged, or throws InputError with one line "NAME:LINE: expected ..." (for
// compressed input, also "NAME: expected a complete ... stream" or "NAME: expected valid ...
// data" when it does not decompress; its lines are those of the decompressed text). Any
// other outcome (another exception type, a malformed message, a broken invariant, a crash
// caught by the sanitizers) is a bug. A file that reads whole also reads in the parts
// processes read (read_libsvm_part), which together hold its rows in order.

#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "hogwild/dataset.h"
#include "hogwild/error.h"
#include "hogwild/libsvm.h"

namespace hogwild::fuzz {

/// What parse_libsvm did with one input.
struct Outcome {
  bool parsed = false;    ///< returned a Dataset
  std::string error;      ///< the InputError message when it did not
  std::string violation;  ///< what broke the contract; empty when it held
};

/// Returns what is wrong with a Dataset the reader returned for `name`, or "".
inline std::string dataset_violation(const Dataset& d, std::string_view name) {
  const std::size_t rows = d.labels.size();
  if (rows == 0) return "returned a dataset with no rows";
  if (d.row_offsets.size() != rows + 1) return "row_offsets.size() != rows + 1";
  if (d.row_offsets.front() != 0) return "row_offsets[0] != 0";
  if (d.row_offsets.back() != d.indices.size()) return "row_offsets.back() != nnz";
  if (d.indices.size() != d.values.size()) return "indices and values differ in size";
  if (d.source != name) return "source is not the name passed in";
  std::size_t max_feature = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    if (!std::isfinite(d.labels[i])) return "non-finite label in row " + std::to_string(i);
    const auto begin = d.row_offsets[i];
    const auto end = d.row_offsets[i + 1];
    if (end < begin || end > d.indices.size()) {
      return "row_offsets not monotone at row " + std::to_string(i);
    }
    for (auto k = begin; k < end; ++k) {
      if (d.indices[k] >= d.num_features) {
        return "index >= num_features in row " + std::to_string(i);
      }
      if (k > begin && d.indices[k] <= d.indices[k - 1]) {
        return "indices not strictly increasing in row " + std::to_string(i);
      }
      if (!std::isfinite(d.values[k])) return "non-finite value in row " + std::to_string(i);
      max_feature = std::max<std::size_t>(max_feature, std::size_t{d.indices[k]} + 1);
    }
  }
  if (d.num_features != max_feature) return "num_features is not 1 + the largest index";
  return "";
}

/// True when `bytes` start as a gzip, bzip2 or xz stream, which the reader decompresses.
inline bool compressed(std::string_view bytes) {
  return bytes.substr(0, 2) == "\x1f\x8b" ||
         (bytes.substr(0, 3) == "BZh" && bytes.size() >= 4 && bytes[3] >= '1' && bytes[3] <= '9') ||
         bytes.substr(0, 6) == std::string_view(
                                   "\xfd"
                                   "7zXZ\0",
                                   6);
}

/// Returns what is wrong with an InputError message for input `text` named `name`, or "".
inline std::string message_violation(std::string_view message, std::string_view text,
                                     std::string_view name) {
  const std::string prefix = std::string(name) + ":";
  if (message.substr(0, prefix.size()) != prefix) return "message does not start with the name";
  if (message.find_first_of("\n\r") != std::string_view::npos) return "message spans lines";
  const bool packed = compressed(text);
  for (const std::string_view form : {" expected a complete ", " expected valid "}) {
    if (packed && message.substr(prefix.size(), form.size()) == form) return "";
  }
  std::string_view rest = message.substr(prefix.size());
  std::size_t digits = 0;
  std::uint64_t line = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9' && digits < 19) {
    line = line * 10 + static_cast<std::uint64_t>(rest[digits] - '0');
    ++digits;
  }
  if (digits == 0 || digits >= rest.size() || rest[digits] != ':') {
    return "message does not continue with ':<line>:'";
  }
  // Line numbers are 1-based; one past the last line is allowed for "no example found".
  std::uint64_t newlines = 0;
  for (const char c : text) newlines += c == '\n';
  // The lines of compressed input are those of the decompressed text, which is not at hand.
  if (line == 0 || (!packed && line > newlines + 2)) return "line number outside the input";
  if (rest.substr(digits + 1, 10) != " expected ") return "message does not say what was expected";
  if (message.find_first_of("\n\r") != std::string_view::npos) return "message spans lines";
  return "";
}

/// The parts of 2 and of 3 of the file at `path`, joined, against `whole`; "" when they match.
inline std::string joined_parts_violation(const std::filesystem::path& path, const Dataset& whole) {
  for (const int count : {2, 3}) {
    Dataset joined;
    for (int index = 0; index < count; ++index) {
      Dataset part = read_libsvm_part(path, {index, count});
      if (whole.zero_based) make_zero_based(part);
      for (std::size_t i = 0; i < part.rows(); ++i) {
        joined.append(part.row(i).indices, part.row(i).values, part.labels[i]);
      }
    }
    if (joined.row_offsets != whole.row_offsets || joined.indices != whole.indices ||
        joined.values != whole.values || joined.labels != whole.labels) {
      return "the parts of " + std::to_string(count) + " do not hold the file's rows";
    }
  }
  return "";
}

/// Returns what is wrong with the parts of `text` (as a file) that processes would read, when
/// the whole reads as `whole`: joined in order, with the 0-based reading where the whole has
/// it, they must hold its rows exactly; or "".
inline std::string parts_violation(std::string_view text, const Dataset& whole) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("hogwild_fuzz_parts_" + std::to_string(::getpid()) + ".svm");
  std::ofstream(path, std::ios::binary) << text;
  std::string violation;
  try {
    violation = joined_parts_violation(path, whole);
  } catch (const std::exception& e) {
    violation = std::string("a part of a file that reads whole threw: ") + e.what();
  }
  std::filesystem::remove(path);
  return violation;
}

/// Parses `text` and checks the contract.
inline Outcome check_libsvm(std::string_view text, std::string_view name = "fuzz.svm",
                            int threads = 1) {
  Outcome outcome;
  try {
    const Dataset d = parse_libsvm(text, name, {.threads = threads});
    outcome.parsed = true;
    outcome.violation = dataset_violation(d, name);
    if (!outcome.violation.empty()) return outcome;
    // What the reader accepted, the writer writes and the reader reads back exactly.
    std::ostringstream out;
    write_libsvm(d, out);
    const Dataset back = parse_libsvm(out.str(), name, {.threads = threads});
    if (back.row_offsets != d.row_offsets || back.indices != d.indices || back.values != d.values ||
        back.labels != d.labels || back.num_features != d.num_features) {
      outcome.violation = "write_libsvm output does not read back to the same dataset";
    }
    if (outcome.violation.empty() && !compressed(text))
      outcome.violation = parts_violation(text, d);
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
