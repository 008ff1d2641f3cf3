// The one training config: model names, defaults per model, and the checks every run passes.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <thread>

#include "engine/minibatch.h"
#include "hogwild/error.h"
#include "hogwild/trainer.h"

namespace hogwild {
namespace {

[[noreturn]] void fail(std::string_view option, std::string_view expected, const auto& found) {
  throw InputError(fmt::format("--{}: expected {}, found {}", option, expected, found));
}

// Replicas take the plain loops' shared reads and writes: the linear models' single-sample
// Hogwild! loop, the dense models' fixed minibatches. The delay layer, simulation (and with it
// the virtual clock and update latencies), the staleness bound, time windows, the linear
// models' minibatches and the speed model run loops of their own.
bool replicas_apply(const TrainConfig& c) {
  const ScheduleSpec s = c.minibatches();
  return c.simulate == 0 && c.bounded_staleness < 0 && c.delay.kind == DelaySpec::Kind::kNone &&
         s.kind == ScheduleSpec::Kind::kFixed && (s.batch <= 1 || !is_linear(c.model)) &&
         !c.speed.active();
}

bool adaptive(OptimizerKind kind) {
  return kind == OptimizerKind::kAdam || kind == OptimizerKind::kRmsprop;
}

// The initial step when none is given; chosen on Fashion-MNIST (softmax, mlp), generated
// ratings (mf) and RCV1-like data (linear).
double default_step(const ModelSpec& model, const OptimizerConfig& o) {
  if (is_linear(model)) return 0.5;
  double step = std::visit(
      [&]<class M>(const M&) {
        if constexpr (std::is_same_v<M, FactorisationModel>) return adaptive(o.kind) ? 1e-2 : 0.1;
        if constexpr (std::is_same_v<M, MlpModel>) return adaptive(o.kind) ? 1e-3 : 0.2;
        return adaptive(o.kind) ? 1e-3 : 0.1;
      },
      model);
  // Momentum multiplies the effective step by 1 / (1 - mu): keep the SGD default's scale.
  if (o.kind == OptimizerKind::kMomentum || o.kind == OptimizerKind::kNesterov) {
    step *= 1 - o.momentum;
  }
  if (o.kind == OptimizerKind::kAdagrad) step = 0.05;
  return step;
}

std::uint32_t default_batch(const ModelSpec& model) {
  if (std::holds_alternative<SoftmaxModel>(model)) return 16;
  if (std::holds_alternative<MlpModel>(model)) return 32;
  return 1;
}

// The measurement and simulation options.
void validate_measurement(const TrainConfig& c) {
  if (!(c.staleness_sample >= 0 && c.staleness_sample <= 1)) {
    fail("staleness-sample", "a fraction in (0, 1], or 0 to turn measurement off",
         c.staleness_sample);
  }
  if (!(c.coherence_sample >= 0 && c.coherence_sample <= 1)) {
    fail("coherence-sample", "a fraction in (0, 1], or 0 to turn measurement off",
         c.coherence_sample);
  }
  if (c.coherence_lag < 1 || c.coherence_lag > 1 << 16) {
    fail("coherence-lag", "a lag in [1, 65536] updates", c.coherence_lag);
  }
  if (c.simulate < 0 || c.simulate > 1024) {
    fail("simulate", "a count of virtual workers in [1, 1024]", c.simulate);
  }
  if (c.simulate > 0 && c.threads > 1) {
    fail("threads", "1 (or 0) with --simulate, which steps its virtual workers in one thread",
         c.threads);
  }
  if (c.global_delay && c.simulate == 0) {
    throw InputError(
        "--delay-unit: expected own without --simulate (a count of every worker's steps needs "
        "the workers on one thread), found global");
  }
  if (c.virtual_time && c.simulate == 0) {
    throw InputError(
        "--clock: expected rounds without --simulate (virtual time is a simulation of "
        "--simulate K workers), found virtual");
  }
  if (c.measure_sample_cost && !c.virtual_time) {
    throw InputError("--sample-cost: expected measured only with --clock virtual");
  }
  // At most 1000 s a sample: a virtual epoch of 2^32 samples then stays within 2^63 ns.
  if (c.sample_cost_ns < 1 || c.sample_cost_ns > std::int64_t{1000} * 1000 * 1000 * 1000) {
    fail("sample-cost", "a duration in [1ns, 1000s]", fmt::format("{}ns", c.sample_cost_ns));
  }
  for (const auto& [option, ns] : {std::pair{"read-latency", c.read_latency_ns},
                                   std::pair{"write-latency", c.write_latency_ns}}) {
    if (ns < 0 || ns > std::int64_t{1000} * 1000 * 1000 * 1000) {
      fail(option, "a duration in [0, 1000s]", fmt::format("{}ns", ns));
    }
    if (ns > 0 && !c.virtual_time) {
      throw InputError(fmt::format(
          "--{}: expected only with --simulate K --clock virtual (latency is virtual time), "
          "found {}ns",
          option, ns));
    }
  }
  if (c.write_latency_ns > 0 && c.bounded_staleness >= 0) {
    throw InputError(
        "--bounded-staleness: expected no --write-latency (the bound counts updates applied, "
        "and one in flight would hold every worker back until it lands), found both");
  }
  if (c.bounded_staleness < -1 || c.bounded_staleness > 1 << 20) {
    fail("bounded-staleness", "a bound in [0, 1048576] updates, or -1 for none",
         c.bounded_staleness);
  }
  if (c.bounded_staleness >= 0 && c.simulate > 0 && !c.virtual_time) {
    throw InputError(
        "--bounded-staleness: expected --clock virtual with --simulate (workers taking turns "
        "stay in step by construction), found --clock rounds");
  }
  if (c.bounded_staleness >= 0 && c.delay.kind != DelaySpec::Kind::kNone) {
    throw InputError(
        "--bounded-staleness: expected no --delay (a held-back update would hold every worker "
        "back at the bound), found --delay " +
        c.delay.text);
  }
}

// The minibatch schedule, the speed model, sharding and the loss curve, against each other and
// the number of workers.
void validate_schedule(const TrainConfig& c) {
  const ScheduleSpec s = c.minibatches();
  if (s.kind == ScheduleSpec::Kind::kFixed && (s.batch < 1 || s.batch > 65536)) {
    fail("schedule", "fixed:B with B a minibatch size in [1, 65536]", s.text);
  }
  if (s.max_batch < 1 || s.max_batch > detail::kMaxBatchLimit) {
    fail("max-batch", "a sample count in [1, 1048576]", s.max_batch);
  }
  if (c.simulate > 0 && !c.virtual_time && s.kind == ScheduleSpec::Kind::kTime) {
    fail("schedule",
         "fixed:B with --simulate in rounds (time windows need a clock: --clock virtual)",
         fmt::format("'{}'", s.text));
  }
  if (c.simulate > 0 && !c.virtual_time && c.speed.active()) {
    throw InputError(
        "--simulate: expected no speed model (--worker-speed, --straggler, --pause) in rounds; "
        "give --clock virtual to simulate them in virtual time");
  }
  // Hundreds of simulated workers: the speeds given are the first workers', the rest run at 1.
  const auto speeds = static_cast<int>(c.speed.speeds.size());
  if (c.virtual_time && speeds > c.workers()) {
    fail("worker-speed", fmt::format("at most {} speeds, one per virtual worker", c.workers()),
         speeds);
  }
  if (!c.virtual_time && speeds > 0 && speeds != c.workers()) {
    fail("worker-speed", fmt::format("{} speeds, one per worker", c.workers()), speeds);
  }
  if (c.simulate > 0 && !c.virtual_time && c.dynamic_sharding) {
    throw InputError(
        "--sharding: expected static with --simulate in rounds (workers taking turns share "
        "alike; --clock virtual lets faster workers claim more), found dynamic");
  }
  if (c.evals_per_epoch < 1 || c.evals_per_epoch > 1000) {
    fail("evals-per-epoch", "a count in [1, 1000]", c.evals_per_epoch);
  }
}

// --weights bf16: only the plain loop and single steps train bf16 weights; replicas, delays,
// minibatches, simulation and the striped, locked and atomic policies run on float weights.
void validate_bf16(const TrainConfig& c) {
  if (c.weights != WeightPrecision::kBf16) return;
  if (!is_linear(c.model)) fail("weights", "f32 for softmax, mlp and mf", "bf16");
  if (c.policy != Policy::kRacy && c.policy != Policy::kSerial) {
    fail("weights",
         fmt::format("f32 with --policy {} (bf16 trains with racy or serial)", to_string(c.policy)),
         "bf16");
  }
  if (!replicas_apply(c) || c.virtual_time) {
    throw InputError(
        "--weights: expected f32 with --delay, --simulate, --bounded-staleness, minibatches "
        "(--batch, --schedule) or a speed model, which run loops of their own; found bf16");
  }
  if (c.replicate > 0) {
    fail("replicate", "off or auto with --weights bf16 (replicas hold float weights)", c.replicate);
  }
  if (c.hot_features > 0) {
    fail("hot-features", "0 with --weights bf16 (replicas hold float weights)", c.hot_features);
  }
}

// What only some models take: the optimiser (linear models run SGD, one step per epoch),
// replicas (linear models), and the model's shape.
void validate_model(const TrainConfig& c) {
  if (is_linear(c.model)) {
    const OptimizerConfig& o = c.optimizer;
    if (o.kind != OptimizerKind::kSgd) {
      fail("optimizer", "sgd for the linear models (logistic, hinge, squared)", to_string(o.kind));
    }
    if (o.clip_norm != 0) fail("clip-norm", "0 for the linear models", o.clip_norm);
  }
  const int r = c.replicate;
  if (r != TrainConfig::kReplicateAuto && (r < 0 || r > (1 << 24))) {
    fail("replicate", "off, auto, or samples between merges in [1, 16777216]", r);
  }
  if (r > 0 && std::holds_alternative<FactorisationModel>(c.model)) {
    fail("replicate", "off or auto for mf (its updates touch a few rows)", r);
  }
  if (c.hot_features > TrainConfig::kMaxHotFeatures) {
    fail("hot-features",
         fmt::format("a count of features in [0, {}]", TrainConfig::kMaxHotFeatures),
         c.hot_features);
  }
  if (c.average.value_or(false) && !is_linear(c.model)) {
    fail("average", "off for softmax, mlp and mf (it averages the linear models)", "epochs");
  }
  if (c.data_precision != DataPrecision::kF32) {
    const char* precision = c.data_precision == DataPrecision::kF16 ? "f16" : "u8";
    if (!is_linear(c.model)) fail("data-precision", "f32 for softmax, mlp and mf", precision);
    if (c.hot_features > 0) {
      fail("data-precision", "f32 with --hot-features (the hot layout keeps float values)",
           precision);
    }
  }
  if (c.hot_features > 0 && !is_linear(c.model)) {
    fail("hot-features", "0 for softmax, mlp and mf", c.hot_features);
  }
  validate_bf16(c);
  if (c.hot_features > 0 && r == 0) {
    fail("hot-features", "0 with --replicate off (it chooses what the replicas hold)",
         c.hot_features);
  }
  // Where `auto` turns the replicas off whatever the data, hot features would go unused.
  constexpr int kAutoMaxWorkers =
      TrainConfig::kAutoStalenessBudget / TrainConfig::kAutoMinMergeEvery + 1;
  if (c.hot_features > 0 && r == TrainConfig::kReplicateAuto && is_linear(c.model) &&
      (!replicas_apply(c) || c.workers() < 2 || c.workers() > kAutoMaxWorkers)) {
    fail(
        "hot-features",
        fmt::format("0 where --replicate auto turns the replicas off (with one worker or more than "
                    "{}, minibatches, --delay, --simulate, --bounded-staleness or a speed model; "
                    "--replicate M keeps them)",
                    kAutoMaxWorkers),
        c.hot_features);
  }
  if (r > 0 && !replicas_apply(c)) {
    const char* loops =
        is_linear(c.model) ? "with --delay, --simulate, --bounded-staleness, minibatches (--batch, "
                             "--schedule) or a speed model"
                           : "for softmax and mlp with --delay, --simulate, --bounded-staleness, "
                             "time windows or a speed model";
    throw InputError(fmt::format(
        "--replicate: expected off or auto {}, which run loops of their own; found {}", loops, r));
  }
  if (const auto* mlp = std::get_if<MlpModel>(&c.model)) {
    if (mlp->hidden.empty()) fail("hidden", "at least one hidden layer width", "none");
    for (const auto h : mlp->hidden) {
      if (h < 1 || h > 65536) fail("hidden", "layer widths in [1, 65536]", h);
    }
  }
  if (const auto* mf = std::get_if<FactorisationModel>(&c.model)) {
    if (mf->rank < 1 || mf->rank > 4096) fail("rank", "a rank in [1, 4096]", mf->rank);
    // All-zero factors are a fixed point of the factorisation's gradient: nothing would train.
    if (!(mf->init_scale > 0) || !std::isfinite(mf->init_scale)) {
      fail("init-scale", "a finite deviation > 0", mf->init_scale);
    }
  }
}

}  // namespace

std::string_view model_name(const ModelSpec& model) {
  return std::visit(
      []<class M>(const M& m) -> std::string_view {
        if constexpr (std::is_same_v<M, LinearModel>) return to_string(m.loss);
        if constexpr (std::is_same_v<M, SoftmaxModel>) return "softmax";
        if constexpr (std::is_same_v<M, MlpModel>) return "mlp";
        return "mf";
      },
      model);
}

ModelSpec parse_model(std::string_view name) {
  if (name == "softmax") return SoftmaxModel{};
  if (name == "mlp") return MlpModel{};
  if (name == "mf") return FactorisationModel{};
  if (name == "logistic" || name == "hinge" || name == "squared") {
    return LinearModel{parse_loss(name)};
  }
  throw InputError(fmt::format(
      "--model: expected one of logistic, hinge, squared, softmax, mlp, mf; found '{}'", name));
}

void TrainConfig::validate() const {
  optimizer.validate();
  if (threads < 0 || threads > 4096) {
    fail("threads", "a count in [1, 4096] (0 = all cores)", threads);
  }
  if (policy == Policy::kSerial && threads > 1) {
    fail("threads", "1 with --policy serial (it runs one worker)", threads);
  }
  if (epochs < 1) fail("epochs", "at least 1", epochs);
  if (block_rows > (std::size_t{1} << 24)) {
    fail("order", "rows or blocks:B with B in [1, 16777216]", fmt::format("blocks:{}", block_rows));
  }
  if (l2 && (!(*l2 >= 0) || !std::isfinite(*l2))) fail("l2", "a finite strength >= 0", *l2);
  if (!(divergence_factor > 1)) fail("divergence-factor", "a factor > 1", divergence_factor);
  if (patience < 0) fail("patience", "a count of epochs >= 0 (0 = off)", patience);
  if (!(tol >= 0) || !std::isfinite(tol)) fail("tol", "a finite improvement >= 0", tol);
  if (!(validation_fraction >= 0 && validation_fraction <= 0.5)) {
    fail("validation-fraction", "a fraction in [0, 0.5] (0 = none)", validation_fraction);
  }
  validate_measurement(*this);
  validate_schedule(*this);
  validate_model(*this);
}

void TrainConfig::check_format(std::string_view format) const {
  const bool linear = is_linear(model);
  const bool softmax = std::holds_alternative<SoftmaxModel>(model);
  const bool mlp = std::holds_alternative<MlpModel>(model);
  const bool mf = std::holds_alternative<FactorisationModel>(model);
  const char* expected = format == "libsvm"
                             ? (linear || softmax ? nullptr : "a linear model or softmax")
                         : format == "idx" ? (softmax || mlp ? nullptr : "softmax or mlp")
                                           : (mf ? nullptr : "mf");
  if (expected == nullptr) {
    if (softmax && format == "libsvm" && replicate > 0) {
      fail("replicate", "off or auto for softmax on LIBSVM data (its updates touch a few rows)",
           replicate);
    }
    return;
  }
  const std::string_view name = model_name(model);
  const char* needs = mlp  ? "dense features: --format idx"
                      : mf ? "--format ratings"
                           : "--format libsvm";
  throw InputError(fmt::format("--model: expected {} for {} data ({} needs {}), found {}", expected,
                               format, name, needs, name));
}

int TrainConfig::workers() const {
  if (simulate > 0) return simulate;
  if (policy == Policy::kSerial) return 1;
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

ScheduleSpec TrainConfig::minibatches() const {
  ScheduleSpec s = schedule.value_or(ScheduleSpec{});
  if (!schedule) s.batch = default_batch(model);
  if (s.kind == ScheduleSpec::Kind::kFixed) s.text = fmt::format("fixed:{}", s.batch);
  return s;
}

double TrainConfig::l2_strength() const {
  return l2.value_or(std::holds_alternative<FactorisationModel>(model) ? kFactorisationL2 : 0.0);
}

bool TrainConfig::averages_epochs() const {
  const auto* linear = std::get_if<LinearModel>(&model);
  return average.value_or(linear != nullptr && linear->loss == LossKind::kSquared);
}

TrainConfig TrainConfig::resolved() const {
  TrainConfig c = *this;
  c.threads = simulate > 0 ? 1 : workers();  // --simulate steps its workers in one thread
  c.schedule = minibatches();
  c.l2 = l2_strength();
  c.average = averages_epochs();
  if (!c.optimizer.step) c.optimizer.step = default_step(model, optimizer);
  if (!is_linear(model)) c.replicate = 0;  // the model's run resolves it (resolved_model_replicate)
  return c;
}

int TrainConfig::resolved_model_replicate(bool dense_updates) const {
  if (is_linear(model) || !dense_updates || !replicas_apply(*this)) return 0;
  if (replicate != kReplicateAuto) return replicate;
  if (workers() < 2) return 0;
  return adaptive(optimizer.kind) ? kAutoAdaptiveMergeEvery : kAutoModelMergeEvery;
}

int TrainConfig::resolved_replicate(std::size_t dim) const {
  if (replicate == kReplicateAuto) {
    if (weights == WeightPrecision::kBf16) return 0;  // replicas hold float weights
    const int real = workers();
    const std::size_t replicated = hot_features > 0 ? std::min(dim, hot_features) : dim;
    if (!replicas_apply(*this) || real < 2 || replicated > kAutoReplicateMaxFloats) return 0;
    const int merge_every = kAutoStalenessBudget / (real - 1);
    return merge_every >= kAutoMinMergeEvery ? merge_every : 0;
  }
  return replicas_apply(*this) ? replicate : 0;
}

namespace {

// The share of the nonzeros held by the `hot` features that the most rows hold: their counts
// kept in a min-heap through one pass, which most counts of a wide model pass by at its
// smallest (selecting them from a copy of 4M counts took 60 ms, 1M CTR-like rows).
double hottest_share(std::span<const std::uint32_t> counts, std::size_t hot) {
  std::vector<std::uint32_t> heap;
  heap.reserve(std::min(hot, counts.size()));
  std::uint64_t all = 0;
  for (const std::uint32_t count : counts) {
    all += count;
    if (heap.size() < hot) {
      heap.push_back(count);
      std::ranges::push_heap(heap, std::greater<>());
    } else if (hot > 0 && count > heap.front()) {
      std::ranges::pop_heap(heap, std::greater<>());
      heap.back() = count;
      std::ranges::push_heap(heap, std::greater<>());
    }
  }
  const std::uint64_t held = std::accumulate(heap.begin(), heap.end(), std::uint64_t{0});
  return all == 0 ? 0.0 : static_cast<double>(held) / static_cast<double>(all);
}

// The hot replicas `auto` would give a model of `dim` features: their samples between merges,
// 0 where the options or the dimension decide alone.
int auto_hot_merge_every(const TrainConfig& config, std::size_t dim) {
  if (config.replicate != TrainConfig::kReplicateAuto || config.hot_features > 0 ||
      dim <= TrainConfig::kAutoReplicateMaxFloats ||
      config.data_precision != DataPrecision::kF32) {  // the hot layout keeps float values
    return 0;
  }
  TrainConfig hot = config;
  hot.hot_features = TrainConfig::kAutoHotFeatures;
  return hot.resolved_replicate(dim);
}

}  // namespace

bool replicas_count_features(const TrainConfig& config, const Dataset& data) {
  return auto_hot_merge_every(config, std::max<std::size_t>(1, data.num_features)) > 0;
}

ReplicaPlan resolved_replicas(const TrainConfig& config, const Dataset& data,
                              std::span<const std::uint32_t> counts) {
  const std::size_t dim = std::max<std::size_t>(1, data.num_features);
  const ReplicaPlan given{config.resolved_replicate(dim), config.hot_features, std::nullopt};
  const int merge_every = auto_hot_merge_every(config, dim);
  if (merge_every == 0) return given;
  std::vector<std::uint32_t> computed;
  if (counts.empty()) counts = computed = feature_counts(data);
  const double share = hottest_share(counts, TrainConfig::kAutoHotFeatures);
  if (share < TrainConfig::kAutoHotMinShare) return {given.merge_every, given.hot_features, share};
  return {merge_every, TrainConfig::kAutoHotFeatures, share};
}

}  // namespace hogwild
