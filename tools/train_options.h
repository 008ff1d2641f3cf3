#pragma once

// The options of `hogwild train`, each declared once in one table (name, help, default,
// binding, validation, report key, resume compatibility): --help, parsing, the run's config,
// the resume check and the sweep all read it.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include "hogwild/libsvm.h"
#include "hogwild/trainer.h"

namespace hogwild_cli {

/// Default of --max-parameters: 2^30 parameters (4 GiB of floats before optimiser state).
inline constexpr std::size_t kDefaultMaxParameters = std::size_t{1} << 30;

/// Where the options of `hogwild train` land: numbers go straight to the config field they set,
/// text and what depends on the model wait here for apply().
struct TrainArgs {
  hogwild::TrainConfig config;  ///< the run's config
  /// Paths: --train, --test, --train-labels, --test-labels, --json, --csv, --checkpoint, --resume.
  std::string train, test, train_labels, test_labels, json, csv, checkpoint, resume;
  /// Specs: --model, --policy, --delay, --schedule.
  std::string model_name = "logistic", policy = "racy", delay = "none", schedule = "fixed:1";
  /// --batch-reduce, --sharding, --replicate and --order.
  std::string batch_reduce = "mean", sharding = "static", replicate = "auto", order = "blocks";
  /// The speed model: --worker-speed, --straggler, --pause ("" = none).
  std::string worker_speed, straggler, pause;
  /// --format, --hidden, --optimizer and --step-schedule.
  std::string format = "libsvm", hidden = "256", optimizer = "sgd", step_schedule = "epoch";
  std::string zero_based = "auto";                            ///< --zero-based
  std::string hot_features = "0";                             ///< --hot-features
  std::string average = "off";                                ///< --average
  std::string data_precision = "f32";                         ///< --data-precision
  std::string feature_order = "frequency";                    ///< --feature-order
  std::string weights = "f32";                                ///< --weights
  hogwild::IndexBase index_base = hogwild::IndexBase::kAuto;  ///< from --zero-based
  std::string step = "auto";                                  ///< --step: a number or auto
  std::string clock = "rounds", sample_cost = "1us";          ///< --clock, --sample-cost
  std::string read_latency = "0", write_latency = "0";        ///< --read-latency, --write-latency
  std::string delay_unit = "own";                             ///< --delay-unit
  double l2 = 0;                   ///< --l2 (the model's default unless given)
  std::size_t batch = 1;           ///< --batch (the model's default unless given)
  std::uint32_t max_batch = 4096;  ///< --max-batch
  std::size_t rank = 10;           ///< --rank
  double init_scale = 0.1;         ///< --init-scale
  std::size_t limit = 0;           ///< --limit
  std::size_t max_parameters = kDefaultMaxParameters;  ///< --max-parameters
  std::string sync = "rma";         ///< --sync: how processes started by mpirun share the model
  std::uint64_t sync_every = 1024;  ///< --sync-every: samples of a process between its merges
  int sync_bound = -1;              ///< --sync-bound: SSP across processes (rma); -1 = none
  bool compare_serial = false;      ///< --compare-serial
  bool quiet = false;               ///< --quiet
  CLI::App* command = nullptr;      ///< the parsed `train` command

  /// True when `name` ("--batch") was on the command line.
  bool given(std::string_view name) const;
};

/// Properties of an option, as bits of TrainOption::flags.
enum OptionFlag : unsigned {
  kFreeOnResume = 1,   ///< may differ between a run and the one it resumes
  kLinearOnly = 2,     ///< softmax, mlp and mf refuse it
  kModelGroup = 4,     ///< listed under "Models (softmax, mlp, mf)" in --help
  kRequired = 8,       ///< must be given
  kReportPath = 16,    ///< a report file, which `hogwild sweep` names itself
  kModelDefault = 32,  ///< its default depends on the model: --help says so, not a number
  kPath = 64,          ///< names a file: an empty value is refused, not read as "none"
  kOutput = 128,       ///< names a file to write: "-" is refused too (kPath implied)
};

/// One option of `hogwild train`. Its default is the initial value of the field it binds.
struct TrainOption {
  /// Registers the option on `train`, bound to its field of TrainArgs.
  using Bind = CLI::Option* (*)(CLI::App& train, TrainArgs& args, const TrainOption& self);
  /// Moves the parsed value into the config, checking it (InputError); the model is set first.
  using Apply = void (*)(TrainArgs& args, hogwild::TrainConfig& config);
  /// Whether the option means something in the run `config` describes: "" when it does, else
  /// what it needs and what the run has instead ("--optimizer adam, found --optimizer sgd").
  using Applies = std::string (*)(const TrainArgs& args, const hogwild::TrainConfig& config);

  std::string_view name;  ///< "--epochs"
  std::string_view key;   ///< its key in the report's `config`, "" when it has none
  unsigned flags;         ///< OptionFlag bits
  std::string_view help;  ///< the --help text
  Bind bind;              ///< where the parsed value goes
  Apply apply = nullptr;  ///< what it sets in the config beyond its binding
  /// When the option applies (unset: always); one given to a run it does not apply to is
  /// refused rather than ignored.
  Applies applies = nullptr;
};

/// CLI11 check of an option of unsigned type T: CLI11 reads "-1" as T's largest value (--limit
/// -1 as no limit) and a number beyond T's range as the largest too (--seed 2^70 as 2^64 - 1);
/// both are refused.
template <class T>
CLI::Validator unsigned_range() {
  return CLI::Validator(
      [](const std::string& value) {
        if (value.find('-') != std::string::npos) {
          return fmt::format("expected a non-negative integer, found '{}'", value);
        }
        T parsed{};
        if (std::from_chars(value.data(), value.data() + value.size(), parsed).ec ==
            std::errc::result_out_of_range) {
          return fmt::format("expected an integer in [0, {}], found '{}'",
                             std::numeric_limits<T>::max(), value);
        }
        return std::string();
      },
      "", "non-negative");
}

/// The table: every option of `hogwild train`, in --help order.
std::span<const TrainOption> train_options();

/// Adds `hogwild train` with every option of the table, bound to `args`.
CLI::App* add_train(CLI::App& app, TrainArgs& args);

/// After parsing: fills args.config from the options, in table order, and validates it; then
/// refuses an option given to a run it does not apply to (--momentum with --optimizer sgd).
/// Throws InputError("--option: expected ...").
void apply(TrainArgs& args);

/// The option that sets the report's config key `key` ("batch_reduce" -> "--batch-reduce").
std::string option_of_key(std::string_view key);

/// True when the config key `key` may differ between a run and the checkpoint it resumes.
bool free_on_resume(std::string_view key);

/// CLI11 says "Could not convert: --epochs = abc"; every other option error reads
/// "--option: expected ..., found ...", and this gives that form for a conversion error of an
/// option of `command` (other messages are returned as they are).
std::string conversion_message(const CLI::App& command, const std::string& what);

}  // namespace hogwild_cli
