#include "hogwild/policy.h"

#include <fmt/format.h>

#include "hogwild/error.h"

namespace hogwild {

Policy parse_policy(std::string_view name) {
  if (name == "racy") return Policy::kRacy;
  if (name == "atomic") return Policy::kAtomic;
  if (name == "striped") return Policy::kStriped;
  if (name == "locked") return Policy::kLocked;
  if (name == "serial") return Policy::kSerial;
  throw InputError(fmt::format(
      "--policy: expected one of racy, atomic, striped, locked, serial; found '{}'", name));
}

std::string_view to_string(Policy policy) {
  switch (policy) {
    case Policy::kRacy:
      return "racy";
    case Policy::kAtomic:
      return "atomic";
    case Policy::kStriped:
      return "striped";
    case Policy::kLocked:
      return "locked";
    case Policy::kSerial:
      break;
  }
  return "serial";
}

}  // namespace hogwild
