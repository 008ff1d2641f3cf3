#include "hogwild/policy.h"

#include "io/enum_names.h"

namespace hogwild {

namespace {

constexpr detail::EnumNames<Policy, 5> kPolicies{{{"racy", Policy::kRacy},
                                                  {"atomic", Policy::kAtomic},
                                                  {"striped", Policy::kStriped},
                                                  {"locked", Policy::kLocked},
                                                  {"serial", Policy::kSerial}}};

}  // namespace

Policy parse_policy(std::string_view name) {
  return detail::parse_enum(kPolicies, "--policy", name);
}

std::string_view to_string(Policy policy) { return detail::enum_name(kPolicies, policy); }

}  // namespace hogwild
