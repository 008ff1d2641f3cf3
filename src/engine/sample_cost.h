#pragma once

// --sample-cost measured: the virtual cost of a sample taken from the model's real training
// time on this machine.

#include "hogwild/dense_dataset.h"
#include "hogwild/ratings.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// `config` with sample_cost_ns set to the model's time per sample on this machine (and
/// measure_sample_cost cleared), when it asks for it (measure_sample_cost): three serial epochs
/// over a seeded choice of up to 20,000 training examples, the fastest epoch's time divided by
/// its samples. Unchanged otherwise.
TrainConfig with_measured_sample_cost(const TrainConfig& config, const Dataset& train);
/// As above, for dense examples.
TrainConfig with_measured_sample_cost(const TrainConfig& config, const DenseDataset& train);
/// As above, for ratings.
TrainConfig with_measured_sample_cost(const TrainConfig& config, const Ratings& train);

}  // namespace hogwild::detail
