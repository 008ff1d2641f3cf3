#include "train_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <type_traits>

#include "cli_paths.h"
#include "hogwild/error.h"

namespace hogwild_cli {
namespace {

using A = TrainArgs;
using TC = hogwild::TrainConfig;
using OC = hogwild::OptimizerConfig;
using hogwild::InputError;

// Binds an option to the field reached from TrainArgs through `Members` (a flag for a bool),
// its current value shown as the default.
template <auto... Members>
CLI::Option* to(CLI::App& cmd, A& a, const TrainOption& self) {
  // clang-format off
  auto& field = (a .* ... .* Members);  // a.*m1.*m2...
  // clang-format on
  const std::string name(self.name), help(self.help);
  if constexpr (std::is_same_v<std::remove_cvref_t<decltype(field)>, bool>) {
    return cmd.add_flag(name, field, help);
  } else {
    auto* option = cmd.add_option(name, field, help);
    if constexpr (std::is_unsigned_v<std::remove_cvref_t<decltype(field)>>) {
      option->check(unsigned_range<std::remove_cvref_t<decltype(field)>>());
    }
    if (self.flags & kOutput) {
      option->check(output_path());
    } else if (self.flags & kPath) {
      option->check(file_path());
    }
    if (self.flags & kModelDefault) return option->default_str("model's");
    return option->capture_default_str();
  }
}

// Shorthands for the table: a field of TrainArgs, of its config, of the config's optimiser.
template <auto M>
constexpr TrainOption::Bind arg = to<M>;
template <auto... M>
constexpr TrainOption::Bind cfg = to<&A::config, M...>;
template <auto M>
constexpr TrainOption::Bind opt = to<&A::config, &TC::optimizer, M>;

// `value` of `option` is `first` (true) or `second` (false); InputError otherwise.
bool either(std::string_view option, const std::string& value, std::string_view first,
            std::string_view second) {
  if (value != first && value != second) {
    throw InputError(
        fmt::format("{}: expected {} or {}, found '{}'", option, first, second, value));
  }
  return value == first;
}

// --step: auto, or a number.
void apply_step(const std::string& text, hogwild::OptimizerConfig& o) {
  if (text == "auto") {
    o.auto_step = true;
    return;
  }
  double step = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), step);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    throw InputError(fmt::format("--step: expected a number or auto, found '{}'", text));
  }
  o.step = step;
}

// --schedule, or --batch B as fixed:B, or the model's default; then --batch-reduce and
// --max-batch.
void apply_schedule(A& a, TC& c) {
  if (a.given("--batch") && a.given("--schedule")) {
    throw InputError("--batch: expected either --batch or --schedule, found both");
  }
  if (a.given("--schedule")) c.schedule = hogwild::ScheduleSpec::parse(a.schedule);
  if (a.given("--batch")) {
    if (a.batch < 1 || a.batch > 65536) {
      throw InputError(
          fmt::format("--batch: expected a minibatch size in [1, 65536], found {}", a.batch));
    }
    c.schedule = hogwild::ScheduleSpec::parse(fmt::format("fixed:{}", a.batch));
  }
  // Softmax on sparse rows: single examples (a minibatch pays off on dense rows only).
  const bool sparse_softmax =
      std::holds_alternative<hogwild::SoftmaxModel>(c.model) && a.format == "libsvm";
  if (sparse_softmax && !a.given("--batch") && !a.given("--schedule")) {
    c.schedule = hogwild::ScheduleSpec::parse("fixed:1");
  }
  c.schedule = c.minibatches();
  c.schedule->mean = either("--batch-reduce", a.batch_reduce, "mean", "sum");
  c.schedule->max_batch = a.max_batch;
}

// Options of one model's shape (--hidden for mlp, --rank and --init-scale for mf): refused
// with another model rather than ignored.
template <class Model>
Model* shape_of(A& a, TC& c, std::string_view option, std::string_view model) {
  auto* shape = std::get_if<Model>(&c.model);
  if (!shape && a.given(option)) {
    throw InputError(fmt::format("{}: expected only with --model {}, found it with --model {}",
                                 option, model, hogwild::model_name(c.model)));
  }
  return shape;
}

// The model: --model, or from --format (ratings train mf, idx softmax, libsvm logistic).
void apply_model(A& a, TC& c) {
  if (a.format != "libsvm" && a.format != "idx" && a.format != "ratings") {
    throw InputError(
        fmt::format("--format: expected one of libsvm, idx, ratings; found '{}'", a.format));
  }
  if (a.given("--model")) {
    c.model = hogwild::parse_model(a.model_name);
  } else if (a.format == "ratings") {
    c.model = hogwild::FactorisationModel{};
  } else if (a.format == "idx") {
    c.model = hogwild::SoftmaxModel{};
  }
  c.check_format(a.format);
  for (const auto& option : train_options()) {
    if ((option.flags & kLinearOnly) && a.given(option.name) && !hogwild::is_linear(c.model)) {
      throw InputError(fmt::format(
          "{}: expected only with the linear models (logistic, hinge, squared), found it with "
          "--model {}",
          option.name, hogwild::model_name(c.model)));
    }
  }
}

// `text` as a whole number in [lo, hi] (digits only), or nothing.
std::optional<std::size_t> count_in(std::string_view text, std::size_t lo, std::size_t hi) {
  std::size_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < lo || value > hi) return {};
  return value;
}

// --replicate: off -> 0, auto -> kReplicateAuto, M >= 1 -> M.
int parse_replicate(const std::string& text) {
  if (text == "off") return 0;
  if (text == "auto") return TC::kReplicateAuto;
  if (const auto m = count_in(text, 1, std::numeric_limits<int>::max()))
    return static_cast<int>(*m);
  throw InputError(fmt::format(
      "--replicate: expected off, auto or a count of samples between merges, found '{}'", text));
}

// --read-latency, --write-latency: 0 (none) or a positive duration, in nanoseconds.
std::int64_t parse_latency(const std::string& text, std::string_view option) {
  return text == "0" ? 0 : hogwild::parse_duration_ns(text, option);
}

// --data-precision: f32, f16 or u8.
hogwild::DataPrecision parse_data_precision(const std::string& text) {
  if (text == "f32") return hogwild::DataPrecision::kF32;
  if (text == "f16") return hogwild::DataPrecision::kF16;
  if (text == "u8") return hogwild::DataPrecision::kU8;
  throw InputError(fmt::format("--data-precision: expected f32, f16 or u8, found '{}'", text));
}

// --order: rows -> 0; blocks -> the default run length; blocks:B -> B.
std::size_t parse_order(const std::string& text) {
  if (text == "rows") return 0;
  if (text == "blocks") return TC::kDefaultBlockRows;
  constexpr std::string_view kPrefix = "blocks:";
  if (text.starts_with(kPrefix)) {
    if (const auto b = count_in(text.substr(kPrefix.size()), 1, std::size_t{1} << 24)) return *b;
  }
  throw InputError(fmt::format(
      "--order: expected rows, blocks or blocks:B with B in [1, 16777216], found '{}'", text));
}

// --hot-features: a count of features, 0 for all.
std::size_t parse_hot_features(const std::string& text) {
  if (const auto k = count_in(text, 0, TC::kMaxHotFeatures)) return *k;
  throw InputError(
      fmt::format("--hot-features: expected a count of features in [0, {}], found '{}'",
                  TC::kMaxHotFeatures, text));
}

// --hidden 256,128 -> {256, 128}.
std::vector<std::size_t> parse_hidden(const std::string& text) {
  std::vector<std::size_t> widths;
  for (std::size_t begin = 0; begin < text.size();) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const auto width = count_in(std::string_view(text).substr(begin, comma - begin), 1, SIZE_MAX);
    if (!width) {
      throw InputError(fmt::format(
          "--hidden: expected comma-separated layer widths such as 256,128, found '{}'", text));
    }
    widths.push_back(*width);
    begin = comma + 1;
  }
  if (widths.empty()) throw InputError("--hidden: expected at least one layer width, found none");
  return widths;
}

// "a", "a or b", "a, b or c".
template <class Name>
std::string one_of(std::initializer_list<Name> names) {
  std::string text;
  std::size_t i = 0;
  for (const auto& name : names) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += std::string(hogwild::to_string(name));
    ++i;
  }
  return text;
}

// Where an option applies (TrainOption::Applies): "" when the run takes it.
template <hogwild::OptimizerKind... Kinds>
std::string with_optimizer(const A&, const TC& c) {
  if (((c.optimizer.kind == Kinds) || ...)) return {};
  return fmt::format("--optimizer {}, found --optimizer {}", one_of({Kinds...}),
                     hogwild::to_string(c.optimizer.kind));
}

template <hogwild::Schedule... Schedules>
std::string with_step_schedule(const A&, const TC& c) {
  if (((c.optimizer.schedule == Schedules) || ...)) return {};
  return fmt::format("--step-schedule {}, found --step-schedule {}", one_of({Schedules...}),
                     hogwild::to_string(c.optimizer.schedule));
}

std::string with_patience(const A&, const TC& c) {
  return c.patience > 0 ? "" : "--patience above 0 (the improvement it counts), found --patience 0";
}

std::string with_coherence(const A&, const TC& c) {
  if (c.coherence_sample > 0) return {};
  return "--coherence-sample above 0 (the measurement it sets), found --coherence-sample 0";
}

// The linear models measure coherence on single-sample updates: their minibatch path (which a
// speed model's clock takes too) keeps no gradient to compare.
std::string with_single_samples(const A&, const TC& c) {
  if (!hogwild::is_linear(c.model)) return {};
  const hogwild::ScheduleSpec s = c.minibatches();
  const bool single = s.kind == hogwild::ScheduleSpec::Kind::kFixed && s.batch <= 1;
  if (single && !c.speed.active()) return {};
  return fmt::format(
      "single-sample updates for the linear models (their minibatches keep no gradient to "
      "compare), found {}",
      single ? "a speed model (--worker-speed, --straggler or --pause)" : "--schedule " + s.text);
}

std::string with_time_windows(const A&, const TC& c) {
  const hogwild::ScheduleSpec s = c.minibatches();
  if (s.kind == hogwild::ScheduleSpec::Kind::kTime) return {};
  return fmt::format("--schedule time:W (the windows it closes), found --schedule {}", s.text);
}

std::string with_idx(const A& a, const TC&) {
  return a.format == "idx" ? "" : fmt::format("--format idx, found --format {}", a.format);
}

std::string with_idx_test(const A& a, const TC& c) {
  if (a.format != "idx") return with_idx(a, c);
  return a.test.empty() ? "--test (the images they label), found no --test" : "";
}

std::string with_libsvm(const A& a, const TC&) {
  return a.format == "libsvm" ? "" : fmt::format("--format libsvm, found --format {}", a.format);
}

constexpr unsigned kFree = kFreeOnResume;
constexpr unsigned kModels = kModelGroup;

// clang-format off
const TrainOption kTable[] = {
  {"--train", "", kRequired | kPath, "training data (LIBSVM/SVMlight text; any format may be gzip, bzip2 "
   "or xz compressed; - reads standard input)", arg<&A::train>},
  {"--test", "", kPath, "test data, evaluated every epoch (features beyond the training data's "
   "dimension are ignored)", arg<&A::test>},
  {"--zero-based", "", 0, "LIBSVM feature indices: auto (0-based when an index 0 appears, as "
   "scikit-learn decides), yes or no; the test file is read as the training file was",
   arg<&A::zero_based>, [](A& a, TC&) {
     if (a.zero_based != "auto" && a.zero_based != "yes" && a.zero_based != "no") {
       throw InputError(fmt::format("--zero-based: expected auto, yes or no, found '{}'",
                                    a.zero_based));
     }
     a.index_base = a.zero_based == "auto" ? hogwild::IndexBase::kAuto
                    : a.zero_based == "yes" ? hogwild::IndexBase::kZero
                                            : hogwild::IndexBase::kOne;
   }, with_libsvm},
  {"--model", "model", 0, "logistic, hinge (linear SVM) or squared (linear least squares) on "
   "libsvm data; softmax (libsvm or idx), mlp (idx) or mf (ratings); default: logistic, or "
   "softmax for idx and mf for ratings", arg<&A::model_name>, apply_model},
  {"--policy", "policy", 0, "how workers write shared weights: racy (Hogwild!), atomic, striped, "
   "locked, serial (one worker, no synchronisation)", arg<&A::policy>,
   [](A& a, TC& c) { c.policy = hogwild::parse_policy(a.policy); }},
  {"--threads", "threads", kFree, "worker threads (0 = all cores)", cfg<&TC::threads>},
  {"--epochs", "epochs", kFree | kModelDefault, "passes over the training data (the model's: 10; "
   "mf 100, a cap: its plateau schedule ends the run once the training loss stops falling)",
   cfg<&TC::epochs>, [](A& a, TC& c) {
     if (!a.given("--epochs") && std::holds_alternative<hogwild::FactorisationModel>(c.model)) {
       c.epochs = TC::kFactorisationEpochs;
     }
   }},
  {"--step", "step", 0, "initial step size, or auto: of the half-decades from 1e-4 to 10, the "
   "largest step whose model after one pass over a sample of 1000 examples (mf: a tenth of the "
   "data when more) has a loss on a second sample within 5% of the lowest; every model but "
   "softmax takes the half-decade below it (docs/defaults.md); the passes run at once on the "
   "run's threads, and their time counts in the training time; mf's default is its fixed step, "
   "0.1 (1e-2 with adam and rmsprop)",
   arg<&A::step>, [](A& a, TC& c) {
     // A factorisation's one-pass trials tell the steps apart on large data only (measured).
     const bool mf = std::holds_alternative<hogwild::FactorisationModel>(c.model);
     if (a.given("--step") || !mf) apply_step(a.step, c.optimizer);
   }},
  {"--decay", "decay", 0, "epoch step schedule: step multiplier applied after each epoch",
   opt<&OC::decay>, nullptr, with_step_schedule<hogwild::Schedule::kEpoch>},
  {"--l2", "l2", kModelDefault, "L2 regularisation strength lambda (objective + lambda/2 |w|^2; "
   "the model's: 0, 0.04 for mf)", arg<&A::l2>, [](A& a, TC& c) { if (a.given("--l2")) c.l2 = a.l2; }},
  {"--average", "average", kLinearOnly | kModelDefault, "linear models: epochs (the model is the "
   "mean of the weights at each epoch's end, epoch k weighted by k, which damps the noise of the "
   "last steps; training goes on from the last weights) or off (the last weights); the model's: "
   "epochs for squared, off for logistic and hinge", arg<&A::average>, [](A& a, TC& c) {
     if (a.given("--average")) c.average = either("--average", a.average, "epochs", "off");
   }},
  {"--data-precision", "data_precision", kLinearOnly | kFreeOnResume, "linear models: how the "
   "training rows store their values: f32 (as read), f16 (half floats) or u8 (a byte times a "
   "scale per row, for values >= 0; integers up to 255 exactly): fewer bytes per nonzero for the "
   "training loops to read (Buckwild!) but more instructions to widen them, slower where the "
   "loop does not wait on memory (docs/benchmarks.md); evaluations read the data as given. "
   "Binary data stores no values at any precision and indices take 16 bits where the dimension "
   "allows (the report's training_rows)", arg<&A::data_precision>, [](A& a, TC& c) {
     c.data_precision = parse_data_precision(a.data_precision);
   }},
  {"--feature-order", "feature_order", kLinearOnly | kFreeOnResume, "linear models: frequency "
   "(the training loops see the features renumbered by how many examples hold them, the most "
   "frequent first, where the model is wider than 2^18 features and --data-precision is f32: "
   "the weights the rows touch most share cache lines; the same results, bit for bit, for a copy "
   "of the indices) or given (the file's numbering)", arg<&A::feature_order>,
   [](A& a, TC& c) {
     c.frequency_order = either("--feature-order", a.feature_order, "frequency", "given");
   }},
  {"--weights", "weights", kLinearOnly | kFreeOnResume, "linear models: how the training loops "
   "store the shared weights: f32 or bf16 (bfloat16, half the bytes, each sum rounded "
   "stochastically so small steps land on average): for models too wide for the caches with "
   "features spread over them (1.3x on 8M uniform features; slower on models that fit in L2, "
   "docs/benchmarks.md); racy or serial policy, single-sample updates, one process; "
   "evaluations, checkpoints and reports read them as floats",
   arg<&A::weights>, [](A& a, TC& c) {
     c.weights = either("--weights", a.weights, "f32", "bf16") ? hogwild::WeightPrecision::kF32
                                                              : hogwild::WeightPrecision::kBf16;
   }},
  {"--seed", "seed", 0, "seed of the initialisation and the per-epoch shuffles", cfg<&TC::seed>},
  {"--divergence-factor", "divergence_factor", 0, "stop when the training loss exceeds this "
   "multiple of its initial value", cfg<&TC::divergence_factor>},
  {"--patience", "patience", kFree, "stop before --epochs once this many epochs in a row end "
   "with a training loss not --tol below the best before them (0 = off: run every epoch)",
   cfg<&TC::patience>},
  {"--tol", "tol", kFree, "the decrease of the training (or held-out) loss that --patience counts "
   "as an improvement", cfg<&TC::tol>, nullptr, with_patience},
  {"--validation-fraction", "validation_fraction", 0, "hold out this fraction of the training "
   "examples (a seeded random choice; at most 0.5), train on the rest and let --patience watch "
   "their loss instead of the training loss (0 = none)", cfg<&TC::validation_fraction>},
  {"--train-loss-sample", "train_loss_sample", kFree, "measure the training loss after each "
   "epoch on this many training examples (a seeded random choice) instead of all of them: on "
   "large data a pass over every example costs about as much as an epoch of training; "
   "--patience and the divergence check then watch the sample's loss (0 = all)",
   cfg<&TC::train_loss_sample>},
  {"--delay", "delay", 0, "injected delay distribution: none, const:S, uniform:S (0..S), "
   "geometric:P[:CAP] (P(d=k) = P(1-P)^k), trace:FILE (one delay per line, cyclic); a delay d "
   "applies an update after d more of its worker's own steps", arg<&A::delay>,
   [](A& a, TC& c) { c.delay = hogwild::DelaySpec::parse(a.delay); }},
  {"--delay-unit", "delay_unit", 0, "what a --delay counts: own (the worker's own steps) or "
   "global (every worker's steps, as Dai et al. count staleness; --simulate only)",
   arg<&A::delay_unit>,
   [](A& a, TC& c) { c.global_delay = !either("--delay-unit", a.delay_unit, "own", "global"); }},
  {"--staleness-sample", "staleness_sample", kFree, "fraction of updates whose staleness is "
   "measured (1 = all, 0 = off)", cfg<&TC::staleness_sample>},
  {"--coherence-sample", "coherence_sample", kFree, "fraction of steps whose gradient coherence "
   "is measured (0 = off; the linear models measure single-sample updates)",
   cfg<&TC::coherence_sample>, nullptr, with_single_samples},
  {"--coherence-lag", "coherence_lag", kFree, "coherence compares a gradient with the worker's "
   "gradient this many steps back", cfg<&TC::coherence_lag>, nullptr, with_coherence},
  {"--simulate", "simulate", 0, "K virtual workers (up to 1024) in one thread, each with its own "
   "delay ring: bit-reproducible for a seed on any machine (0 = real threads)",
   cfg<&TC::simulate>},
  {"--clock", "clock", 0, "how --simulate orders its workers: rounds (each takes one sample or "
   "minibatch in turn) or virtual (a discrete-event simulation: the worker whose virtual clock "
   "is earliest takes its next sample; samples cost --sample-cost, the speed model and time "
   "windows act in virtual time, and reports give virtual_seconds)", arg<&A::clock>,
   [](A& a, TC& c) { c.virtual_time = !either("--clock", a.clock, "rounds", "virtual"); }},
  {"--sample-cost", "sample_cost", kFree, "--clock virtual: the virtual compute time of one sample "
   "(e.g. 800ns, 2us), or measured: the model's own time per sample on this machine, from three "
   "serial epochs over up to 20,000 examples before training; --worker-speed divides it, "
   "--straggler and --pause add to it",
   arg<&A::sample_cost>, [](A& a, TC& c) {
     if (a.given("--sample-cost") && !c.virtual_time) {
       throw InputError("--sample-cost: expected only with --clock virtual, found " +
                        a.sample_cost);
     }
     c.measure_sample_cost = a.sample_cost == "measured";
     if (!c.measure_sample_cost) {
       c.sample_cost_ns = hogwild::parse_duration_ns(a.sample_cost, "--sample-cost");
     }
   }},
  {"--read-latency", "read_latency", 0, "--clock virtual: after sending each update a worker "
   "waits this long (e.g. 5us) for the parameters its next update reads; 0 = none",
   arg<&A::read_latency>, [](A& a, TC& c) {
     c.read_latency_ns = parse_latency(a.read_latency, "--read-latency");
   }},
  {"--write-latency", "write_latency", 0, "--clock virtual: an update lands on the parameters "
   "this long (e.g. 20us) after its worker sends it, while every worker goes on computing; it "
   "counts towards the update's staleness; 0 = at once",
   arg<&A::write_latency>, [](A& a, TC& c) {
     c.write_latency_ns = parse_latency(a.write_latency, "--write-latency");
   }},
  {"--bounded-staleness", "bounded_staleness", 0, "stale synchronous parallel: a worker does not "
   "start its update c+S+1 before every worker has applied its update c (0 = bulk-synchronous, "
   "-1 = unbounded); threads, or --simulate with --clock virtual", cfg<&TC::bounded_staleness>},
  {"--schedule", "schedule", 0, "minibatches: fixed:B (B samples per update; --batch B is "
   "shorthand) or time:DURATION (e.g. time:200us: samples until the window has passed, then one "
   "update); default fixed:1, softmax on idx data fixed:16, mlp fixed:32", arg<&A::schedule>,
   apply_schedule},
  {"--batch-reduce", "batch_reduce", 0, "an update is the mean of its samples' gradients (step "
   "independent of the batch size, as in the fixed-time minibatch analysis) or their sum",
   arg<&A::batch_reduce>},
  {"--max-batch", "max_batch", 0, "a time window also closes after this many samples",
   arg<&A::max_batch>, nullptr, with_time_windows},
  {"--worker-speed", "worker_speed", 0, "relative speed of each worker in (0, 1], e.g. 1,0.25: "
   "slower workers busy-wait (1/speed - 1) x their compute time after each sample (in virtual "
   "time: fewer speeds than workers leave the rest at 1)",
   arg<&A::worker_speed>,
   [](A& a, TC& c) { if (!a.worker_speed.empty()) c.speed.parse_speeds(a.worker_speed); }},
  {"--straggler", "straggler", 0, "shifted-exp:SHIFT:MEAN: every sample costs SHIFT plus an "
   "exponential extra with mean MEAN (busy-wait), e.g. shifted-exp:1us:4us", arg<&A::straggler>,
   [](A& a, TC& c) { if (!a.straggler.empty()) c.speed.parse_straggler(a.straggler); }},
  {"--pause", "pause", 0, "P:DURATION: before each sample, a worker stalls for DURATION with "
   "probability P", arg<&A::pause>,
   [](A& a, TC& c) { if (!a.pause.empty()) c.speed.parse_pause(a.pause); }},
  {"--replicate", "replicate", 0, "per-worker model replicas against cache-line contention: "
   "each worker trains a private copy and adds its changes to the shared model every M samples; "
   "off, auto or M. auto, linear models: with 2 to 17 threads and single-sample updates, "
   "M = 2048 / (threads - 1), so others' updates reach a worker within ~2048 updates, for a "
   "model of up to 1M weights, or for a wider one (f32 values) the 4096 hottest features as "
   "--hot-features when they hold a quarter of the nonzeros or more (CTR-like data); softmax on IDX data and mlp: with 2 or more threads, fixed minibatches and no "
   "delay or simulation, M = 256 (64 with adam or rmsprop), each worker with its own optimiser "
   "state; not for mf or softmax on LIBSVM data, whose updates touch a few rows",
   arg<&A::replicate>,
   [](A& a, TC& c) { c.replicate = parse_replicate(a.replicate); }},
  {"--hot-features", "hot_features", kLinearOnly, "with replicas: replicate only the K features "
   "the most training rows hold (a CTR model's frequent categories, where workers collide) and "
   "write the others straight to the shared model, so a merge costs K weights instead of the "
   "whole model (0 = replicate every feature)", arg<&A::hot_features>, [](A& a, TC& c) {
     c.hot_features = parse_hot_features(a.hot_features);
   }},
  {"--order", "order", 0, "the order each epoch visits the training rows: rows (a fresh random "
   "permutation of the rows) or blocks[:B] (B consecutive stored rows at a time, default 128, "
   "the blocks in a fresh random order, rows stored in a random order drawn from --seed at "
   "load: reads stream through memory instead of missing the caches on every row); default "
   "blocks for the linear models, rows for softmax, mlp and mf", arg<&A::order>,
   [](A& a, TC& c) {
     if (a.given("--order") || hogwild::is_linear(c.model)) c.block_rows = parse_order(a.order);
   }},
  {"--sharding", "sharding", 0, "static: each worker gets an equal slice of every epoch; "
   "dynamic: workers claim chunks of 256 samples as they go, so faster workers process more",
   arg<&A::sharding>, [](A& a, TC& c) {
     c.dynamic_sharding = !either("--sharding", a.sharding, "static", "dynamic");
   }},
  {"--evals-per-epoch", "evals_per_epoch", kFree, "training-loss evaluations per epoch for the "
   "loss-against-time curve (evaluation time is excluded from training time)",
   cfg<&TC::evals_per_epoch>},
  {"--json", "", kReportPath | kOutput, "write the full report (config, dataset, epochs) as JSON",
   arg<&A::json>},
  {"--csv", "", kReportPath | kOutput, "write one row per epoch as CSV (for plotting)", arg<&A::csv>},
  {"--sync", "", kFree, "across processes started by mpirun (mpirun -np N hogwild train ...; "
   "each trains its part of every epoch with its threads, rank 0 prints and writes the files): "
   "rma (one-sided: every --sync-every samples a process adds what it changed to the shared "
   "model with MPI_Get_accumulate and reads the others' changes back, no barrier) or allreduce "
   "(every --sync-every samples the processes average their models with MPI_Allreduce)",
   arg<&A::sync>, [](A& a, TC&) { either("--sync", a.sync, "rma", "allreduce"); }},
  {"--sync-every", "", kFree, "samples a process trains between its merges with the others",
   arg<&A::sync_every>, [](A& a, TC&) {
     if (a.sync_every == 0) {
       throw hogwild::InputError("--sync-every: expected at least 1 sample, found 0");
     }
   }},
  {"--sync-bound", "", kFree, "with --sync rma, bounded staleness across processes (stale "
   "synchronous parallel): a process does not start its merge c + S + 1 before every process "
   "has made merge c, so the samples the others merge between a process's merges stay within "
   "(processes - 1) x 2 (S + 1) x --sync-every; -1 = no bound",
   arg<&A::sync_bound>, [](A& a, TC&) {
     if (a.sync_bound < -1) {
       throw hogwild::InputError(
           fmt::format("--sync-bound: expected -1 (none) or a bound >= 0, found {}", a.sync_bound));
     }
   }},
  {"--compare-serial", "", 0, "also train with --policy serial on one thread and print the "
   "speed-up", arg<&A::compare_serial>},
  {"--quiet", "", 0, "print only the summary, not the per-epoch table", arg<&A::quiet>},
  {"--checkpoint", "", kOutput, "save the model after every epoch to FILE (parameters, optimiser "
   "state, epoch, config; written atomically with a checksum); on SIGINT/SIGTERM the run stops, "
   "FILE keeps the last completed epoch and the command exits 130", arg<&A::checkpoint>},
  {"--resume", "", kPath, "continue from a checkpoint written by --checkpoint with the same options "
   "and training data (a CRC-32 of its rows is compared; --epochs is the total, counting the "
   "epochs already done; --threads and the number of processes may differ); a serial or "
   "--simulate run resumed ends bit for bit where the uninterrupted run would, its injected "
   "delays, stragglers and virtual time included; a corrupt or mismatched checkpoint exits 2",
   arg<&A::resume>},
  {"--max-parameters", "", 0, "refuse a model with more parameters than this before allocating "
   "it (a huge feature index, user or item id asks for one weight per index); models larger than "
   "the machine's memory are refused too", arg<&A::max_parameters>},
  {"--format", "", kModels, "training data format: libsvm (text), idx (MNIST images; .gz read "
   "directly), ratings (`user item rating` lines)", arg<&A::format>},
  {"--train-labels", "", kModels | kPath, "idx: training labels file (default: found beside the images "
   "by the standard name)", arg<&A::train_labels>, nullptr, with_idx},
  {"--test-labels", "", kModels | kPath, "idx: test labels file (default: beside the test images)",
   arg<&A::test_labels>, nullptr, with_idx_test},
  {"--limit", "", kModels, "use only the first N training and test examples (images, rows or "
   "ratings; the dimension stays the file's; LIBSVM in one process only) (0 = all)", arg<&A::limit>},
  {"--hidden", "hidden", kModels, "mlp: hidden layer widths, comma-separated (e.g. 256,128)",
   arg<&A::hidden>, [](A& a, TC& c) {
     if (auto* mlp = shape_of<hogwild::MlpModel>(a, c, "--hidden", "mlp")) {
       mlp->hidden = parse_hidden(a.hidden);
     }
   }},
  {"--rank", "rank", kModels, "mf: factorisation rank", arg<&A::rank>, [](A& a, TC& c) {
     if (auto* mf = shape_of<hogwild::FactorisationModel>(a, c, "--rank", "mf")) mf->rank = a.rank;
   }},
  {"--init-scale", "init_scale", kModels, "mf: standard deviation of the initial factors",
   arg<&A::init_scale>, [](A& a, TC& c) {
     if (auto* mf = shape_of<hogwild::FactorisationModel>(a, c, "--init-scale", "mf")) {
       mf->init_scale = a.init_scale;
     }
   }},
  {"--optimizer", "optimizer", kModels, "sgd, momentum, nesterov, adagrad, rmsprop or adam "
   "(linear models: sgd; the default for mlp: adam)", arg<&A::optimizer>, [](A& a, TC& c) {
     const bool mlp = std::holds_alternative<hogwild::MlpModel>(c.model);
     c.optimizer.kind = mlp && !a.given("--optimizer") ? hogwild::OptimizerKind::kAdam
                                                        : hogwild::parse_optimizer(a.optimizer);
   }},
  // The report's `schedule` is the minibatch schedule's: this option has no key of its own.
  {"--step-schedule", "", kModels | kModelDefault, "step schedule (the model's: epoch; plateau for mf): constant, epoch (times --decay each epoch), "
   "inverse (1/t), inverse-sqrt, plateau (constant until --plateau-patience epochs in a row end "
   "with a loss not --plateau-threshold below the best, then times --plateau-factor; the plateau that would "
   "take the step below 1/100 of its start ends the run) (linear models: the step changes once "
   "per epoch)", arg<&A::step_schedule>,
   [](A& a, TC& c) {
     const bool mf = std::holds_alternative<hogwild::FactorisationModel>(c.model);
     c.optimizer.schedule = mf && !a.given("--step-schedule")
                                ? hogwild::Schedule::kPlateau
                                : hogwild::parse_schedule(a.step_schedule);
   }},
  {"--step-schedule-scale", "schedule_scale", kModels, "epochs per unit of t in the inverse "
   "schedules", opt<&OC::schedule_scale>, nullptr,
   with_step_schedule<hogwild::Schedule::kInverse, hogwild::Schedule::kInverseSqrt>},
  {"--plateau-patience", "plateau_patience", kModels, "plateau schedule: epochs in a row without "
   "an improvement (of the training loss, or the held-out loss with --validation-fraction) that "
   "make a plateau", opt<&OC::plateau_patience>, nullptr, with_step_schedule<hogwild::Schedule::kPlateau>},
  {"--plateau-threshold", "plateau_threshold", kModels, "plateau schedule: the fraction of the "
   "best loss so far that a loss must fall below it to count as an improvement (relative, as "
   "PyTorch's ReduceLROnPlateau)", opt<&OC::plateau_threshold>, nullptr,
   with_step_schedule<hogwild::Schedule::kPlateau>},
  {"--plateau-factor", "plateau_factor", kModels, "plateau schedule: the step's multiplier at a "
   "plateau", opt<&OC::plateau_factor>, nullptr, with_step_schedule<hogwild::Schedule::kPlateau>},
  {"--momentum", "momentum", kModels, "momentum/nesterov: mu", opt<&OC::momentum>, nullptr,
   with_optimizer<hogwild::OptimizerKind::kMomentum, hogwild::OptimizerKind::kNesterov>},
  {"--rho", "rho", kModels, "rmsprop: decay of the squared-gradient average", opt<&OC::rho>,
   nullptr, with_optimizer<hogwild::OptimizerKind::kRmsprop>},
  {"--beta1", "beta1", kModels, "adam: first-moment decay", opt<&OC::beta1>, nullptr,
   with_optimizer<hogwild::OptimizerKind::kAdam>},
  {"--beta2", "beta2", kModels, "adam: second-moment decay", opt<&OC::beta2>, nullptr,
   with_optimizer<hogwild::OptimizerKind::kAdam>},
  {"--epsilon", "epsilon", kModels, "adagrad/rmsprop/adam: denominator offset", opt<&OC::epsilon>,
   nullptr, with_optimizer<hogwild::OptimizerKind::kAdagrad, hogwild::OptimizerKind::kRmsprop,
                           hogwild::OptimizerKind::kAdam>},
  {"--clip-norm", "clip_norm", kModels, "rescale each minibatch gradient to at most this L2 norm "
   "(0 = off)", opt<&OC::clip_norm>},
  {"--batch", "batch", kModels | kModelDefault, "minibatch size, shorthand for --schedule fixed:B (the model's: "
   "softmax 16 on idx data, mlp 32, else 1)", arg<&A::batch>},
};
// clang-format on

}  // namespace

bool TrainArgs::given(std::string_view name) const {
  const CLI::Option* option = command->get_option_no_throw(std::string(name));
  return option != nullptr && option->count() > 0;
}

std::span<const TrainOption> train_options() { return kTable; }

CLI::App* add_train(CLI::App& app, TrainArgs& args) {
  auto* cmd = app.add_subcommand(
      "train", "Train a linear model, softmax, an MLP or a factorisation with lock-free SGD.");
  args.command = cmd;
  for (const auto& option : kTable) {
    auto* added = option.bind(*cmd, args, option);
    if (option.flags & kRequired) added->required();
    if (option.flags & kModelGroup) added->group("Models (softmax, mlp, mf)");
  }
  return cmd;
}

void apply(TrainArgs& a) {
  for (const auto& option : kTable) {
    if (option.apply != nullptr) option.apply(a, a.config);
  }
  a.config.validate();
  for (const auto& option : kTable) {
    if (option.applies == nullptr || !a.given(option.name)) continue;
    if (const std::string needs = option.applies(a, a.config); !needs.empty()) {
      throw InputError(fmt::format("{}: expected only with {}", option.name, needs));
    }
  }
}

std::string option_of_key(std::string_view key) {
  for (const auto& option : kTable) {
    if (option.key == key) return std::string(option.name);
  }
  std::string name = "--" + std::string(key);
  std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

bool free_on_resume(std::string_view key) {
  for (const auto& option : kTable) {
    if (option.key == key) return (option.flags & kFreeOnResume) != 0;
  }
  return false;
}

std::string conversion_message(const CLI::App& command, const std::string& what) {
  constexpr std::string_view kPrefix = "Could not convert: ";
  const auto eq = what.find(" = ");
  if (what.rfind(kPrefix, 0) != 0 || eq == std::string::npos) return what;
  const std::string name = what.substr(kPrefix.size(), eq - kPrefix.size());
  const std::string value = what.substr(eq + 3);
  std::string type;
  if (const auto* option = command.get_option_no_throw(name)) type = option->get_type_name();
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

}  // namespace hogwild_cli
