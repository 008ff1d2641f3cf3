#include "cli_train.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <variant>

#include "cli_checkpoint.h"
#include "cli_paths.h"
#include "cli_processes.h"
#include "hogwild/hogwild.h"

namespace hogwild_cli {
namespace {

std::string human_rate(double per_second) {
  if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
  if (per_second >= 1e3) return fmt::format("{:.1f}k", per_second / 1e3);
  return fmt::format("{:.0f}", per_second);
}

std::string opt(const std::optional<double>& v, const char* spec = "{}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
}

bool is_ratings(const hogwild::TrainConfig& c) {
  return std::holds_alternative<hogwild::FactorisationModel>(c.model);
}

std::optional<double> test_value(const hogwild::EpochRecord& r,
                                 std::optional<double> hogwild::Evaluation::*value) {
  return r.test ? (*r.test).*value : std::nullopt;
}

std::optional<double> test_loss(const hogwild::EpochRecord& r) {
  return r.test ? std::optional<double>(r.test->loss) : std::nullopt;
}

void print_table_header(const hogwild::TrainConfig& c) {
  // The held-out loss of --validation-fraction, what --patience watches, comes last.
  const std::string valid = c.validation_fraction > 0 ? fmt::format(" {:>12}", "valid_loss") : "";
  if (is_ratings(c)) {
    fmt::print("{:>5} {:>9} {:>12} {:>12} {:>10} {:>10}{}\n", "epoch", "seconds", "train_loss",
               "test_loss", "train_rmse", "test_rmse", valid);
  } else {
    fmt::print("{:>5} {:>9} {:>12} {:>12} {:>9}{}\n", "epoch", "seconds", "train_loss", "test_loss",
               "test_acc", valid);
  }
}

void print_epoch(const hogwild::EpochRecord& r, const hogwild::TrainConfig& c) {
  using E = hogwild::Evaluation;
  const std::string loss = opt(test_loss(r), "{:.6f}");
  const std::string valid =
      r.validation ? fmt::format(" {:>12.6f}", r.validation->loss) : std::string();
  if (is_ratings(c)) {
    fmt::print("{:>5} {:>9.4f} {:>12.6f} {:>12} {:>10} {:>10}{}\n", r.epoch, r.seconds,
               r.train.loss, loss, opt(r.train.rmse, "{:.5f}"),
               opt(test_value(r, &E::rmse), "{:.5f}"), valid);
  } else {
    const auto accuracy = test_value(r, &E::accuracy);
    fmt::print("{:>5} {:>9.4f} {:>12.6f} {:>12} {:>9}{}\n", r.epoch, r.seconds, r.train.loss, loss,
               accuracy ? fmt::format("{:.2f}%", 100 * *accuracy) : "-", valid);
  }
}

// One row per epoch; the linear models' columns are their evaluations (the training objective),
// the others' every metric a model may report.
std::string csv(const hogwild::Report& report) {
  using E = hogwild::Evaluation;
  using Opt = std::optional<double>;
  const bool linear = hogwild::is_linear(report.config.model);
  std::string text = fmt::format(
      "epoch,seconds,elapsed,step,{}\n",
      linear ? "train_loss,train_objective,train_accuracy,test_loss,test_accuracy"
             : "train_loss,test_loss,train_accuracy,test_accuracy,train_rmse,test_rmse");
  // Virtual time (--clock virtual) is a last column, so other runs' files read as before.
  const bool virtual_time = report.config.virtual_time;
  if (virtual_time) text.insert(text.size() - 1, ",virtual_seconds");
  // --validation-fraction: the held-out examples' columns, after those.
  const bool held_out = !report.epochs.empty() && report.epochs.front().validation.has_value();
  if (held_out) text.insert(text.size() - 1, ",validation_loss,validation_accuracy");
  for (const auto& e : report.epochs) {
    text += fmt::format("{},{},{},{}", e.epoch, e.seconds, e.elapsed, e.step);
    auto values = linear ? std::vector<Opt>{e.train.loss, e.train.objective, e.train.accuracy,
                                            test_loss(e), test_value(e, &E::accuracy)}
                         : std::vector<Opt>{e.train.loss,     test_loss(e),
                                            e.train.accuracy, test_value(e, &E::accuracy),
                                            e.train.rmse,     test_value(e, &E::rmse)};
    if (virtual_time) values.push_back(e.virtual_seconds);
    if (held_out) {
      values.push_back(e.validation ? Opt(e.validation->loss) : std::nullopt);
      values.push_back(e.validation ? e.validation->accuracy : std::nullopt);
    }
    // A value that is not finite (a diverged epoch's loss) is an empty field, as JSON's null.
    for (const auto& v : values) {
      text += "," + (v && std::isfinite(*v) ? fmt::format("{}", *v) : std::string());
    }
    text += "\n";
  }
  return text;
}

std::string workers_text(const hogwild::Report& report) {
  const auto& c = report.config;
  if (c.simulate > 0) return fmt::format("{} virtual workers in one thread", c.simulate);
  const std::string threads = fmt::format("{} thread{}", c.threads, c.threads == 1 ? "" : "s");
  return report.exchange ? fmt::format("{} processes x {}", report.exchange->ranks, threads)
                         : threads;
}

// Across processes: how they shared the parameters and the staleness between them.
void print_processes(const hogwild::ExchangeSummary& x) {
  std::uint64_t merges = 0;
  for (const auto m : x.merges_per_rank) merges += m;
  const auto& st = x.staleness.updates;
  fmt::print(
      "processes: {} ({} every {} samples of a process), {} merges, rank 0 merging {:.3f} s; "
      "staleness across processes: mean {:.1f} samples (p50 {}, p99 {}, max {})\n",
      x.ranks, x.sync, x.merge_every, merges, x.merge_seconds, st.mean(), st.quantile(0.5),
      st.quantile(0.99), st.max());
  if (x.bound >= 0) {
    fmt::print("bounded staleness across processes {}: rank 0 waited {} times, {:.3f} s\n", x.bound,
               x.bound_waits, x.bound_wait_seconds);
  }
}

// The speed line, the batch sizes where they vary, and the staleness measured.
void print_summary(const hogwild::Report& report) {
  const auto& c = report.config;
  fmt::print("{}, {}: {} samples/s ({} samples in {:.3f} s of training)\n",
             hogwild::to_string(c.policy), workers_text(report),
             human_rate(report.samples_per_second), report.samples, report.train_seconds);
  if (const auto& rows = report.training_rows) {
    fmt::print(
        "training rows: {}-bit indices, values {}, {} bytes per nonzero{}{}\n", rows->index_bits,
        rows->values == "none" ? "none (every value is 1)" : rows->values, rows->bytes_per_nonzero,
        rows->renumbered ? ", features renumbered by frequency" : "",
        c.weights == hogwild::WeightPrecision::kBf16 ? "; weights bf16 (stochastic rounding)" : "");
  }
  if (c.schedule->kind == hogwild::ScheduleSpec::Kind::kTime || c.schedule->batch > 1 ||
      c.speed.active()) {
    const auto& b = report.batch_sizes;
    std::string means;
    for (const auto& w : report.workers) {
      means += fmt::format("{}{:.1f}", means.empty() ? "" : ", ", w.batch_sizes.mean());
    }
    fmt::print("batch size: mean {:.1f} (p50 {}, p99 {}) over {} updates{}\n", b.mean(),
               b.quantile(0.5), b.quantile(0.99), b.count(),
               report.workers.size() > 1 ? "; per worker mean " + means : "");
  }
  if (const auto& c = report.step_calibration) {
    const bool no_gain = c->inconclusive && !c->beats_start();
    const std::string below =
        no_gain           ? "the model's default: the initial model's loss below or within 0.1% of "
        : c->inconclusive ? "the model's default: every step's loss within 0.1% of "
        : c->chosen != c->pick ? fmt::format("the half-decade below {:g}, ", c->pick)
                               : "";
    const std::string near = !c->inconclusive && c->pick != c->best
                                 ? fmt::format("the largest step within {:g}% of {:g}'s, ",
                                               100 * hogwild::StepCalibration::kFlatBottom, c->best)
                                 : "";
    fmt::print(
        "step auto: {:g} ({}{}the lowest held-out loss after one pass over {} examples; tried "
        "{:g} in {:.3f} s, counted in the training time)\n",
        c->chosen, below, near, c->sample_rows, fmt::join(c->steps, ", "), c->seconds);
  }
  if (!report.epochs.empty() && report.epochs.back().virtual_seconds) {
    const double seconds = *report.epochs.back().virtual_seconds;
    fmt::print("virtual time: {:.6g} s ({} samples/s of virtual time, a sample costing {} ns{})\n",
               seconds, human_rate(seconds > 0 ? report.samples / seconds : 0.0), c.sample_cost_ns,
               c.measure_sample_cost ? ", measured" : "");
  }
  if (c.bounded_staleness >= 0) {
    std::uint64_t waits = 0;
    double waited = 0;
    for (const auto& w : report.workers) {
      waits += w.bound_waits;
      waited += w.bound_wait_seconds;
    }
    fmt::print("bounded staleness {}: workers waited for the slowest {} times, {:.6g} {}s in all\n",
               c.bounded_staleness, waits, waited, c.virtual_time ? "virtual " : "");
  }
  if (report.exchange) print_processes(*report.exchange);
  if (const auto& st = report.staleness; st.updates.count() > 0) {
    fmt::print(
        "staleness ({} measured): mean {:.2f} updates (p50 {}, p99 {}, max {}), mean {:.2f} us{}\n",
        st.updates.count(), st.updates.mean(), st.updates.quantile(0.5), st.updates.quantile(0.99),
        st.updates.max(), st.nanos.mean() / 1e3, c.virtual_time ? " of virtual time" : "");
  }
}

std::string final_line(const hogwild::Report& report) {
  const auto& last = report.epochs.back();
  std::string line = fmt::format("final: train loss {:.6f}", last.train.loss);
  if (last.train.rmse) line += fmt::format(", train rmse {:.5f}", *last.train.rmse);
  if (last.test) line += fmt::format(", test loss {:.6f}", last.test->loss);
  if (last.test && last.test->accuracy) {
    line += fmt::format(", test accuracy {:.2f}%", 100 * *last.test->accuracy);
  }
  if (last.test && last.test->rmse) line += fmt::format(", test rmse {:.5f}", *last.test->rmse);
  if (report.stopped == hogwild::StopReason::kConverged) {
    line += fmt::format("; converged after epoch {} (--patience)", last.epoch);
  }
  if (report.stopped == hogwild::StopReason::kPlateau) {
    line += fmt::format(
        "; converged after epoch {} (a plateau with the step at its floor, --step-schedule "
        "plateau)",
        last.epoch);
  }
  return line;
}

// --compare-serial: prints the serial run and the speed-up; returns `json` with the baseline.
std::string with_baseline(const std::string& json, const hogwild::Report& report,
                          const hogwild::Report& serial) {
  const double speedup = report.samples_per_second / serial.samples_per_second;
  const auto accuracy = test_value(serial.epochs.back(), &hogwild::Evaluation::accuracy);
  fmt::print("serial, 1 thread: {} samples/s on the same data{}\n",
             human_rate(serial.samples_per_second),
             accuracy ? fmt::format(", test accuracy {:.2f}%", 100 * *accuracy) : "");
  fmt::print("speed-up over serial: {:.2f}x\n", speedup);
  auto parsed = nlohmann::ordered_json::parse(json);
  parsed["serial_baseline"] = {
      {"samples_per_second", serial.samples_per_second},
      {"final", nlohmann::ordered_json::parse(hogwild::to_json(serial))["final"]},
      {"speedup", speedup}};
  return parsed.dump(2);
}

// A run about to start: what its checkpoints hold besides progress (--resume must match it),
// how its model size reads in an error, and the lines that describe it.
struct Plan {
  hogwild::Checkpoint checkpoint;
  std::size_t copies = 1;  // arrays of 4 bytes a parameter (model_sized_arrays)
  std::string cause;       // what makes the model as large as it is
  std::string header;      // the data line; the model lines wait for the run's plan
};

// How many arrays of 4 bytes a parameter a run of `parameters` allocates (resident at once, as
// measured: 1e8 features from a two-line file take 1.18 GB with --feature-order given, 1.96 GB
// renumbered): the parameters and the optimiser's state; for linear models also the features'
// counts, the final weights the report and checkpoint keep, the L2 scales, the epochs' mean,
// and, renumbered by frequency, the numbering and the weights in it.
std::size_t model_sized_arrays(const hogwild::TrainConfig& config, std::size_t parameters) {
  std::size_t arrays = 1 + hogwild::state_buffers(config.optimizer.kind);
  if (!hogwild::is_linear(config.model)) return arrays;
  arrays += 2;
  if (config.l2_strength() > 0) arrays += 2;
  if (config.averages_epochs()) arrays += 1;
  const bool renumbered = config.frequency_order &&
                          parameters > hogwild::TrainConfig::kFrequencyOrderMinFeatures &&
                          config.data_precision == hogwild::DataPrecision::kF32;
  if (renumbered) arrays += 2;
  return arrays;
}

// Refuses a model of `parameters` floats (times plan.copies) above --max-parameters or above
// the machine's physical memory, before anything is allocated.
void check_model_size(const TrainArgs& a, std::size_t parameters, const Plan& plan) {
  constexpr double kGiB = static_cast<double>(std::size_t{1} << 30);
  const double bytes = static_cast<double>(parameters) * 4.0 * static_cast<double>(plan.copies);
  if (parameters > a.max_parameters) {
    throw hogwild::InputError(fmt::format(
        "{}: expected a model of at most {} parameters (--max-parameters), found {}, which needs "
        "{} parameters ({:.1f} GiB)",
        a.train, a.max_parameters, plan.cause, parameters, bytes / kGiB));
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  const double memory = static_cast<double>(pages) * static_cast<double>(page_size);
  if (pages > 0 && page_size > 0 && bytes > memory) {
    throw hogwild::InputError(fmt::format(
        "{}: expected a model that fits in memory ({:.1f} GiB), found {}, which needs {} "
        "parameters ({:.1f} GiB)",
        a.train, memory / kGiB, plan.cause, parameters, bytes / kGiB));
  }
}

// What the replicas line says: samples between merges, the share of the nonzeros auto found
// in a wide model's hottest features, and the heavy features merged as the workers' mean change;
// for softmax and mlp, that each worker keeps its own optimiser state. From the run's resolved
// plan (Callbacks::on_start), so the features are counted once.
std::string replicas_text(const hogwild::TrainConfig& given, const hogwild::Report& run) {
  const int merge_every = run.config.replicate;
  const std::size_t hot = run.config.hot_features;
  const char* automatic = given.replicate == hogwild::TrainConfig::kReplicateAuto ? " (auto)" : "";
  if (!hogwild::is_linear(run.config.model)) {
    if (merge_every == 0) return "off";
    return fmt::format("merged every {} samples{}, each worker with its own optimiser state",
                       merge_every, automatic);
  }
  if (merge_every == 0) {
    if (!run.hot_share) return "off";
    return fmt::format(
        "off (auto: the {} hottest features hold {:.1f}% of the nonzeros, under {:g}%)",
        hogwild::TrainConfig::kAutoHotFeatures, 100 * *run.hot_share,
        100 * hogwild::TrainConfig::kAutoHotMinShare);
  }
  std::string text = fmt::format("merged every {} samples{}{}", merge_every, automatic,
                                 hot > 0 ? fmt::format(", the {} hottest features only", hot) : "");
  if (run.hot_share) text += fmt::format(" ({:.1f}% of the nonzeros)", 100 * *run.hot_share);
  const std::size_t heavy = run.mean_merged_features;
  if (heavy == 0) return text;
  return fmt::format(
      "{}; {} feature{} over {:g}% of the squared values merged as the workers' mean change", text,
      heavy, heavy == 1 ? "" : "s", 100 * hogwild::TrainConfig::kMeanMergeMinShare);
}

// The model line and the line of delay, row order and replicas.
std::string model_lines(const TrainArgs& a, const std::string& replicas) {
  const auto& config = a.config;
  const auto r = config.resolved();
  const auto& o = r.optimizer;
  const auto* mf = std::get_if<hogwild::FactorisationModel>(&r.model);
  return fmt::format(
      "model: {}{}, optimizer: {}, step: {}, schedule: {}{}, minibatches: {}, l2: {}{}, "
      "policy: {}, {}: {}, epochs: {}\ndelay: {}, order: {}, replicas: {}\n",
      hogwild::model_name(r.model),
      std::holds_alternative<hogwild::MlpModel>(r.model) ? " (hidden " + a.hidden + ")"
      : mf                                               ? fmt::format(" (rank {})", mf->rank)
                                                         : "",
      hogwild::to_string(o.kind), o.auto_step ? std::string("auto") : fmt::format("{}", *o.step),
      hogwild::to_string(o.schedule),
      o.schedule == hogwild::Schedule::kEpoch ? fmt::format(" (decay {})", o.decay) : "",
      r.schedule->text, *r.l2, *r.average ? ", average: epochs" : "", hogwild::to_string(r.policy),
      r.simulate > 0 ? "virtual workers" : "threads", r.workers(), r.epochs, r.delay.text,
      r.block_rows > 0
          ? fmt::format("blocks of {} stored rows (storage shuffled at load)", r.block_rows)
          : "a fresh permutation of the rows each epoch",
      replicas);
}

// --json (the report as `json` gives it) and --csv, where asked for.
void write_reports(const TrainArgs& a, const hogwild::Report& report, const std::string& json) {
  if (!a.json.empty()) write_text(a.json, json + "\n");
  if (!a.csv.empty()) write_text(a.csv, csv(report));
}

template <class Data>
int train_and_report(const TrainArgs& a, Processes& processes, const StopOnSignal& stop,
                     const Data& train, const Data* test, Plan& plan) {
  const auto& config = a.config;
  std::optional<hogwild::Checkpoint> resumed;
  hogwild::TrainState resume_from;
  if (!a.resume.empty()) {
    resumed =
        load_for_resume(a.resume, plan.checkpoint, train.source.empty() ? a.train : train.source);
    resume_from = hogwild::resume_state(*resumed);
  }
  // Every process has its data and options: an error any of them met stops them all here.
  processes.ready(hogwild::checkpoint_parameters(plan.checkpoint));
  hogwild::Callbacks callbacks;
  callbacks.stop = stop.flag();
  callbacks.exchange = processes.exchange();
  callbacks.data_part = processes.exchange() != nullptr && std::is_same_v<Data, hogwild::Dataset>;
  const bool root = processes.root();
  if (root) {
    fmt::print("{}", plan.header);
    std::fflush(stdout);
    callbacks.on_start = [&](const hogwild::Report& run) {
      fmt::print("{}", model_lines(a, replicas_text(config, run)));
      if (!a.quiet) print_table_header(config);
      std::fflush(stdout);
    };
  }
  if (root && !a.quiet) {
    callbacks.on_epoch = [&](const hogwild::EpochRecord& r) {
      print_epoch(r, config);
      std::fflush(stdout);
    };
  }
  if (root && !a.checkpoint.empty()) {
    callbacks.on_epoch_state = [&](const hogwild::TrainState& state) {
      hogwild::record_state(plan.checkpoint, state);
      hogwild::save_checkpoint(a.checkpoint, plan.checkpoint);
    };
  }
  hogwild::Report report;
  try {
    report = hogwild::train(config, train, test, callbacks, resumed ? &resume_from : nullptr);
  } catch (const hogwild::DivergenceError& e) {
    // The epochs up to the one that diverged: what a sweep over steps plots of a failed run.
    if (root && e.report() != nullptr) write_reports(a, *e.report(), hogwild::to_json(*e.report()));
    throw;
  }
  if (!root) return report.interrupted ? kExitInterrupted : 0;
  if (!report.interrupted) {
    print_summary(report);
    fmt::print("{}\n", final_line(report));
  }
  // The JSON report, only where it is written (--json); --compare-serial reads it back.
  if (!a.json.empty() || a.compare_serial) {
    std::string json = hogwild::to_json(report);
    if (a.compare_serial && !report.interrupted) {
      auto serial_config = config;
      serial_config.policy = hogwild::Policy::kSerial;
      serial_config.threads = 1;
      json = with_baseline(json, report, hogwild::train(serial_config, train, test));
    }
    write_reports(a, report, json);
  } else {
    write_reports(a, report, "");
  }
  if (!report.interrupted) return 0;
  report_interrupted(stop, processes.exchange() != nullptr, report.epochs.back().epoch,
                     report.resumed_from, a.checkpoint);
  return kExitInterrupted;
}

// The data line, and what makes the model as large as it is.
std::string describe(Plan& p, const hogwild::Dataset& train, const hogwild::Dataset* test) {
  const auto& c = p.checkpoint;
  p.cause = c.classes > 0 ? fmt::format("the largest feature index {} and {} classes",
                                        train.num_features, c.classes)
                          : fmt::format("the largest feature index {}", train.num_features);
  return fmt::format("data: {} rows x {} features, {} nonzeros{}\n", train.rows(),
                     train.num_features, train.nnz(),
                     test ? fmt::format("; test: {} rows", test->rows()) : "");
}

// Across processes that each read a part: the whole file, and rank 0's part.
std::string describe(Plan& p, const hogwild::Dataset& train, const hogwild::Dataset* test,
                     const Processes& processes) {
  if (processes.exchange() == nullptr) return describe(p, train, test);
  describe(p, train, test);
  return fmt::format(
      "data: {} rows x {} features, {} nonzeros, in {} parts, one per process (rank 0's: {} "
      "rows){}\n",
      processes.whole_rows(), train.num_features, processes.whole_nnz(), processes.ranks(),
      train.rows(), test ? fmt::format("; test: {} rows", test->rows()) : "");
}
template <class Data>
std::string describe(Plan& p, const Data& train, const Data* test, const Processes&) {
  return describe(p, train, test);
}

std::string describe(Plan& p, const hogwild::DenseDataset& train,
                     const hogwild::DenseDataset* test) {
  p.cause = fmt::format("{} features and {} classes", train.cols, p.checkpoint.classes);
  return fmt::format("data: {} images x {} pixels, {} in memory{}\n", train.rows(), train.cols,
                     train.stored_as_bytes() ? "one byte each" : "as floats",
                     test ? fmt::format("; test: {} images", test->rows()) : "");
}

std::string describe(Plan& p, const hogwild::Ratings& train, const hogwild::Ratings* test) {
  const auto& c = p.checkpoint;
  p.cause = fmt::format("{} users and {} items at rank {}", c.users, c.items, c.rank);
  return fmt::format("data: {} ratings, {} users x {} items{}\n", train.size(), train.num_users,
                     train.num_items, test ? fmt::format("; test: {} ratings", test->size()) : "");
}

// `fingerprint`: the training data's, where a checkpoint is written or resumed.
template <class Data>
int train_on(const TrainArgs& a, Processes& processes, const StopOnSignal& stop, const Data& train,
             const std::optional<Data>& test,
             const std::optional<hogwild::DataFingerprint>& fingerprint) {
  const auto& config = a.config;
  Plan plan;
  plan.checkpoint = hogwild::checkpoint_for(config, train, test ? &*test : nullptr);
  plan.checkpoint.training_data = fingerprint;
  plan.copies = model_sized_arrays(config, hogwild::checkpoint_parameters(plan.checkpoint));
  plan.header = describe(plan, train, test ? &*test : nullptr, processes);
  // Before the run allocates its model-sized arrays.
  if (const std::size_t params = hogwild::checkpoint_parameters(plan.checkpoint); params > 0) {
    check_model_size(a, params, plan);
  }
  return train_and_report(a, processes, stop, train, test ? &*test : nullptr, plan);
}

// Before reading any data: each output can be written, overwrites no input, and is its own
// file, and standard input feeds one input at most. The checkpoint may be the --resume file
// (the run continues it); the reports may not.
void check_outputs(const TrainArgs& a) {
  check_writable(a.json);
  check_writable(a.csv);
  check_writable(a.checkpoint, Written::kRenamed);
  // --resume last: the checkpoint is checked apart from the inputs before it, the reports from
  // it too.
  constexpr std::string_view kTrace = "trace:";
  const std::string trace = a.delay.starts_with(kTrace) ? a.delay.substr(kTrace.size()) : "";
  const NamedFile inputs[] = {{"--train", a.train},
                              {"--test", a.test},
                              {"--train-labels", a.train_labels},
                              {"--test-labels", a.test_labels},
                              {"--delay", trace},
                              {"--resume", a.resume}};
  const NamedFile outputs[] = {
      {"--json", a.json}, {"--csv", a.csv}, {"--checkpoint", a.checkpoint}};
  check_outputs_apart(std::span(inputs).first(5), outputs);
  check_outputs_apart(std::span(inputs).last(1), std::span(outputs).first(2));
  check_one_standard_input(inputs);
}

int train_with(TrainArgs& a, Processes& processes) {
  apply(a);
  // More threads than cores, asked for: oneTBB's default limit (the cores) would leave the
  // run's arenas short of threads and print its own warning about it.
  std::optional<tbb::global_control> parallelism;
  if (a.config.threads > tbb::info::default_concurrency()) {
    parallelism.emplace(tbb::global_control::max_allowed_parallelism,
                        static_cast<std::size_t>(a.config.threads));
  }
  processes.connect(a);
  // A checkpoint written or resumed records the training data as loaded (a pass over it),
  // before the storage is shuffled. Every process asks, since a file read in parts needs every
  // part, where rank 0 alone writes.
  const bool fingerprinted = !a.checkpoint.empty() || !a.resume.empty();
  std::optional<hogwild::DataFingerprint> fingerprint;
  const auto record = [&](const auto& train) {
    if (fingerprinted) fingerprint = hogwild::data_fingerprint(train);
  };
  // Rank 0 alone writes the reports and checkpoints.
  if (!processes.root()) a.json = a.csv = a.checkpoint = "";
  check_outputs(a);
  const StopOnSignal stop;
  // Block order reads runs of stored examples, which must be random samples whatever order the
  // file is in (sorted by label, say): the storage is shuffled once, from --seed, so a resumed
  // run sees it again.
  const auto order = [&](auto& train) {
    if (a.config.block_rows > 0) hogwild::shuffle_rows(train, a.config.seed);
  };
  // --limit: the first N examples of each file (Processes::connect refuses it where processes
  // read parts of a LIBSVM file).
  const auto limit = [&](auto& train, auto& test) {
    if (a.limit == 0) return;
    train.truncate(a.limit);
    if (test) test->truncate(a.limit);
  };
  if (a.format == "idx") {
    auto train = hogwild::read_idx(a.train, a.train_labels);
    std::optional<hogwild::DenseDataset> test;
    if (!a.test.empty()) test = hogwild::read_idx(a.test, a.test_labels);
    limit(train, test);
    record(train);
    order(train);
    return train_on(a, processes, stop, train, test, fingerprint);
  }
  if (a.format == "ratings") {
    auto train = hogwild::read_ratings(a.train);
    std::optional<hogwild::Ratings> test;
    if (!a.test.empty()) test = hogwild::read_ratings(a.test);
    limit(train, test);
    record(train);
    order(train);
    return train_on(a, processes, stop, train, test, fingerprint);
  }
  const auto* linear = std::get_if<hogwild::LinearModel>(&a.config.model);
  const bool binary = linear && hogwild::is_classifier(linear->loss);
  const hogwild::LibsvmReadOptions options{.binary_labels = binary, .index_base = a.index_base};
  // Across processes each reads its own part of the file.
  auto train = processes.exchange() != nullptr
                   ? processes.read_training_part(a.train, options, binary || !linear)
                   : hogwild::read_libsvm(a.train, options);
  std::optional<hogwild::Dataset> test;
  if (!a.test.empty()) {
    test = hogwild::read_libsvm(
        a.test,
        {.index_base = train.zero_based ? hogwild::IndexBase::kZero : hogwild::IndexBase::kOne});
  }
  limit(train, test);
  if (fingerprinted && processes.exchange() != nullptr) {
    fingerprint = processes.whole_fingerprint(train);
  } else {
    record(train);
  }
  order(train);
  return train_on(a, processes, stop, train, test, fingerprint);
}

// An error of a run started by mpirun: before training, every process stops with exit `code`
// and the lowest rank that met it prints it; during training (an error this process met alone)
// it is printed with the rank and every process ends.
int failed(Processes& processes, const std::exception& e, int code) {
  if (!processes.agreed()) {
    if (processes.prints_failure()) fmt::print(stderr, "hogwild: {}\n", e.what());
    return code;
  }
  fmt::print(stderr, "hogwild: rank {}: {}\n", processes.rank(), e.what());
  std::fflush(stderr);
  processes.abort(code);
}

}  // namespace

int run_train(TrainArgs& a) {
  Processes processes;
  if (!processes.mpi()) return train_with(a, processes);
  int code = 0;
  try {
    code = train_with(a, processes);
  } catch (const PeerFailed&) {
    code = kExitBadInput;
  } catch (const hogwild::InputError& e) {
    code = failed(processes, e, kExitBadInput);
  } catch (const hogwild::SystemError& e) {
    code = failed(processes, e, kExitBadInput);
  } catch (const hogwild::DivergenceError& e) {
    // Every process reads the same evaluations, so all of them diverge together.
    if (processes.root()) fmt::print(stderr, "hogwild: {}\n", e.what());
    code = kExitDiverged;
  }
  // No process exits before rank 0 has printed and written its files: mpirun ends the job when
  // one process exits non-zero, cutting rank 0 short.
  processes.finish();
  return code;
}

}  // namespace hogwild_cli
