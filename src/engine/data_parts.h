#pragma once

// Training data held in parts, one per process (Callbacks::data_part): what the report says of
// the whole, from each process's part.

#include <span>
#include <vector>

#include "hogwild/dataset.h"
#include "hogwild/exchange.h"

namespace hogwild::detail {

/// Every process's `values` (of any length), rank after rank; collective.
std::vector<std::vector<double>> gathered(Exchange& exchange, std::span<const double> values);

/// The statistics of the whole data from those of this process's part; collective.
DatasetStats whole_of_parts(const DatasetStats& part, Exchange& exchange);

}  // namespace hogwild::detail
