#include "cli_train.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <type_traits>

#include "cli_checkpoint.h"
#include "hogwild/hogwild.h"

namespace hogwild_cli {
namespace {

using hogwild::ModelReport;
using hogwild::Report;

std::string human_rate(double per_second) {
  if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
  if (per_second >= 1e3) return fmt::format("{:.1f}k", per_second / 1e3);
  return fmt::format("{:.0f}", per_second);
}

std::string opt(const std::optional<double>& v, const char* spec = "{}") {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string();
}

std::string percent(const std::optional<hogwild::Evaluation>& e, bool classifier) {
  return e && classifier ? fmt::format("{:.2f}%", 100 * e->accuracy) : std::string("-");
}

// ---- Where the two trainers' reports differ: the epoch table, the summary, the CSV ---------

bool is_ratings(const hogwild::TrainConfig&) { return false; }
bool is_ratings(const hogwild::ModelConfig& c) {
  return c.model == hogwild::ModelKind::kFactorisation;
}

void print_epoch(const hogwild::EpochRecord& r, const hogwild::TrainConfig& c) {
  fmt::print("{:>5} {:>9.4f} {:>12.6f} {:>12} {:>9}\n", r.epoch, r.seconds,
             r.train ? r.train->loss : 0.0,
             r.test ? fmt::format("{:.6f}", r.test->loss) : std::string("-"),
             percent(r.test, hogwild::is_classifier(c.loss)));
}

void print_epoch(const hogwild::ModelEpochRecord& r, const hogwild::ModelConfig& c) {
  const std::string test_loss = r.test_loss ? opt(r.test_loss, "{:.6f}") : "-";
  if (is_ratings(c)) {
    fmt::print("{:>5} {:>9.4f} {:>12.6f} {:>12} {:>10} {:>10}\n", r.epoch, r.seconds, r.train_loss,
               test_loss, r.train_rmse ? opt(r.train_rmse, "{:.5f}") : "-",
               r.test_rmse ? opt(r.test_rmse, "{:.5f}") : "-");
  } else {
    fmt::print("{:>5} {:>9.4f} {:>12.6f} {:>12} {:>9}\n", r.epoch, r.seconds, r.train_loss,
               test_loss, r.test_accuracy ? fmt::format("{:.2f}%", 100 * *r.test_accuracy) : "-");
  }
}

// The CSV columns after epoch,seconds,elapsed,step, and their values.
constexpr const char* kLinearColumns =
    "train_loss,train_objective,train_accuracy,test_loss,test_accuracy";
constexpr const char* kModelColumns =
    "train_loss,test_loss,train_accuracy,test_accuracy,train_rmse,test_rmse";
using Opt = std::optional<double>;

std::vector<Opt> csv_values(const hogwild::EpochRecord& e) {
  const auto& train = e.train;
  const auto& test = e.test;
  return {train ? Opt(train->loss) : Opt(), train ? Opt(train->objective) : Opt(),
          train ? Opt(train->accuracy) : Opt(), test ? Opt(test->loss) : Opt(),
          test ? Opt(test->accuracy) : Opt()};
}

std::vector<Opt> csv_values(const hogwild::ModelEpochRecord& e) {
  return {e.train_loss, e.test_loss, e.train_accuracy, e.test_accuracy, e.train_rmse, e.test_rmse};
}

template <class R>
std::string csv(const R& report) {
  std::string text = fmt::format("epoch,seconds,elapsed,step,{}\n",
                                 std::is_same_v<R, Report> ? kLinearColumns : kModelColumns);
  for (const auto& e : report.epochs) {
    text += fmt::format("{},{},{},{}", e.epoch, e.seconds, e.elapsed, e.step);
    for (const auto& v : csv_values(e)) text += "," + opt(v);
    text += "\n";
  }
  return text;
}

std::string per_worker_means(const std::vector<hogwild::WorkerSummary>& workers) {
  std::string means;
  for (const auto& w : workers) {
    means += fmt::format("{}{:.1f}", means.empty() ? "" : ", ", w.batch_sizes.mean());
  }
  return means;
}

void print_batch_sizes(const hogwild::Histogram& b, const std::string& per_worker) {
  fmt::print("batch size: mean {:.1f} (p50 {}, p99 {}) over {} updates{}\n", b.mean(),
             b.quantile(0.5), b.quantile(0.99), b.count(),
             per_worker.empty() ? "" : "; per worker mean " + per_worker);
}

// The speed line, the batch sizes where they vary, and the final losses.
void print_summary(const Report& report, const TrainArgs& a) {
  const auto& c = report.config;
  fmt::print("{}, {} thread{}: {} samples/s ({} samples in {:.3f} s of training)\n", a.policy,
             c.threads, c.threads == 1 ? "" : "s", human_rate(report.samples_per_second),
             report.samples, report.train_seconds);
  if (c.schedule.kind == hogwild::ScheduleSpec::Kind::kTime || c.schedule.batch > 1) {
    print_batch_sizes(report.batch_sizes,
                      report.workers.size() > 1 ? per_worker_means(report.workers) : "");
  }
}

void print_summary(const ModelReport& report, const TrainArgs&) {
  const auto& c = report.config;
  fmt::print("{}, {}: {} samples/s ({} samples in {:.3f} s of training)\n",
             hogwild::to_string(c.policy),
             c.simulate > 0 ? fmt::format("{} virtual workers in one thread", c.simulate)
                            : fmt::format("{} thread{}", c.threads, c.threads == 1 ? "" : "s"),
             human_rate(report.samples_per_second), report.samples, report.train_seconds);
  if (c.schedule.kind == hogwild::ScheduleSpec::Kind::kTime || c.speed.active()) {
    print_batch_sizes(report.batch_sizes, per_worker_means(report.workers));
  }
}

std::string final_line(const Report& report) {
  const auto& last = report.epochs.back();
  const bool classifier = hogwild::is_classifier(report.config.loss);
  return fmt::format(
      "final: train loss {:.6f}{}", last.train->loss,
      last.test ? fmt::format(", test loss {:.6f}{}", last.test->loss,
                              classifier ? ", test accuracy " + percent(last.test, true) : "")
                : "");
}

std::string final_line(const ModelReport& report) {
  const auto& last = report.epochs.back();
  std::string line = fmt::format("final: train loss {:.6f}", last.train_loss);
  if (last.train_rmse) line += fmt::format(", train rmse {:.5f}", *last.train_rmse);
  if (last.test_loss) line += fmt::format(", test loss {:.6f}", *last.test_loss);
  if (last.test_accuracy) line += fmt::format(", test accuracy {:.2f}%", 100 * *last.test_accuracy);
  if (last.test_rmse) line += fmt::format(", test rmse {:.5f}", *last.test_rmse);
  return line;
}

// --compare-serial: prints the serial run and the speed-up; returns `json` with the baseline.
std::string with_baseline(std::string json, const Report& report, const Report& serial) {
  const double speedup = report.samples_per_second / serial.samples_per_second;
  const auto& last = serial.epochs.back();
  const bool accuracy = last.test && hogwild::is_classifier(report.config.loss);
  fmt::print("serial, 1 thread: {} samples/s on the same data{}\n",
             human_rate(serial.samples_per_second),
             accuracy ? ", test accuracy " + percent(last.test, true) : "");
  fmt::print("speed-up over serial: {:.2f}x\n", speedup);
  // Append the baseline to the report without re-serialising it by hand.
  json.pop_back();  // closing brace
  while (!json.empty() && (json.back() == '\n' || json.back() == ' ')) json.pop_back();
  return json + fmt::format(
                    ",\n  \"serial_baseline\": {{\"samples_per_second\": {}, "
                    "\"final_test_accuracy\": {}, \"final_train_loss\": {}, \"speedup\": {}}}\n}}",
                    serial.samples_per_second,
                    accuracy ? fmt::format("{}", last.test->accuracy) : "null", last.train->loss,
                    speedup);
}

std::string with_baseline(const std::string& json, const ModelReport& report,
                          const ModelReport& serial) {
  const double speedup = report.samples_per_second / serial.samples_per_second;
  fmt::print("serial, 1 thread: {} samples/s on the same data\n",
             human_rate(serial.samples_per_second));
  fmt::print("speed-up over serial: {:.2f}x\n", speedup);
  auto parsed = nlohmann::ordered_json::parse(json);
  parsed["serial_baseline"] = {
      {"samples_per_second", serial.samples_per_second},
      {"final", nlohmann::ordered_json::parse(hogwild::to_json(serial))["final"]},
      {"speedup", speedup}};
  return parsed.dump(2);
}

// ---- The one training path --------------------------------------------------------------

Report fit(const hogwild::TrainConfig& c, const hogwild::Dataset& train,
           const hogwild::Dataset* test, const hogwild::Callbacks& callbacks,
           const hogwild::TrainState* resume) {
  return hogwild::train(c, train, test, callbacks, resume);
}

template <class Data>
ModelReport fit(const hogwild::ModelConfig& c, const Data& train, const Data* test,
                const hogwild::ModelCallbacks& callbacks, const hogwild::TrainState* resume) {
  return hogwild::train_model(c, train, test, callbacks, resume);
}

// A run about to start: what its checkpoints hold besides progress (--resume must match it),
// how its model size reads in an error, and the lines that describe it.
struct Plan {
  hogwild::Checkpoint checkpoint;
  std::size_t copies = 1;  // model-sized buffers: parameters plus optimiser state
  std::string cause;       // what makes the model as large as it is
  std::string header;      // the data and model lines
};

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

template <class Config, class Data>
int train_and_report(const TrainArgs& a, const StopOnSignal& stop, const Config& config,
                     const Data& train, const Data* test, Plan& plan) {
  using Callbacks = std::conditional_t<std::is_same_v<Config, hogwild::TrainConfig>,
                                       hogwild::Callbacks, hogwild::ModelCallbacks>;
  if (const std::size_t params = hogwild::checkpoint_parameters(plan.checkpoint); params > 0) {
    check_model_size(a, params, plan);
  }
  std::optional<hogwild::Checkpoint> resumed;
  hogwild::TrainState resume_from;
  if (!a.resume.empty()) {
    resumed = load_for_resume(a.resume, plan.checkpoint);
    resume_from = hogwild::resume_state(*resumed);
  }
  Callbacks callbacks;
  callbacks.stop = stop.flag();
  fmt::print("{}", plan.header);
  if (!a.quiet) {
    if (is_ratings(config)) {
      fmt::print("{:>5} {:>9} {:>12} {:>12} {:>10} {:>10}\n", "epoch", "seconds", "train_loss",
                 "test_loss", "train_rmse", "test_rmse");
    } else {
      fmt::print("{:>5} {:>9} {:>12} {:>12} {:>9}\n", "epoch", "seconds", "train_loss", "test_loss",
                 "test_acc");
    }
    callbacks.on_epoch = [&](const auto& r) {
      print_epoch(r, config);
      std::fflush(stdout);
    };
  }
  if (!a.checkpoint.empty()) {
    callbacks.on_epoch_state = [&](const hogwild::TrainState& state) {
      hogwild::record_state(plan.checkpoint, state);
      hogwild::save_checkpoint(a.checkpoint, plan.checkpoint);
    };
  }
  const auto report = fit(config, train, test, callbacks, resumed ? &resume_from : nullptr);
  if (!report.interrupted) {
    print_summary(report, a);
    if (report.staleness.updates.count() > 0) {
      const auto& st = report.staleness;
      fmt::print(
          "staleness ({} measured): mean {:.2f} updates (p50 {}, p99 {}, max {}), mean {:.2f} "
          "us\n",
          st.updates.count(), st.updates.mean(), st.updates.quantile(0.5),
          st.updates.quantile(0.99), st.updates.max(), st.nanos.mean() / 1e3);
    }
    fmt::print("{}\n", final_line(report));
  }
  std::string json = hogwild::to_json(report);
  if (a.compare_serial && !report.interrupted) {
    auto serial_config = config;
    serial_config.policy = hogwild::Policy::kSerial;
    serial_config.threads = 1;
    json = with_baseline(json, report, fit(serial_config, train, test, Callbacks{}, nullptr));
  }
  if (!a.json.empty()) write_text(a.json, json + "\n");
  if (!a.csv.empty()) write_text(a.csv, csv(report));
  if (!report.interrupted) return 0;
  report_interrupted(stop, report.epochs.back().epoch, report.resumed_from, a.checkpoint);
  return kExitInterrupted;
}

std::string data_line(const hogwild::Dataset& train, const hogwild::Dataset* test) {
  return fmt::format("data: {} rows x {} features, {} nonzeros{}\n", train.rows(),
                     train.num_features, train.nnz(),
                     test ? fmt::format("; test: {} rows", test->rows()) : "");
}

int train_linear(const TrainArgs& a, const StopOnSignal& stop) {
  const auto& config = a.linear;
  auto train = hogwild::read_libsvm(a.train);
  if (hogwild::is_classifier(config.loss)) check_binary_labels(train, a.train);
  // Runs of stored rows must be random samples, whatever order the file is in (sorted by
  // label, say): the storage is shuffled once, from --seed, so a resumed run sees it again.
  if (config.block_rows > 0) hogwild::shuffle_rows(train, config.seed);
  std::optional<hogwild::Dataset> test;
  if (!a.test.empty()) test = hogwild::read_libsvm(a.test);
  Plan plan;
  plan.checkpoint.model = a.model_name;
  plan.checkpoint.format = "libsvm";
  plan.checkpoint.features = std::max<std::size_t>(1, train.num_features);
  for (const float v : hogwild::label_values(config.loss, train)) {
    plan.checkpoint.labels.push_back(v);
  }
  plan.checkpoint.config = hogwild::config_to_json(config, -1);
  // One weight per feature up to the largest index (plus per-feature L2 scales).
  plan.copies = config.l2 > 0 ? 3 : 1;
  plan.cause = fmt::format("the largest feature index {}", train.num_features);
  const int merge_every = config.resolved_replicate(plan.checkpoint.features);
  plan.header = data_line(train, test ? &*test : nullptr) +
                fmt::format(
                    "model: {}, policy: {}, {}: {}, epochs: {}, step: {}, decay: {}, l2: {}, "
                    "delay: {}\norder: {}, replicas: {}\n",
                    a.model_name, a.policy, config.simulate > 0 ? "virtual workers" : "threads",
                    config.workers(), config.epochs, config.step, config.decay, config.l2, a.delay,
                    config.block_rows > 0 ? fmt::format("blocks of {} stored rows (storage "
                                                        "shuffled at load)",
                                                        config.block_rows)
                                          : "a fresh permutation of the rows each epoch",
                    merge_every > 0 ? fmt::format("merged every {} samples{}", merge_every,
                                                  a.replicate == "auto" ? " (auto)" : "")
                                    : "off");
  return train_and_report(a, stop, config, train, test ? &*test : nullptr, plan);
}

// Class index -> label value, as the model trainer maps them (sorted distinct labels).
template <class Labels>
void set_classes(hogwild::Checkpoint& c, const Labels& labels) {
  const std::set<double> distinct(labels.begin(), labels.end());
  c.labels.assign(distinct.begin(), distinct.end());
  c.classes = c.labels.size();
}

// The shape of the data in the checkpoint, and the data line.
std::string describe(Plan& p, const hogwild::Dataset& train, const hogwild::Dataset* test,
                     const hogwild::ModelConfig&) {
  p.checkpoint.features = std::max<std::size_t>(1, train.num_features);
  set_classes(p.checkpoint, train.labels);
  return data_line(train, test);
}

std::string describe(Plan& p, const hogwild::DenseDataset& train, const hogwild::DenseDataset* test,
                     const hogwild::ModelConfig& config) {
  p.checkpoint.features = train.cols;
  set_classes(p.checkpoint, train.labels);
  if (config.model == hogwild::ModelKind::kMlp) {
    p.checkpoint.hidden.assign(config.hidden.begin(), config.hidden.end());
  }
  return fmt::format("data: {} images x {} pixels{}\n", train.rows(), train.cols,
                     test ? fmt::format("; test: {} images", test->rows()) : "");
}

std::string describe(Plan& p, const hogwild::Ratings& train, const hogwild::Ratings* test,
                     const hogwild::ModelConfig& config) {
  auto& c = p.checkpoint;
  c.users = std::max(train.num_users, test ? test->num_users : 0);
  c.items = std::max(train.num_items, test ? test->num_items : 0);
  c.rank = config.resolved().rank;
  // The factorisation model's mean: a float, summed in double as the model does.
  double sum = 0;
  for (const float v : train.values) sum += v;
  c.mean = train.size() ? static_cast<float>(sum / static_cast<double>(train.size())) : 0.0f;
  p.cause = fmt::format("{} users and {} items at rank {}", c.users, c.items, c.rank);
  return fmt::format("data: {} ratings, {} users x {} items{}\n", train.size(), train.num_users,
                     train.num_items, test ? fmt::format("; test: {} ratings", test->size()) : "");
}

template <class Data>
int train_model(const TrainArgs& a, const StopOnSignal& stop, const Data& train,
                const std::optional<Data>& test) {
  const auto& config = a.model;
  const auto r = config.resolved();
  Plan plan;
  plan.checkpoint.model = std::string(hogwild::to_string(config.model));
  plan.checkpoint.format = a.format;
  plan.checkpoint.config = hogwild::config_to_json(r, -1);
  plan.copies = 1 + hogwild::state_buffers(config.optimizer.kind);
  plan.header = describe(plan, train, test ? &*test : nullptr, config);
  if (plan.cause.empty()) {
    plan.cause = fmt::format("the largest feature index {} and {} classes",
                             plan.checkpoint.features, plan.checkpoint.classes);
  }
  plan.header += fmt::format(
      "model: {}{}, optimizer: {}, step: {}, schedule: {}, minibatches: {}, l2: {}, "
      "policy: {}, threads: {}, epochs: {}\n",
      hogwild::to_string(r.model),
      r.model == hogwild::ModelKind::kMlp             ? " (hidden " + a.hidden + ")"
      : r.model == hogwild::ModelKind::kFactorisation ? fmt::format(" (rank {})", r.rank)
                                                      : "",
      hogwild::to_string(r.optimizer.kind), r.optimizer.step,
      hogwild::to_string(r.optimizer.schedule), r.schedule.text, r.l2, hogwild::to_string(r.policy),
      r.threads, r.epochs);
  return train_and_report(a, stop, config, train, test ? &*test : nullptr, plan);
}

}  // namespace

int run_train(TrainArgs& a) {
  apply(a);
  const StopOnSignal stop;
  if (!a.uses_model_trainer()) return train_linear(a, stop);
  // Block order reads runs of stored examples: the storage is shuffled once, from --seed, as
  // for the linear models.
  const auto order = [&](auto& train) {
    if (a.model.block_rows > 0) hogwild::shuffle_rows(train, a.model.seed);
  };
  if (a.format == "idx") {
    auto train = hogwild::read_idx(a.train, a.train_labels);
    std::optional<hogwild::DenseDataset> test;
    if (!a.test.empty()) test = hogwild::read_idx(a.test, a.test_labels);
    if (a.limit > 0) {
      train.truncate(a.limit);
      if (test) test->truncate(a.limit);
    }
    order(train);
    return train_model(a, stop, train, test);
  }
  const auto on = [&](auto read) {
    auto train = read(a.train);
    std::optional<std::remove_cvref_t<decltype(train)>> test;
    if (!a.test.empty()) test = read(a.test);
    order(train);
    return train_model(a, stop, train, test);
  };
  if (a.format == "ratings")
    return on([](const std::string& p) { return hogwild::read_ratings(p); });
  return on([](const std::string& p) { return hogwild::read_libsvm(p); });
}

}  // namespace hogwild_cli
