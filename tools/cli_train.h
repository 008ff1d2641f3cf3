#pragma once

// `hogwild train`: one path for every model and format, from the options of the table
// (train_options.h) to the report.

#include "train_options.h"

namespace hogwild_cli {

/// Runs `hogwild train` once its options are parsed; returns the exit code.
int run_train(TrainArgs& args);

}  // namespace hogwild_cli
