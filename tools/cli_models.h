#pragma once

// The command line for the model trainer (softmax, mlp, mf) and the ratings generator: the
// options `hogwild train` gains for them and the runs they route to.

#include <CLI/CLI.hpp>
#include <string>

#include "hogwild/optimizer.h"
#include "hogwild/ratings.h"

namespace hogwild_cli {

/// Options of `hogwild gen ratings`.
struct GenRatingsOptions {
  hogwild::RatingsGeneratorConfig config;
  std::string out;
  std::string test_out;
};

/// Options `hogwild train` takes for the model trainer, beyond the shared ones (--train,
/// --test, --model, --policy, --threads, --epochs, --step, --decay, --l2, --seed, --json,
/// --csv, --quiet), which are read from the command itself.
struct ModelOptions {
  std::string format = "libsvm";
  std::string train_labels;
  std::string test_labels;
  std::string hidden = "256";
  std::size_t rank = 10;
  double init_scale = 0.1;
  std::string optimizer = "sgd";
  std::string schedule = "epoch";
  hogwild::OptimizerConfig optimizer_config;
  std::size_t batch = 0;
  std::size_t limit = 0;
};

/// Adds `hogwild gen ratings` to `gen`.
void add_gen_ratings(CLI::App& gen, GenRatingsOptions& options);
/// Runs `hogwild gen ratings`.
int run_gen_ratings(const GenRatingsOptions& options);

/// Adds the model trainer's options to the `train` command.
void add_model_options(CLI::App& train, ModelOptions& options);
/// True when `train` must run the model trainer: --model softmax|mlp|mf, or a --format other
/// than libsvm.
bool routes_to_models(const CLI::App& train, const ModelOptions& options);
/// Runs `hogwild train` with the model trainer; returns the exit code.
int run_model_train(const CLI::App& train, const ModelOptions& options);

}  // namespace hogwild_cli
