#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "exit_codes.h"

namespace hogwild_cli {

/// Options of `hogwild sweep`.
struct SweepOptions {
  std::string out;                      ///< --out DIR
  std::vector<std::string> grid;        ///< --grid KEY=V1,V2,...
  std::string config;                   ///< --config FILE
  double target_loss = 0;               ///< --target-loss
  double target_accuracy = 0;           ///< --target-accuracy
  std::vector<std::string> train_args;  ///< every other argument, passed to `hogwild train`
};

/// Registers the `sweep` subcommand.
CLI::App* add_sweep(CLI::App& app, SweepOptions& options);
/// Runs the grid; returns the exit code: 0 when every run succeeded, kExitRunsFailed when any
/// failed. Throws InputError or SystemError (exit 2) when the sweep cannot start or write.
int run_sweep(SweepOptions& options);

}  // namespace hogwild_cli
