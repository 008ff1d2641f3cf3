// The hogwild command-line tool: generate data, inspect it, train on it.
//
// Exit codes: 0 success; 2 bad usage or bad input data; 3 divergence; 4 a sweep with a failed
// run; anything else is a bug.

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "cli_checkpoint.h"
#include "cli_predict.h"
#include "cli_train.h"
#include "hogwild/hogwild.h"
#include "sweep.h"
#include "train_options.h"

namespace {

using hogwild_cli::kExitBadInput;
using hogwild_cli::kExitDiverged;

constexpr const char* kExitCodes =
    "Exit codes: 0 success, 1 out of memory, 2 bad usage, bad input data or an output that "
    "cannot be written, 3 training diverged, 130 interrupted (SIGINT/SIGTERM) after a clean "
    "stop.";

// The command that was given (argv[1], and argv[2] under `gen`): the one whose option types a
// conversion error names.
const CLI::App& given_command(const CLI::App& app, int argc, char** argv) {
  const CLI::App* command = &app;
  for (int i = 1; i < std::min(argc, 3); ++i) {
    const CLI::App* sub = nullptr;
    for (const auto* candidate : command->get_subcommands({})) {
      if (candidate->get_name() == argv[i]) sub = candidate;
    }
    if (sub == nullptr) break;
    command = sub;
  }
  return *command;
}

// Adds `name` to `cmd`, bound to `value`, its current value shown as the default.
template <class T>
CLI::Option* add(CLI::App* cmd, const std::string& name, T& value, const std::string& help) {
  auto* option = cmd->add_option(name, value, help);
  if constexpr (std::is_unsigned_v<T>) option->check(hogwild_cli::unsigned_range<T>());
  return option->capture_default_str();
}

// ---- gen sparse, gen ratings ------------------------------------------------------------

// A generator's config and the files to write.
template <class Config>
struct GenOptions {
  Config config;
  std::string out, test_out;
};
using GenSparseOptions = GenOptions<hogwild::SparseGeneratorConfig>;
using GenRatingsOptions = GenOptions<hogwild::RatingsGeneratorConfig>;
using GenCtrOptions = GenOptions<hogwild::CtrGeneratorConfig>;

// Before drawing any rows (millions take seconds): --test-out is given exactly when a test set
// is asked for by `size` (--test-rows, --test-fraction), and the files can be written, apart.
template <class Config>
void check_gen_outputs(const GenOptions<Config>& o, bool test, const char* size, const char* what) {
  if (test && o.test_out.empty()) {
    throw hogwild::InputError(fmt::format("--test-out: expected a file name, since {} > 0", size));
  }
  if (!o.test_out.empty() && !test) {
    throw hogwild::InputError(
        fmt::format("{}: expected {} > 0, since --test-out is given", size, what));
  }
  hogwild_cli::check_writable(o.out);
  hogwild_cli::check_writable(o.test_out);
  const hogwild_cli::NamedFile outputs[] = {{"--out", o.out}, {"--test-out", o.test_out}};
  hogwild_cli::check_outputs_apart({}, outputs);
}

// A generator option: its name, the config field it sets and its help.
template <class Config>
struct GenFlag {
  const char* name;
  std::variant<std::size_t Config::*, double Config::*, bool Config::*> field;
  const char* help;
};

// Adds the generator command `name` with `flags`, --seed, --out and --test-out.
template <class Config>
void add_gen(CLI::App& gen, GenOptions<Config>& o, const char* name, const char* about,
             std::initializer_list<GenFlag<Config>> flags, const char* test_out_help) {
  auto* cmd = gen.add_subcommand(name, about);
  for (const auto& flag : flags) {
    std::visit(
        [&](auto field) {
          if constexpr (std::is_same_v<decltype(field), bool Config::*>) {
            cmd->add_flag(flag.name, o.config.*field, flag.help);
          } else {
            add(cmd, flag.name, o.config.*field, flag.help);
          }
        },
        flag.field);
  }
  add(cmd, "--seed", o.config.seed, "random seed (same seed, same files)");
  cmd->add_option("--out", o.out, "training file to write")
      ->required()
      ->check(hogwild_cli::output_path());
  cmd->add_option("--test-out", o.test_out, test_out_help)->check(hogwild_cli::output_path());
}

void add_gen_sparse(CLI::App& gen, GenSparseOptions& o) {
  using C = hogwild::SparseGeneratorConfig;
  add_gen<C>(gen, o, "sparse",
             "RCV1-like sparse classification: power-law feature frequencies, "
             "L2-normalised rows, labels from a hidden sparse hyperplane with label noise, or "
             "multiclass from one hyperplane per class; LIBSVM text.",
             {{"--rows", &C::rows, "training examples"},
              {"--features", &C::features, "dimension (RCV1: 47236)"},
              {"--nnz-per-row", &C::nnz_per_row, "distinct nonzeros per row"},
              {"--zipf", &C::zipf, "power-law exponent of feature frequencies (0 = uniform)"},
              {"--noise", &C::label_noise,
               "probability of flipping each label; with --regression the noise's standard "
               "deviation"},
              {"--density", &C::hyperplane_density, "fraction of features with a hidden weight"},
              {"--test-rows", &C::test_rows, "test examples from the same distribution"},
              {"--classes", &C::classes,
               "label classes: 2 gives -1/+1; K > 2 gives 0..K-1, the class of the largest "
               "margin over K hidden hyperplanes (text-like multiclass)"},
              {"--counts", &C::counts,
               "term counts (1, 2, 3 ...) as values, not tf-idf weights (scaled like any row by "
               "the default --normalize; --no-normalize keeps them whole)"},
              {"--normalize,!--no-normalize", &C::normalize,
               "scale each row to unit L2 norm (the default)"},
              {"--regression", &C::regression,
               "real-valued targets for --model squared: the hidden hyperplane's margin scaled "
               "to unit variance plus Gaussian noise (--noise, its standard deviation)"}},
             "test file to write (needs --test-rows)");
}

int run_gen_sparse(const GenSparseOptions& o) {
  check_gen_outputs(o, o.config.test_rows > 0, "--test-rows", "a count");
  const auto problem = hogwild::generate_sparse(o.config);
  hogwild::write_libsvm(problem.train, std::filesystem::path(o.out));
  if (!o.test_out.empty()) hogwild::write_libsvm(problem.test, std::filesystem::path(o.test_out));
  fmt::print(stderr, "wrote {} rows x {} features ({} nonzeros) to {}{}\n", problem.train.rows(),
             o.config.features, problem.train.nnz(), o.out,
             o.test_out.empty()
                 ? ""
                 : fmt::format(", {} test rows to {}", problem.test.rows(), o.test_out));
  return 0;
}

void add_gen_ctr(CLI::App& gen, GenCtrOptions& o) {
  using C = hogwild::CtrGeneratorConfig;
  add_gen<C>(gen, o, "ctr",
             "Click-through-rate-like data: one-hot categorical fields with power-law "
             "category frequencies, hashed into --features indices (values 1), labels +1 "
             "(click) with the probability a planted logistic model gives, -1 otherwise; "
             "LIBSVM text.",
             {{"--rows", &C::rows, "training examples"},
              {"--fields", &C::fields, "categorical fields, one active category each per row"},
              {"--categories", &C::max_categories,
               "categories of the largest field; field f of F has about this^((f+1)/F)"},
              {"--zipf", &C::zipf, "power-law exponent of category frequencies (0 = uniform)"},
              {"--features", &C::features, "hashed dimension (default 2^22)"},
              {"--positive-rate", &C::positive_rate, "mean click probability, (0, 1)"},
              {"--signal", &C::signal,
               "standard deviation of the planted logit over rows (0: labels carry no signal)"},
              {"--test-rows", &C::test_rows, "test examples from the same distribution"}},
             "test file to write (needs --test-rows)");
}

int run_gen_ctr(const GenCtrOptions& o) {
  check_gen_outputs(o, o.config.test_rows > 0, "--test-rows", "a count");
  const auto problem = hogwild::generate_ctr(o.config);
  hogwild::write_libsvm(problem.train, std::filesystem::path(o.out));
  if (!o.test_out.empty()) hogwild::write_libsvm(problem.test, std::filesystem::path(o.test_out));
  std::size_t clicks = 0;
  for (const float label : problem.train.labels) clicks += label > 0 ? 1 : 0;
  fmt::print(
      stderr,
      "wrote {} rows x {} hashed features ({} fields, {} nonzeros, {:.2f}% clicks) to {}{}\n",
      problem.train.rows(), o.config.features, o.config.fields, problem.train.nnz(),
      100.0 * static_cast<double>(clicks) / static_cast<double>(problem.train.rows()), o.out,
      o.test_out.empty() ? ""
                         : fmt::format(", {} test rows to {}", problem.test.rows(), o.test_out));
  return 0;
}

// ---- info -------------------------------------------------------------------------------

// How many features some row holds, and the largest share of the squared values one holds.
struct HeldFeatures {
  std::size_t held = 0;
  double heaviest = 0;
};

// Per-feature arrays cost 4 to 8 bytes a feature up to the largest index, which a two-line file
// can make 2^32 - 1 (17 GB of counts); over many more features than nonzeros the nonzeros,
// sorted by feature, give the same figures in memory of the data's size.
HeldFeatures held_features(const hogwild::Dataset& data) {
  HeldFeatures f;
  if (data.num_features <= 4 * data.nnz()) {
    const std::vector<std::uint32_t> counts = hogwild::feature_counts(data);
    f.heaviest = hogwild::heaviest_feature_share(data, counts);
    f.held = static_cast<std::size_t>(
        std::count_if(counts.begin(), counts.end(), [](std::uint32_t c) { return c > 0; }));
    return f;
  }
  std::vector<std::pair<std::uint32_t, double>> squares(data.nnz());
  for (std::size_t k = 0; k < data.nnz(); ++k) {
    squares[k] = {data.indices[k], double{data.values[k]} * data.values[k]};
  }
  std::sort(squares.begin(), squares.end());
  double total = 0;
  for (std::size_t k = 0; k < squares.size();) {
    double sum = 0;
    const std::uint32_t feature = squares[k].first;
    for (; k < squares.size() && squares[k].first == feature; ++k) sum += squares[k].second;
    ++f.held;
    total += sum;
    f.heaviest = std::max(f.heaviest, sum);
  }
  f.heaviest = total > 0 ? f.heaviest / total : 0;
  return f;
}

int run_info(const std::string& path) {
  const auto data = hogwild::read_libsvm(path);
  const auto s = hogwild::describe(data);
  fmt::print("file:            {}\n", path);
  fmt::print("rows:            {}\n", s.rows);
  fmt::print("features:        {}\n", s.features);
  fmt::print("nnz:             {} ({:.2f} per row, max {}, density {:.3g})\n", s.nnz,
             s.mean_nnz_per_row, s.max_nnz_per_row,
             s.features ? s.mean_nnz_per_row / static_cast<double>(s.features) : 0.0);
  fmt::print("indices:         {}\n", s.zero_based ? "0-based (an index 0 appears)" : "1-based");
  const auto [held, heaviest] = held_features(data);
  fmt::print("heaviest:        one feature holds {:.2f}% of the squared values{}\n", 100 * heaviest,
             heaviest > hogwild::TrainConfig::kMeanMergeMinShare
                 ? fmt::format(" (over {:g}%: replica merges add the workers' mean change of "
                               "its weight)",
                               100 * hogwild::TrainConfig::kMeanMergeMinShare)
                 : "");
  const bool renumbered = s.features > hogwild::TrainConfig::kFrequencyOrderMinFeatures;
  fmt::print("held:            {} of the {} features appear in some row{}\n", held, s.features,
             renumbered ? fmt::format(" (over {}: a linear run renumbers them by frequency, "
                                      "--feature-order)",
                                      hogwild::TrainConfig::kFrequencyOrderMinFeatures)
                        : "");
  fmt::print("labels:          {} distinct\n", s.label_counts.size());
  std::size_t shown = 0;
  for (const auto& [label, count] : s.label_counts) {
    if (++shown > 20) {
      fmt::print("  ... ({} more)\n", s.label_counts.size() - 20);
      break;
    }
    fmt::print("  {:>12}: {} ({:.2f}%)\n", label, count, 100.0 * count / s.rows);
  }
  return 0;
}

void add_gen_ratings(CLI::App& gen, GenRatingsOptions& o) {
  using C = hogwild::RatingsGeneratorConfig;
  add_gen<C>(gen, o, "ratings",
             "Low-rank ratings for matrix factorisation: planted factors, Gaussian noise, "
             "power-law item popularity; `user item rating` lines.",
             {{"--users", &C::users, "users (rows of the planted matrix)"},
              {"--items", &C::items, "items (columns)"},
              {"--rank", &C::rank, "rank of the planted matrix"},
              {"--density", &C::density, "fraction of entries observed, (0, 0.5]"},
              {"--noise", &C::noise, "standard deviation of the noise on each rating"},
              {"--zipf", &C::zipf, "power-law exponent of item popularity (0 = uniform)"},
              {"--test-fraction", &C::test_fraction, "fraction of ratings held out, [0, 1)"}},
             "held-out ratings to write (needs --test-fraction)");
}

int run_gen_ratings(const GenRatingsOptions& o) {
  check_gen_outputs(o, o.config.test_fraction > 0, "--test-fraction", "a fraction");
  const auto problem = hogwild::generate_ratings(o.config);
  hogwild::write_ratings(problem.train, std::filesystem::path(o.out));
  if (!o.test_out.empty()) hogwild::write_ratings(problem.test, std::filesystem::path(o.test_out));
  fmt::print(stderr, "wrote {} ratings ({} users x {} items, rank {}) to {}{}\n",
             problem.train.size(), o.config.users, o.config.items, o.config.rank, o.out,
             o.test_out.empty()
                 ? ""
                 : fmt::format(", {} test ratings to {}", problem.test.size(), o.test_out));
  return 0;
}

// What is wrong with the command words of argv, or "": a command (and gen's generator) must be
// given and known. CLI11 says only "A subcommand is required" for a missing or a misspelt one.
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  const auto word = [&](int i) { return i < argc && argv[i][0] != '-' ? argv[i] : ""; };
  const auto check = [](const CLI::App& command, std::string_view given, std::string_view what,
                        std::string_view under) -> std::string {
    std::vector<std::string> names;
    for (const auto* sub : command.get_subcommands({})) names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), given) != names.end()) return "";
    if (given.empty()) {
      return fmt::format("{}expected a {}, one of {} (see --help)", under, what,
                         fmt::join(names, ", "));
    }
    return fmt::format("{}unknown {} '{}'; expected one of {} (see --help)", under, what, given,
                       fmt::join(names, ", "));
  };
  if (argc > 1 && argv[1][0] == '-') return "";  // --help, or an option CLI11 will name
  if (std::string wrong = check(app, word(1), "command", ""); !wrong.empty()) return wrong;
  if (std::string_view(argv[1]) != "gen" || (argc > 2 && argv[2][0] == '-')) return "";
  return check(*app.get_subcommand("gen"), word(2), "generator", "gen: ");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hogwild: lock-free parallel SGD (Hogwild!) with measured and controlled staleness"};
  app.footer(kExitCodes);
  app.require_subcommand(1);
  auto* gen = app.add_subcommand("gen", "Generate synthetic datasets (seeded, deterministic).");
  gen->require_subcommand(1);
  GenSparseOptions gen_sparse;
  add_gen_sparse(*gen, gen_sparse);
  hogwild_cli::TrainArgs train;
  hogwild_cli::add_train(app, train)
      ->footer(std::string("An option the run does not use (--momentum with --optimizer sgd, "
                           "--max-batch without time windows) is refused, naming what it needs. ") +
               kExitCodes);
  GenRatingsOptions gen_ratings;
  add_gen_ratings(*gen, gen_ratings);
  GenCtrOptions gen_ctr;
  add_gen_ctr(*gen, gen_ctr);
  hogwild_cli::SweepOptions sweep;
  auto* sweep_cmd = hogwild_cli::add_sweep(app, sweep);
  hogwild_cli::PredictOptions predict;
  hogwild_cli::add_predict(app, predict);
  std::string info_path;
  auto* info = app.add_subcommand(
      "info",
      "Print statistics of a LIBSVM file: rows, features, nonzeros, index base, labels, the "
      "share of the squared values its heaviest feature holds (over 2%, replica merges add the "
      "workers' mean change of its weight), and how many features appear in some row (over 2^18 "
      "features, a "
      "linear run renumbers them by frequency).");
  info->add_option("file", info_path, "LIBSVM/SVMlight file")
      ->required()
      ->check(hogwild_cli::file_path());

  if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
    fmt::print(stderr, "hogwild: {}\n", unknown);
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ConversionError& e) {
    fmt::print(stderr, "hogwild: {}\n",
               hogwild_cli::conversion_message(given_command(app, argc, argv), e.what()));
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "hogwild: {}\n", e.what());
    return kExitBadInput;
  }

  const auto out_of_memory = [] {
    fmt::print(stderr, "hogwild: out of memory\n");
    return hogwild_cli::kExitOutOfMemory;
  };
  const auto fail = [](const std::exception& e, int code) {
    fmt::print(stderr, "hogwild: {}\n", e.what());
    return code;
  };
  try {
    int code = 0;
    if (gen->got_subcommand("sparse")) {
      code = run_gen_sparse(gen_sparse);
    } else if (gen->got_subcommand("ctr")) {
      code = run_gen_ctr(gen_ctr);
    } else if (gen->got_subcommand("ratings")) {
      code = run_gen_ratings(gen_ratings);
    } else if (app.got_subcommand("info")) {
      code = run_info(info_path);
    } else if (app.got_subcommand("predict")) {
      code = hogwild_cli::run_predict(predict);
    } else if (app.got_subcommand("sweep")) {
      sweep.train_args = sweep_cmd->remaining();
      code = hogwild_cli::run_sweep(sweep);
    } else if (app.got_subcommand("train")) {
      code = hogwild_cli::run_train(train);
    }
    // A run that printed its results to a full disk or a closed pipe has not succeeded.
    if (code == 0) hogwild_cli::flush_stdout();
    return code;
  } catch (const hogwild::InputError& e) {
    return fail(e, kExitBadInput);
  } catch (const hogwild::SystemError& e) {
    return fail(e, kExitBadInput);
  } catch (const hogwild::DivergenceError& e) {
    return fail(e, kExitDiverged);
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  } catch (const std::length_error&) {  // a size beyond what any allocation could hold
    return out_of_memory();
  }
}
