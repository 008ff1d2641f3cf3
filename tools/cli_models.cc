#include "cli_models.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "cli_checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/idx.h"
#include "hogwild/libsvm.h"
#include "hogwild/model_trainer.h"
#include "hogwild/policy.h"

namespace hogwild_cli {
namespace {

std::string human_rate(double per_second) {
  if (per_second >= 1e6) return fmt::format("{:.2f}M", per_second / 1e6);
  if (per_second >= 1e3) return fmt::format("{:.1f}k", per_second / 1e3);
  return fmt::format("{:.0f}", per_second);
}

std::vector<std::size_t> parse_hidden(const std::string& text) {
  std::vector<std::size_t> widths;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view token = rest.substr(0, comma);
    std::size_t width = 0;
    const auto [p, ec] = std::from_chars(token.data(), token.data() + token.size(), width);
    if (ec != std::errc() || p != token.data() + token.size() || width == 0) {
      throw hogwild::InputError(fmt::format(
          "--hidden: expected comma-separated layer widths such as 256,128, found '{}'", text));
    }
    widths.push_back(width);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
  }
  if (widths.empty()) {
    throw hogwild::InputError("--hidden: expected at least one layer width, found none");
  }
  return widths;
}

template <class T>
std::optional<T> given(const CLI::App& cmd, const std::string& name) {
  const CLI::Option* option = cmd.get_option_no_throw(name);
  if (option == nullptr || option->count() == 0) return std::nullopt;
  return option->as<T>();
}

std::string fmt_optional(const std::optional<double>& v, const char* spec) {
  return v ? fmt::format(fmt::runtime(spec), *v) : std::string("-");
}

void print_epoch(const hogwild::ModelEpochRecord& r, bool ratings) {
  if (ratings) {
    fmt::print("{:>5} {:>9.4f} {:>12.6f} {:>12} {:>10} {:>10}\n", r.epoch, r.seconds, r.train_loss,
               fmt_optional(r.test_loss, "{:.6f}"), fmt_optional(r.train_rmse, "{:.5f}"),
               fmt_optional(r.test_rmse, "{:.5f}"));
  } else {
    fmt::print("{:>5} {:>9.4f} {:>12.6f} {:>12} {:>9}\n", r.epoch, r.seconds, r.train_loss,
               fmt_optional(r.test_loss, "{:.6f}"),
               r.test_accuracy ? fmt::format("{:.2f}%", 100 * *r.test_accuracy) : "-");
  }
  std::fflush(stdout);
}

std::string csv(const hogwild::ModelReport& report) {
  std::string text =
      "epoch,seconds,elapsed,step,train_loss,test_loss,train_accuracy,test_accuracy,train_rmse,"
      "test_rmse\n";
  auto opt = [](const std::optional<double>& v) { return v ? fmt::format("{}", *v) : ""; };
  for (const auto& e : report.epochs) {
    text += fmt::format("{},{},{},{},{},{},{},{},{},{}\n", e.epoch, e.seconds, e.elapsed, e.step,
                        e.train_loss, opt(e.test_loss), opt(e.train_accuracy), opt(e.test_accuracy),
                        opt(e.train_rmse), opt(e.test_rmse));
  }
  return text;
}

}  // namespace

void add_gen_ratings(CLI::App& gen, GenRatingsOptions& o) {
  auto* cmd = gen.add_subcommand(
      "ratings",
      "Low-rank ratings for matrix factorisation: planted factors, Gaussian noise, "
      "power-law item popularity; `user item rating` lines.");
  auto& c = o.config;
  cmd->add_option("--users", c.users, "users (rows of the planted matrix)")->capture_default_str();
  cmd->add_option("--items", c.items, "items (columns)")->capture_default_str();
  cmd->add_option("--rank", c.rank, "rank of the planted matrix")->capture_default_str();
  cmd->add_option("--density", c.density, "fraction of entries observed, (0, 0.5]")
      ->capture_default_str();
  cmd->add_option("--noise", c.noise, "standard deviation of the noise on each rating")
      ->capture_default_str();
  cmd->add_option("--zipf", c.zipf, "power-law exponent of item popularity (0 = uniform)")
      ->capture_default_str();
  cmd->add_option("--seed", c.seed, "random seed (same seed, same files)")->capture_default_str();
  cmd->add_option("--out", o.out, "training ratings to write")->required();
  cmd->add_option("--test-out", o.test_out, "held-out ratings to write (needs --test-fraction)");
  cmd->add_option("--test-fraction", c.test_fraction, "fraction of ratings held out, [0, 1)")
      ->capture_default_str();
}

int run_gen_ratings(const GenRatingsOptions& o) {
  if (o.config.test_fraction > 0 && o.test_out.empty()) {
    throw hogwild::InputError("--test-out: expected a file name, since --test-fraction > 0");
  }
  if (!o.test_out.empty() && o.config.test_fraction == 0) {
    throw hogwild::InputError(
        "--test-fraction: expected a fraction > 0, since --test-out is given");
  }
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

void add_model_options(CLI::App& cmd, ModelOptions& o) {
  auto& c = o.optimizer_config;
  const std::string group = "Models (softmax, mlp, mf)";
  auto add = [&](const std::string& name, auto& value, const std::string& help) {
    return cmd.add_option(name, value, help)->group(group)->capture_default_str();
  };
  add("--format", o.format,
      "training data format: libsvm (text), idx (MNIST images; .gz read directly), ratings "
      "(`user item rating` lines)");
  add("--train-labels", o.train_labels,
      "idx: training labels file (default: found beside the images by the standard name)");
  add("--test-labels", o.test_labels, "idx: test labels file (default: beside the test images)");
  add("--hidden", o.hidden, "mlp: hidden layer widths, comma-separated (e.g. 256,128)");
  add("--rank", o.rank, "mf: factorisation rank");
  add("--init-scale", o.init_scale, "mf: standard deviation of the initial factors");
  add("--optimizer", o.optimizer, "sgd, momentum, nesterov, adagrad, rmsprop or adam");
  add("--step-schedule", o.schedule,
      "step schedule: constant, epoch (times --decay each epoch), inverse (1/t), inverse-sqrt");
  add("--step-schedule-scale", c.schedule_scale, "epochs per unit of t in the inverse schedules");
  add("--momentum", c.momentum, "momentum/nesterov: mu");
  add("--rho", c.rho, "rmsprop: decay of the squared-gradient average");
  add("--beta1", c.beta1, "adam: first-moment decay");
  add("--beta2", c.beta2, "adam: second-moment decay");
  add("--epsilon", c.epsilon, "adagrad/rmsprop/adam: denominator offset");
  add("--clip-norm", c.clip_norm,
      "rescale each minibatch gradient to at most this L2 norm (0 = off)");
  add("--batch", o.batch, "minibatch size (0 = the model's default: softmax 16, mlp 32, mf 1)");
  add("--limit", o.limit, "idx: use only the first N training and test images (0 = all)");
}

bool routes_to_models(const CLI::App& cmd, const ModelOptions& o) {
  const auto model = given<std::string>(cmd, "--model");
  if (model && hogwild::is_model_kind(*model)) return true;
  return o.format != "libsvm";
}

int run_model_train(const CLI::App& cmd, const ModelOptions& o) {
  hogwild::ModelConfig config;
  // Options of the sparse linear trainer alone: refused rather than ignored.
  for (const char* linear_only : {"--replicate", "--order"}) {
    if (cmd.get_option(linear_only)->count() > 0) {
      throw hogwild::InputError(fmt::format(
          "{}: expected only with the linear models (logistic, hinge, squared) on libsvm data, "
          "found it with --model {} --format {}",
          linear_only, given<std::string>(cmd, "--model").value_or("(default)"), o.format));
    }
  }
  if (o.format != "libsvm" && o.format != "idx" && o.format != "ratings") {
    throw hogwild::InputError(
        fmt::format("--format: expected one of libsvm, idx, ratings; found '{}'", o.format));
  }
  // Without --model, the format picks the model: ratings train mf, the others softmax.
  const auto model_name = given<std::string>(cmd, "--model");
  config.model = model_name ? hogwild::parse_model_kind(*model_name)
                            : (o.format == "ratings" ? hogwild::ModelKind::kFactorisation
                                                     : hogwild::ModelKind::kSoftmax);
  config.hidden = parse_hidden(o.hidden);
  config.rank = o.rank;
  config.init_scale = o.init_scale;
  config.optimizer = o.optimizer_config;
  config.optimizer.kind = hogwild::parse_optimizer(o.optimizer);
  config.optimizer.schedule = hogwild::parse_schedule(o.schedule);
  config.batch = o.batch;
  if (const auto v = given<std::string>(cmd, "--policy")) config.policy = hogwild::parse_policy(*v);
  if (const auto v = given<int>(cmd, "--threads")) config.threads = *v;
  if (const auto v = given<int>(cmd, "--epochs")) config.epochs = *v;
  if (const auto v = given<double>(cmd, "--step")) {
    if (!(*v > 0))
      throw hogwild::InputError(fmt::format("--step: expected a step size > 0, found {}", *v));
    config.optimizer.step = *v;
  }
  if (const auto v = given<double>(cmd, "--decay")) config.optimizer.decay = *v;
  if (const auto v = given<double>(cmd, "--l2")) {
    if (!(*v >= 0))
      throw hogwild::InputError(fmt::format("--l2: expected a strength >= 0, found {}", *v));
    config.l2 = *v;
  }
  if (const auto v = given<std::uint64_t>(cmd, "--seed")) config.seed = *v;
  if (const auto v = given<std::string>(cmd, "--delay"))
    config.delay = hogwild::DelaySpec::parse(*v);
  if (const auto v = given<double>(cmd, "--staleness-sample")) config.staleness_sample = *v;
  if (const auto v = given<double>(cmd, "--coherence-sample")) config.coherence_sample = *v;
  if (const auto v = given<int>(cmd, "--coherence-lag")) config.coherence_lag = *v;
  if (const auto v = given<int>(cmd, "--simulate")) config.simulate = *v;
  // Minibatch schedules, the speed model, sharding and the curve: as for the linear models.
  if (const auto v = given<std::string>(cmd, "--schedule")) {
    if (cmd.get_option("--batch")->count() > 0) {
      throw hogwild::InputError("--batch: expected either --batch or --schedule, found both");
    }
    config.schedule = hogwild::ScheduleSpec::parse(*v);
  }
  if (const auto v = given<std::uint32_t>(cmd, "--max-batch")) config.schedule.max_batch = *v;
  if (const auto v = given<std::string>(cmd, "--batch-reduce")) {
    if (*v != "mean" && *v != "sum") {
      throw hogwild::InputError(
          fmt::format("--batch-reduce: expected mean or sum, found '{}'", *v));
    }
    config.schedule.mean = *v == "mean";
  }
  if (const auto v = given<std::string>(cmd, "--sharding")) {
    if (*v != "static" && *v != "dynamic") {
      throw hogwild::InputError(
          fmt::format("--sharding: expected static or dynamic, found '{}'", *v));
    }
    config.dynamic_sharding = *v == "dynamic";
  }
  if (const auto v = given<std::string>(cmd, "--worker-speed")) config.speed.parse_speeds(*v);
  if (const auto v = given<std::string>(cmd, "--straggler")) config.speed.parse_straggler(*v);
  if (const auto v = given<std::string>(cmd, "--pause")) config.speed.parse_pause(*v);
  if (const auto v = given<int>(cmd, "--evals-per-epoch")) config.evals_per_epoch = *v;
  config.validate();
  const auto train_path = given<std::string>(cmd, "--train").value_or("");
  const auto test_path = given<std::string>(cmd, "--test").value_or("");
  const std::string json_path = given<std::string>(cmd, "--json").value_or("");
  const std::string csv_path = given<std::string>(cmd, "--csv").value_or("");
  const bool quiet = cmd.get_option("--quiet")->count() > 0;
  const bool ratings = config.model == hogwild::ModelKind::kFactorisation;

  hogwild::ModelCallbacks callbacks;
  const StopOnSignal stop_on_signal;
  callbacks.stop = stop_on_signal.flag();
  const std::string checkpoint_path = given<std::string>(cmd, "--checkpoint").value_or("");
  const std::string resume_path = given<std::string>(cmd, "--resume").value_or("");
  // What a checkpoint of this run holds besides its progress (each format fills in the data's
  // shape); --resume must match it.
  hogwild::Checkpoint checkpoint;
  checkpoint.model = std::string(hogwild::to_string(config.model));
  checkpoint.format = o.format;
  checkpoint.config = hogwild::config_to_json(config.resolved(), -1);
  std::optional<hogwild::Checkpoint> resumed;
  hogwild::TrainState resume_from;
  // Loads --resume (checked against this run) and sets up --checkpoint; returns the state to
  // resume from, or null.
  const std::size_t max_parameters =
      given<std::size_t>(cmd, "--max-parameters").value_or(kDefaultMaxParameters);
  const auto prepare = [&]() -> const hogwild::TrainState* {
    const std::string cause = checkpoint.format == "ratings"
                                  ? fmt::format("{} users and {} items at rank {}",
                                                checkpoint.users, checkpoint.items, checkpoint.rank)
                                  : fmt::format("the largest feature index {} and {} classes",
                                                checkpoint.features, checkpoint.classes);
    // Parameters plus the optimiser's buffers, checked before the trainer allocates them.
    const std::size_t params = hogwild::checkpoint_parameters(checkpoint);
    if (params > 0) {  // 0: a shape the trainer rejects with its own message (one class)
      check_model_size(train_path, params, 1 + hogwild::state_buffers(config.optimizer.kind),
                       max_parameters, cause);
    }
    if (!checkpoint_path.empty()) {
      callbacks.on_epoch_state = [&](const hogwild::TrainState& state) {
        take_state(checkpoint, state);
        hogwild::save_checkpoint(checkpoint_path, checkpoint);
      };
    }
    if (resume_path.empty()) return nullptr;
    resumed = load_for_resume(resume_path, checkpoint, checkpoint.config);
    resume_from = resume_state(*resumed);
    return &resume_from;
  };
  // Class index -> label value, as the model trainer maps them (sorted distinct labels).
  const auto classes_of = [](const auto& labels) {
    std::set<double> distinct(labels.begin(), labels.end());
    return std::vector<double>(distinct.begin(), distinct.end());
  };
  if (!quiet)
    callbacks.on_epoch = [&](const hogwild::ModelEpochRecord& r) { print_epoch(r, ratings); };
  auto header = [&](const std::string& data_line) {
    const auto r = config.resolved();
    fmt::print("{}\n", data_line);
    fmt::print(
        "model: {}{}, optimizer: {}, step: {}, schedule: {}, minibatches: {}, l2: {}, "
        "policy: {}, threads: {}, epochs: {}\n",
        hogwild::to_string(r.model),
        r.model == hogwild::ModelKind::kMlp ? " (hidden " + o.hidden + ")"
        : ratings                           ? fmt::format(" (rank {})", r.rank)
                                            : "",
        hogwild::to_string(r.optimizer.kind), r.optimizer.step,
        hogwild::to_string(r.optimizer.schedule), r.schedule.text, r.l2,
        hogwild::to_string(r.policy), r.threads, r.epochs);
    if (quiet) return;
    if (ratings) {
      fmt::print("{:>5} {:>9} {:>12} {:>12} {:>10} {:>10}\n", "epoch", "seconds", "train_loss",
                 "test_loss", "train_rmse", "test_rmse");
    } else {
      fmt::print("{:>5} {:>9} {:>12} {:>12} {:>9}\n", "epoch", "seconds", "train_loss", "test_loss",
                 "test_acc");
    }
  };

  hogwild::ModelReport report;
  // --compare-serial: the same run with the serial policy on one thread, for the speed-up.
  const bool compare_serial = cmd.get_option("--compare-serial")->count() > 0;
  auto serial_config = config;
  serial_config.policy = hogwild::Policy::kSerial;
  serial_config.threads = 1;
  std::optional<hogwild::ModelReport> serial;
  if (o.format == "idx") {
    auto train = hogwild::read_idx(train_path, o.train_labels);
    std::optional<hogwild::DenseDataset> test;
    if (!test_path.empty()) test = hogwild::read_idx(test_path, o.test_labels);
    if (o.limit > 0) {
      train.truncate(o.limit);
      if (test) test->truncate(o.limit);
    }
    header(fmt::format("data: {} images x {} pixels{}", train.rows(), train.cols,
                       test ? fmt::format("; test: {} images", test->rows()) : ""));
    checkpoint.features = train.cols;
    checkpoint.labels = classes_of(train.labels);
    checkpoint.classes = checkpoint.labels.size();
    if (config.model == hogwild::ModelKind::kMlp) {
      checkpoint.hidden.assign(config.hidden.begin(), config.hidden.end());
    }
    report = hogwild::train_model(config, train, test ? &*test : nullptr, callbacks, prepare());
    if (compare_serial && !report.interrupted)
      serial = hogwild::train_model(serial_config, train, test ? &*test : nullptr);
  } else if (o.format == "ratings") {
    auto train = hogwild::read_ratings(train_path);
    std::optional<hogwild::Ratings> test;
    if (!test_path.empty()) test = hogwild::read_ratings(test_path);
    header(fmt::format("data: {} ratings, {} users x {} items{}", train.size(), train.num_users,
                       train.num_items,
                       test ? fmt::format("; test: {} ratings", test->size()) : ""));
    checkpoint.users = std::max(train.num_users, test ? test->num_users : 0);
    checkpoint.items = std::max(train.num_items, test ? test->num_items : 0);
    checkpoint.rank = config.resolved().rank;
    // The factorisation model's mean: a float, summed in double as the model does.
    double sum = 0;
    for (const float v : train.values) sum += v;
    checkpoint.mean =
        train.size() ? static_cast<float>(sum / static_cast<double>(train.size())) : 0.0f;
    report = hogwild::train_model(config, train, test ? &*test : nullptr, callbacks, prepare());
    if (compare_serial && !report.interrupted)
      serial = hogwild::train_model(serial_config, train, test ? &*test : nullptr);
  } else {
    const auto train = hogwild::read_libsvm(train_path);
    std::optional<hogwild::Dataset> test;
    if (!test_path.empty()) test = hogwild::read_libsvm(test_path);
    header(fmt::format("data: {} rows x {} features, {} nonzeros{}", train.rows(),
                       train.num_features, train.nnz(),
                       test ? fmt::format("; test: {} rows", test->rows()) : ""));
    checkpoint.features = std::max<std::size_t>(1, train.num_features);
    checkpoint.labels = classes_of(train.labels);
    checkpoint.classes = checkpoint.labels.size();
    report = hogwild::train_model(config, train, test ? &*test : nullptr, callbacks, prepare());
    if (compare_serial && !report.interrupted)
      serial = hogwild::train_model(serial_config, train, test ? &*test : nullptr);
  }
  if (report.interrupted) {
    if (!json_path.empty()) write_text(json_path, hogwild::to_json(report) + "\n");
    if (!csv_path.empty()) write_text(csv_path, csv(report));
    report_interrupted(stop_on_signal, report.epochs.back().epoch, report.resumed_from,
                       checkpoint_path);
    return kExitInterrupted;
  }

  const auto& last = report.epochs.back();
  fmt::print("{}, {}: {} samples/s ({} samples in {:.3f} s of training)\n",
             hogwild::to_string(report.config.policy),
             report.config.simulate > 0
                 ? fmt::format("{} virtual workers in one thread", report.config.simulate)
                 : fmt::format("{} thread{}", report.config.threads,
                               report.config.threads == 1 ? "" : "s"),
             human_rate(report.samples_per_second), report.samples, report.train_seconds);
  if (report.config.schedule.kind == hogwild::ScheduleSpec::Kind::kTime ||
      report.config.speed.active()) {
    const auto& b = report.batch_sizes;
    std::string per_worker;
    for (const auto& w : report.workers) {
      per_worker += fmt::format("{}{:.1f}", per_worker.empty() ? "" : ", ", w.batch_sizes.mean());
    }
    fmt::print("batch size: mean {:.1f} (p50 {}, p99 {}) over {} updates; per worker mean {}\n",
               b.mean(), b.quantile(0.5), b.quantile(0.99), b.count(), per_worker);
  }
  if (report.staleness.updates.count() > 0) {
    const auto& st = report.staleness;
    fmt::print(
        "staleness ({} measured): mean {:.2f} updates (p50 {}, p99 {}, max {}), mean {:.2f} us\n",
        st.updates.count(), st.updates.mean(), st.updates.quantile(0.5), st.updates.quantile(0.99),
        st.updates.max(), st.nanos.mean() / 1e3);
  }
  std::string final_line = fmt::format("final: train loss {:.6f}", last.train_loss);
  if (last.train_rmse) final_line += fmt::format(", train rmse {:.5f}", *last.train_rmse);
  if (last.test_loss) final_line += fmt::format(", test loss {:.6f}", *last.test_loss);
  if (last.test_accuracy)
    final_line += fmt::format(", test accuracy {:.2f}%", 100 * *last.test_accuracy);
  if (last.test_rmse) final_line += fmt::format(", test rmse {:.5f}", *last.test_rmse);
  fmt::print("{}\n", final_line);
  std::string json = hogwild::to_json(report);
  if (serial) {
    const double speedup = report.samples_per_second / serial->samples_per_second;
    fmt::print("serial, 1 thread: {} samples/s on the same data\n",
               human_rate(serial->samples_per_second));
    fmt::print("speed-up over serial: {:.2f}x\n", speedup);
    auto parsed = nlohmann::ordered_json::parse(json);
    parsed["serial_baseline"] = {
        {"samples_per_second", serial->samples_per_second},
        {"final", nlohmann::ordered_json::parse(hogwild::to_json(*serial))["final"]},
        {"speedup", speedup}};
    json = parsed.dump(2);
  }
  if (!json_path.empty()) write_text(json_path, json + "\n");
  if (!csv_path.empty()) write_text(csv_path, csv(report));
  return 0;
}

}  // namespace hogwild_cli
