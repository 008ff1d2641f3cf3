#pragma once

// The two kernels' entry points, which hogwild::train (train.cc) chooses between by model.

#include <optional>
#include <vector>

#include "hogwild/trainer.h"
#include "models/model.h"

namespace hogwild::detail {

/// Trains a linear model (config.model holds a LinearModel) with the linear kernel.
Report train_linear(const TrainConfig& config, const Dataset& train_data, const Dataset* test_data,
                    const Callbacks& callbacks, const TrainState* resume);

/// Trains `model` on `train` with the window kernel, evaluating on `test` when given; `shape`
/// and `labels` go to the report as they are.
Report train_model(const TrainConfig& config, const Model& model, const Examples& train,
                   const std::optional<Examples>& test, DataShape shape, std::vector<double> labels,
                   const Callbacks& callbacks, const TrainState* resume);

}  // namespace hogwild::detail
