#pragma once

#include <string>

#include "hogwild/trainer.h"

namespace hogwild {

/// The report as JSON: `config`, `dataset`, `epochs` (epoch, seconds, train_loss, test_loss,
/// test_accuracy, ...), `samples_per_second`, `final`. `indent` < 0 gives one line.
std::string to_json(const Report& report, int indent = 2);

/// The config as JSON, with the CLI's option names and values.
std::string config_to_json(const TrainConfig& config, int indent = 2);

}  // namespace hogwild
