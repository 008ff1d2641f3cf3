#pragma once

// The generators are public (hogwild/random.h); the library's own code names them here.
#include "hogwild/random.h"

namespace hogwild::detail {
using ::hogwild::derive_seed;
using ::hogwild::Rng;
using ::hogwild::splitmix64;
}  // namespace hogwild::detail
