#pragma once

// Small pieces of text parsing the readers and the option specs share.

#include <fmt/format.h>

#include <charconv>
#include <string>
#include <string_view>

#include "hogwild/input.h"

namespace hogwild::detail {

/// Parses all of `text` as a T; false when any of it is not part of the number.
template <class T>
bool parse_number(std::string_view text, T& out) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && ptr == end;
}

using hogwild::quote;

/// Takes the first line off `rest` and returns it without its `#` comment.
inline std::string_view next_line(std::string_view& rest) {
  const auto newline = rest.find('\n');
  std::string_view line = rest.substr(0, newline);
  rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  return line;
}

/// An option spec `family[:args]`, split at its first colon.
struct SpecParts {
  std::string_view family;
  std::string_view args;  ///< empty without a colon
  bool has_args = false;  ///< there was a colon
};

/// Splits `spec` into its family and arguments.
inline SpecParts split_spec(std::string_view spec) {
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) return {spec, {}, false};
  return {spec.substr(0, colon), spec.substr(colon + 1), true};
}

}  // namespace hogwild::detail
