// The hogwild command-line tool: generate data, inspect it, train on it.
//
// Exit codes: 0 success; 2 bad usage or bad input data; 3 divergence; anything else is a bug.

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>
#include <tbb/global_control.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "cli_checkpoint.h"
#include "cli_models.h"
#include "hogwild/hogwild.h"
#include "sweep.h"

namespace {

constexpr int kExitBadInput = 2;
constexpr int kExitDiverged = 3;

constexpr const char* kExitCodes =
    "Exit codes: 0 success, 2 bad usage or bad input data, 3 training diverged, 130 interrupted "
    "(SIGINT/SIGTERM) after a clean stop.";

std::string human_rate(double per_second) {
  if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
  if (per_second >= 1e3) return fmt::format("{:.1f}k", per_second / 1e3);
  return fmt::format("{:.0f}", per_second);
}

// CLI11 says "Could not convert: --epochs = abc"; every other option error reads
// "--option: expected ..., found ...", so this one does too. The option's type comes from the
// command that was given (argv[1], and argv[2] under `gen`).
std::string conversion_message(const CLI::App& app, int argc, char** argv,
                               const std::string& what) {
  constexpr std::string_view kPrefix = "Could not convert: ";
  const auto eq = what.find(" = ");
  if (what.rfind(kPrefix, 0) != 0 || eq == std::string::npos) return what;
  const std::string name = what.substr(kPrefix.size(), eq - kPrefix.size());
  const std::string value = what.substr(eq + 3);
  const CLI::App* command = &app;
  for (int i = 1; i < std::min(argc, 3); ++i) {
    const CLI::App* sub = nullptr;
    for (const auto* candidate : command->get_subcommands({})) {
      if (candidate->get_name() == argv[i]) sub = candidate;
    }
    if (sub == nullptr) break;
    command = sub;
  }
  std::string type;
  if (const auto* option = command->get_option_no_throw(name)) type = option->get_type_name();
  const bool digits =
      !value.empty() && value.find_first_not_of("+-0123456789") == std::string::npos;
  std::string expected = "a value of type " + type;
  if (type == "INT") {
    expected = digits ? "an integer in [-2147483648, 2147483647]" : "an integer";
  } else if (type == "UINT") {
    expected = digits ? "a non-negative integer that fits in 64 bits" : "a non-negative integer";
  } else if (type == "FLOAT") {
    expected = "a number";
  }
  return fmt::format("{}: expected {}, found '{}'", name, expected, value);
}

// ---- gen sparse -------------------------------------------------------------------------

struct GenSparseOptions {
  hogwild::SparseGeneratorConfig config;
  std::string out;
  std::string test_out;
};

void add_gen_sparse(CLI::App& gen, GenSparseOptions& o) {
  auto* cmd = gen.add_subcommand(
      "sparse",
      "RCV1-like sparse binary classification: power-law feature frequencies, "
      "L2-normalised rows, labels from a hidden sparse hyperplane with label noise.");
  auto& c = o.config;
  cmd->add_option("--rows", c.rows, "training examples")->capture_default_str();
  cmd->add_option("--features", c.features, "dimension (RCV1: 47236)")->capture_default_str();
  cmd->add_option("--nnz-per-row", c.nnz_per_row, "distinct nonzeros per row")
      ->capture_default_str();
  cmd->add_option("--zipf", c.zipf,
                  "power-law exponent of feature frequencies (0 = uniform features)")
      ->capture_default_str();
  cmd->add_option("--noise", c.label_noise, "probability of flipping each label")
      ->capture_default_str();
  cmd->add_option("--density", c.hyperplane_density,
                  "fraction of features with a nonzero hidden weight")
      ->capture_default_str();
  cmd->add_option("--seed", c.seed, "random seed (same seed, same files)")->capture_default_str();
  cmd->add_option("--out", o.out, "training file to write (LIBSVM text)")->required();
  cmd->add_option("--test-rows", c.test_rows, "test examples from the same distribution")
      ->capture_default_str();
  cmd->add_option("--test-out", o.test_out, "test file to write (needs --test-rows)");
}

int run_gen_sparse(const GenSparseOptions& o) {
  if (o.config.test_rows > 0 && o.test_out.empty()) {
    throw hogwild::InputError("--test-out: expected a file name, since --test-rows > 0");
  }
  if (!o.test_out.empty() && o.config.test_rows == 0) {
    throw hogwild::InputError("--test-rows: expected a count > 0, since --test-out is given");
  }
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

// ---- info -------------------------------------------------------------------------------

int run_info(const std::string& path) {
  const auto data = hogwild::read_libsvm(path);
  const auto s = hogwild::describe(data);
  fmt::print("file:            {}\n", path);
  fmt::print("rows:            {}\n", s.rows);
  fmt::print("features:        {}\n", s.features);
  fmt::print("nnz:             {} ({:.2f} per row, max {}, density {:.3g})\n", s.nnz,
             s.mean_nnz_per_row, s.max_nnz_per_row,
             s.features ? s.mean_nnz_per_row / static_cast<double>(s.features) : 0.0);
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

// ---- train ------------------------------------------------------------------------------

struct TrainOptions {
  hogwild::TrainConfig config;
  std::string train;
  std::string test;
  std::string model = "logistic";
  std::string policy = "racy";
  std::string delay = "none";
  std::string schedule = "fixed:1";
  std::string batch_reduce = "mean";
  std::string sharding = "static";
  std::string replicate = "auto";
  std::string order = "blocks";
  std::string worker_speed;
  std::string straggler;
  std::string pause;
  CLI::App* command = nullptr;
  std::string json;
  std::string csv;
  bool compare_serial = false;
  bool quiet = false;
  std::string checkpoint;
  std::string resume;
  std::size_t max_parameters = hogwild_cli::kDefaultMaxParameters;
};

// --order: rows -> 0; blocks -> the default run length; blocks:B -> B.
std::size_t parse_order(const std::string& text) {
  if (text == "rows") return 0;
  if (text == "blocks") return hogwild::TrainConfig::kDefaultBlockRows;
  std::size_t block = 0;
  constexpr std::string_view kPrefix = "blocks:";
  if (text.starts_with(kPrefix)) {
    const char* first = text.data() + kPrefix.size();
    const char* last = text.data() + text.size();
    const auto [end, ec] = std::from_chars(first, last, block);
    if (ec == std::errc{} && end == last && first != last && block >= 1 &&
        block <= (std::size_t{1} << 24)) {
      return block;
    }
  }
  throw hogwild::InputError(fmt::format(
      "--order: expected rows, blocks or blocks:B with B in [1, 16777216], found '{}'", text));
}

void add_train(CLI::App& app, TrainOptions& o) {
  auto* cmd =
      app.add_subcommand("train", "Train a sparse linear model with lock-free parallel SGD.");
  o.command = cmd;
  cmd->footer(std::string("The step is multiplied by --decay after each epoch. ") + kExitCodes);
  auto& c = o.config;
  cmd->add_option("--train", o.train, "training data (LIBSVM/SVMlight text)")->required();
  cmd->add_option("--test", o.test,
                  "test data, evaluated every epoch (features beyond the training data's "
                  "dimension are ignored)");
  cmd->add_option("--model", o.model, "loss: logistic, hinge (linear SVM) or squared")
      ->capture_default_str();
  cmd->add_option("--policy", o.policy,
                  "how workers write shared weights: racy (Hogwild!), atomic, striped, locked, "
                  "serial (one worker, no synchronisation)")
      ->capture_default_str();
  cmd->add_option("--threads", c.threads, "worker threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--epochs", c.epochs, "passes over the training data")->capture_default_str();
  cmd->add_option("--step", c.step, "initial step size")->capture_default_str();
  cmd->add_option("--decay", c.decay, "step multiplier applied after each epoch")
      ->capture_default_str();
  cmd->add_option("--l2", c.l2, "L2 regularisation strength lambda (objective + lambda/2 |w|^2)")
      ->capture_default_str();
  cmd->add_option("--seed", c.seed, "seed of the per-epoch shuffles")->capture_default_str();
  cmd->add_option("--divergence-factor", c.divergence_factor,
                  "stop when the training loss exceeds this multiple of its initial value")
      ->capture_default_str();
  cmd->add_option("--delay", o.delay,
                  "injected delay distribution: none, const:S, uniform:S (0..S), geometric:P[:CAP] "
                  "(P(d=k) = P(1-P)^k), trace:FILE (one delay per line, cyclic); a delay d applies "
                  "an update after d more of its worker's own steps")
      ->capture_default_str();
  cmd->add_option("--staleness-sample", c.staleness_sample,
                  "fraction of updates whose staleness is measured (1 = all, 0 = off)")
      ->capture_default_str();
  cmd->add_option("--coherence-sample", c.coherence_sample,
                  "fraction of steps whose gradient coherence is measured (0 = off)")
      ->capture_default_str();
  cmd->add_option("--coherence-lag", c.coherence_lag,
                  "coherence compares a gradient with the worker's gradient this many steps back")
      ->capture_default_str();
  cmd->add_option("--simulate", c.simulate,
                  "K virtual workers stepped round-robin in one thread, each with its own delay "
                  "ring: bit-reproducible for a seed (0 = real threads)")
      ->capture_default_str();
  cmd->add_option("--schedule", o.schedule,
                  "minibatches: fixed:B (B samples per update; --batch B is shorthand) or "
                  "time:DURATION (e.g. time:200us: samples until the window has passed, then one "
                  "update)")
      ->capture_default_str();
  cmd->add_option("--batch-reduce", o.batch_reduce,
                  "an update is the mean of its samples' gradients (step independent of the batch "
                  "size, as in the fixed-time minibatch analysis) or their sum")
      ->capture_default_str();
  cmd->add_option("--max-batch", c.schedule.max_batch,
                  "a time window also closes after this many samples")
      ->capture_default_str();
  cmd->add_option("--worker-speed", o.worker_speed,
                  "relative speed of each worker in (0, 1], e.g. 1,0.25: slower workers busy-wait "
                  "(1/speed - 1) x their compute time after each sample");
  cmd->add_option("--straggler", o.straggler,
                  "shifted-exp:SHIFT:MEAN: every sample costs SHIFT plus an exponential extra "
                  "with mean MEAN (busy-wait), e.g. shifted-exp:1us:4us");
  cmd->add_option(
      "--pause", o.pause,
      "P:DURATION: before each sample, a worker stalls for DURATION with probability P");
  cmd->add_option("--replicate", o.replicate,
                  "per-worker model replicas against cache-line contention: each worker trains "
                  "a private copy and adds its changes to the shared model every M samples; "
                  "off, auto (with 2 to 17 threads, single-sample updates and a model of up to "
                  "1M weights: M = 2048 / (threads - 1), so others' updates reach a worker "
                  "within ~2048 updates) or M")
      ->capture_default_str();
  cmd->add_option("--order", o.order,
                  "the order each epoch visits the training rows: rows (a fresh random "
                  "permutation of the rows) or blocks[:B] (B consecutive stored rows at a time, "
                  "default 128, the blocks in a fresh random order, rows stored in a random order "
                  "drawn from --seed at load: reads stream through memory instead of missing the "
                  "caches on every row)")
      ->capture_default_str();
  cmd->add_option("--sharding", o.sharding,
                  "static: each worker gets an equal slice of every epoch; dynamic: workers claim "
                  "chunks of 256 samples as they go, so faster workers process more")
      ->capture_default_str();
  cmd->add_option("--evals-per-epoch", c.evals_per_epoch,
                  "training-loss evaluations per epoch for the loss-against-time curve "
                  "(evaluation time is excluded from training time)")
      ->capture_default_str();
  cmd->add_option("--json", o.json, "write the full report (config, dataset, epochs) as JSON");
  cmd->add_option("--csv", o.csv, "write one row per epoch as CSV (for plotting)");
  cmd->add_flag("--compare-serial", o.compare_serial,
                "also train with --policy serial on one thread and print the speed-up");
  cmd->add_flag("--quiet", o.quiet, "print only the summary, not the per-epoch table");
  hogwild_cli::add_checkpoint_options(*cmd, o.checkpoint, o.resume);
  hogwild_cli::add_max_parameters_option(*cmd, o.max_parameters);
}

std::string percent(const std::optional<hogwild::Evaluation>& e, bool classifier) {
  return e && classifier ? fmt::format("{:.2f}%", 100 * e->accuracy) : std::string("-");
}

std::vector<std::string> per_worker_means(const hogwild::Report& report) {
  std::vector<std::string> means;
  for (const auto& w : report.workers) means.push_back(fmt::format("{:.1f}", w.batch_sizes.mean()));
  return means;
}

void print_epoch(const hogwild::EpochRecord& r, bool classifier) {
  fmt::print(
      "{:>5} {:>9.4f} {:>12.6f} {:>12} {:>9}\n", r.epoch, r.seconds, r.train ? r.train->loss : 0.0,
      r.test ? fmt::format("{:.6f}", r.test->loss) : std::string("-"), percent(r.test, classifier));
  std::fflush(stdout);
}

void write_csv(const std::string& path, const hogwild::Report& report) {
  std::string text =
      "epoch,seconds,elapsed,step,train_loss,train_objective,train_accuracy,test_loss,"
      "test_accuracy\n";
  for (const auto& e : report.epochs) {
    text += fmt::format("{},{},{},{},{},{},{},{},{}\n", e.epoch, e.seconds, e.elapsed, e.step,
                        e.train ? fmt::format("{}", e.train->loss) : "",
                        e.train ? fmt::format("{}", e.train->objective) : "",
                        e.train ? fmt::format("{}", e.train->accuracy) : "",
                        e.test ? fmt::format("{}", e.test->loss) : "",
                        e.test ? fmt::format("{}", e.test->accuracy) : "");
  }
  hogwild_cli::write_text(path, text);
}

int run_train(TrainOptions& o) {
  auto& config = o.config;
  config.loss = hogwild::parse_loss(o.model);
  config.policy = hogwild::parse_policy(o.policy);
  config.delay = hogwild::DelaySpec::parse(o.delay);
  const auto max_batch = config.schedule.max_batch;
  config.schedule = hogwild::ScheduleSpec::parse(o.schedule);
  config.schedule.max_batch = max_batch;
  if (auto* batch = o.command->get_option_no_throw("--batch"); batch && batch->count() > 0) {
    if (o.command->get_option("--schedule")->count() > 0) {
      throw hogwild::InputError("--batch: expected either --batch or --schedule, found both");
    }
    config.schedule = hogwild::ScheduleSpec::parse("fixed:" + batch->as<std::string>());
  }
  if (o.batch_reduce != "mean" && o.batch_reduce != "sum") {
    throw hogwild::InputError(
        fmt::format("--batch-reduce: expected mean or sum, found '{}'", o.batch_reduce));
  }
  config.schedule.mean = o.batch_reduce == "mean";
  if (o.sharding != "static" && o.sharding != "dynamic") {
    throw hogwild::InputError(
        fmt::format("--sharding: expected static or dynamic, found '{}'", o.sharding));
  }
  config.dynamic_sharding = o.sharding == "dynamic";
  if (o.replicate == "off") {
    config.replicate = 0;
  } else if (o.replicate == "auto") {
    config.replicate = hogwild::TrainConfig::kReplicateAuto;
  } else {
    const auto& text = o.replicate;
    int merge_every = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), merge_every);
    if (ec != std::errc{} || end != text.data() + text.size() || merge_every < 1) {
      throw hogwild::InputError(fmt::format(
          "--replicate: expected off, auto or a count of samples between merges, found '{}'",
          text));
    }
    config.replicate = merge_every;
  }
  config.block_rows = parse_order(o.order);
  if (!o.worker_speed.empty()) config.speed.parse_speeds(o.worker_speed);
  if (!o.straggler.empty()) config.speed.parse_straggler(o.straggler);
  if (!o.pause.empty()) config.speed.parse_pause(o.pause);
  config.validate();
  const bool classifier = hogwild::is_classifier(config.loss);
  const hogwild_cli::StopOnSignal stop_on_signal;

  auto train_data = hogwild::read_libsvm(o.train);
  if (classifier) hogwild_cli::check_binary_labels(train_data, o.train);
  // Runs of stored rows must be random samples, whatever order the file is in (sorted by
  // label, say): the storage is shuffled once, from --seed, so a resumed run sees it again.
  if (config.block_rows > 0) hogwild::shuffle_rows(train_data, config.seed);
  // What a checkpoint of this run holds besides its progress; --resume must match it.
  hogwild::Checkpoint checkpoint;
  checkpoint.model = o.model;
  checkpoint.format = "libsvm";
  checkpoint.features = std::max<std::size_t>(1, train_data.num_features);
  for (const float v : hogwild::label_values(config.loss, train_data)) {
    checkpoint.labels.push_back(v);
  }
  checkpoint.config = hogwild::config_to_json(config, -1);
  // One weight per feature up to the largest index (plus per-feature L2 scales).
  hogwild_cli::check_model_size(
      o.train, hogwild::checkpoint_parameters(checkpoint), config.l2 > 0 ? 3 : 1, o.max_parameters,
      fmt::format("the largest feature index {}", train_data.num_features));
  std::optional<hogwild::Checkpoint> resumed;
  hogwild::TrainState resume_from;
  if (!o.resume.empty()) {
    resumed = hogwild_cli::load_for_resume(o.resume, checkpoint, checkpoint.config);
    resume_from = hogwild_cli::resume_state(*resumed);
  }
  std::optional<hogwild::Dataset> test_data;
  if (!o.test.empty()) test_data = hogwild::read_libsvm(o.test);
  const auto stats = hogwild::describe(train_data);
  fmt::print("data: {} rows x {} features, {} nonzeros{}\n", stats.rows, stats.features, stats.nnz,
             test_data ? fmt::format("; test: {} rows", test_data->rows()) : "");
  fmt::print("model: {}, policy: {}, {}: {}, epochs: {}, step: {}, decay: {}, l2: {}, delay: {}\n",
             o.model, o.policy, config.simulate > 0 ? "virtual workers" : "threads",
             config.workers(), config.epochs, config.step, config.decay, config.l2, o.delay);
  const int merge_every =
      config.resolved_replicate(std::max<std::size_t>(1, train_data.num_features));
  fmt::print(
      "order: {}, replicas: {}\n",
      config.block_rows > 0
          ? fmt::format("blocks of {} stored rows (storage shuffled at load)", config.block_rows)
          : std::string("a fresh permutation of the rows each epoch"),
      merge_every > 0 ? fmt::format("merged every {} samples{}", merge_every,
                                    o.replicate == "auto" ? " (auto)" : "")
                      : std::string("off"));

  hogwild::Callbacks callbacks;
  if (!o.quiet) {
    fmt::print("{:>5} {:>9} {:>12} {:>12} {:>9}\n", "epoch", "seconds", "train_loss", "test_loss",
               "test_acc");
    callbacks.on_epoch = [&](const hogwild::EpochRecord& r) { print_epoch(r, classifier); };
  }
  callbacks.stop = stop_on_signal.flag();
  if (!o.checkpoint.empty()) {
    callbacks.on_epoch_state = [&](const hogwild::TrainState& state) {
      hogwild_cli::take_state(checkpoint, state);
      hogwild::save_checkpoint(o.checkpoint, checkpoint);
    };
  }
  const hogwild::Dataset* test_ptr = test_data ? &*test_data : nullptr;
  const auto report =
      hogwild::train(config, train_data, test_ptr, callbacks, resumed ? &resume_from : nullptr);
  if (report.interrupted) {
    if (!o.json.empty()) hogwild_cli::write_text(o.json, hogwild::to_json(report) + "\n");
    if (!o.csv.empty()) write_csv(o.csv, report);
    hogwild_cli::report_interrupted(stop_on_signal, report.epochs.back().epoch, report.resumed_from,
                                    o.checkpoint);
    return hogwild_cli::kExitInterrupted;
  }
  const auto& last = report.epochs.back();
  fmt::print("{}, {} thread{}: {} samples/s ({} samples in {:.3f} s of training)\n", o.policy,
             report.config.threads, report.config.threads == 1 ? "" : "s",
             human_rate(report.samples_per_second), report.samples, report.train_seconds);
  if (config.schedule.kind == hogwild::ScheduleSpec::Kind::kTime || config.schedule.batch > 1) {
    const auto& b = report.batch_sizes;
    fmt::print("batch size: mean {:.1f} (p50 {}, p99 {}) over {} updates{}\n", b.mean(),
               b.quantile(0.5), b.quantile(0.99), b.count(),
               report.workers.size() > 1
                   ? fmt::format("; per worker mean {}", fmt::join(per_worker_means(report), ", "))
                   : "");
  }
  if (report.staleness.updates.count() > 0) {
    const auto& st = report.staleness;
    fmt::print(
        "staleness ({} measured): mean {:.2f} updates (p50 {}, p99 {}, max {}), mean {:.2f} us\n",
        st.updates.count(), st.updates.mean(), st.updates.quantile(0.5), st.updates.quantile(0.99),
        st.updates.max(), st.nanos.mean() / 1e3);
  }
  fmt::print("final: train loss {:.6f}{}\n", last.train->loss,
             last.test
                 ? fmt::format(", test loss {:.6f}{}", last.test->loss,
                               classifier ? ", test accuracy " + percent(last.test, true) : "")
                 : "");

  std::string json = hogwild::to_json(report);
  if (o.compare_serial) {
    auto serial_config = config;
    serial_config.policy = hogwild::Policy::kSerial;
    serial_config.threads = 1;
    const auto serial = hogwild::train(serial_config, train_data, test_ptr, {});
    const double speedup = report.samples_per_second / serial.samples_per_second;
    const auto& serial_last = serial.epochs.back();
    fmt::print(
        "serial, 1 thread: {} samples/s on the same data{}\n",
        human_rate(serial.samples_per_second),
        serial_last.test && classifier ? ", test accuracy " + percent(serial_last.test, true) : "");
    fmt::print("speed-up over serial: {:.2f}x\n", speedup);
    // Append the baseline to the report without re-serialising it by hand.
    json.pop_back();  // closing brace
    while (!json.empty() && (json.back() == '\n' || json.back() == ' ')) json.pop_back();
    json += fmt::format(
        ",\n  \"serial_baseline\": {{\"samples_per_second\": {}, \"final_test_accuracy\": {}, "
        "\"final_train_loss\": {}, \"speedup\": {}}}\n}}",
        serial.samples_per_second,
        serial_last.test && classifier ? fmt::format("{}", serial_last.test->accuracy) : "null",
        serial_last.train->loss, speedup);
  }
  if (!o.json.empty()) hogwild_cli::write_text(o.json, json + "\n");
  if (!o.csv.empty()) write_csv(o.csv, report);
  return 0;
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
  TrainOptions train;
  add_train(app, train);
  hogwild_cli::ModelOptions models;
  hogwild_cli::add_model_options(*app.get_subcommand("train"), models);
  hogwild_cli::GenRatingsOptions gen_ratings;
  hogwild_cli::add_gen_ratings(*gen, gen_ratings);
  hogwild_cli::SweepOptions sweep;
  auto* sweep_cmd = hogwild_cli::add_sweep(app, sweep);
  hogwild_cli::PredictOptions predict;
  hogwild_cli::add_predict(app, predict);
  std::string info_path;
  auto* info = app.add_subcommand("info", "Print statistics of a LIBSVM file.");
  info->add_option("file", info_path, "LIBSVM/SVMlight file")->required();

  std::string known;
  bool is_known = false;
  for (const auto* sub : app.get_subcommands({})) {
    known += (known.empty() ? "" : ", ") + sub->get_name();
    is_known = is_known || (argc > 1 && sub->get_name() == argv[1]);
  }
  if (argc > 1 && argv[1][0] != '-' && !is_known) {
    fmt::print(stderr, "hogwild: unknown command '{}'; expected one of {} (see --help)\n", argv[1],
               known);
    return kExitBadInput;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ConversionError& e) {
    fmt::print(stderr, "hogwild: {}\n", conversion_message(app, argc, argv, e.what()));
    return kExitBadInput;
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "hogwild: {}\n", e.what());
    return kExitBadInput;
  }

  try {
    if (gen->got_subcommand("sparse")) return run_gen_sparse(gen_sparse);
    if (app.got_subcommand("info")) return run_info(info_path);
    if (app.got_subcommand("predict")) return hogwild_cli::run_predict(predict);
    if (app.got_subcommand("sweep")) {
      sweep.train_args = sweep_cmd->remaining();
      return hogwild_cli::run_sweep(sweep);
    }
    if (gen->got_subcommand("ratings")) return hogwild_cli::run_gen_ratings(gen_ratings);
    if (app.got_subcommand("train") &&
        hogwild_cli::routes_to_models(*app.get_subcommand("train"), models)) {
      return hogwild_cli::run_model_train(*app.get_subcommand("train"), models);
    }
    if (app.got_subcommand("train")) return run_train(train);
  } catch (const hogwild::InputError& e) {
    fmt::print(stderr, "hogwild: {}\n", e.what());
    return kExitBadInput;
  } catch (const hogwild::SystemError& e) {
    fmt::print(stderr, "hogwild: {}\n", e.what());
    return kExitBadInput;
  } catch (const hogwild::DivergenceError& e) {
    fmt::print(stderr, "hogwild: {}\n", e.what());
    return kExitDiverged;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "hogwild: out of memory\n");
    return 1;
  }
  return 0;
}
