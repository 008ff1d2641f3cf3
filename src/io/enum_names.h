#pragma once

// The names of an enumeration's values, as options take them and reports write them: one table
// per enumeration gives both directions and the message for a name that is none of them.

#include <fmt/format.h>

#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "hogwild/error.h"

namespace hogwild::detail {

/// An enumeration's values and their names, in the order messages list them.
template <class Enum, std::size_t N>
using EnumNames = std::array<std::pair<std::string_view, Enum>, N>;

/// The value named `name`; InputError "`option`: expected one of ...; found 'name'" otherwise.
template <class Enum, std::size_t N>
Enum parse_enum(const EnumNames<Enum, N>& names, std::string_view option, std::string_view name) {
  std::string forms;
  for (const auto& [text, value] : names) {
    if (text == name) return value;
    forms += (forms.empty() ? "" : ", ") + std::string(text);
  }
  throw InputError(fmt::format("{}: expected one of {}; found '{}'", option, forms, name));
}

/// The name of `value` (the last name for a value the table lacks).
template <class Enum, std::size_t N>
std::string_view enum_name(const EnumNames<Enum, N>& names, Enum value) {
  for (const auto& [text, v] : names) {
    if (v == value) return text;
  }
  return names.back().first;
}

}  // namespace hogwild::detail
