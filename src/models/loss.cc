#include "hogwild/loss.h"

#include "io/enum_names.h"

namespace hogwild {

namespace {

constexpr detail::EnumNames<LossKind, 3> kLosses{{{"logistic", LossKind::kLogistic},
                                                  {"hinge", LossKind::kHinge},
                                                  {"squared", LossKind::kSquared}}};

}  // namespace

LossKind parse_loss(std::string_view name) { return detail::parse_enum(kLosses, "--model", name); }

std::string_view to_string(LossKind loss) { return detail::enum_name(kLosses, loss); }

}  // namespace hogwild
