#pragma once

// `hogwild predict`: a checkpoint's model applied to examples in the format it trained on,
// labelled or not.

#include <CLI/CLI.hpp>
#include <string>

namespace hogwild_cli {

/// Options of `hogwild predict`.
struct PredictOptions {
  std::string model;   ///< --model: a checkpoint file
  std::string data;    ///< --data: examples in the format the model trained on
  std::string labels;  ///< --labels: IDX labels file (default: found beside the images)
  std::string out;     ///< --out: predictions file (default, or "-": standard output)
};

/// Adds `hogwild predict` to the application.
CLI::App* add_predict(CLI::App& app, PredictOptions& options);

/// Runs `hogwild predict`; returns the exit code.
int run_predict(const PredictOptions& options);

}  // namespace hogwild_cli
