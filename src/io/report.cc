#include "hogwild/report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "io/enum_names.h"
#include "io/report_json.h"

namespace hogwild {
namespace {

using nlohmann::ordered_json;

// JSON has no NaN/Inf; a non-finite value is written as null rather than as invalid JSON.
ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

// Why the run ended, as the report says it.
constexpr detail::EnumNames<StopReason, 5> kStopReasons{{{"epochs", StopReason::kEpochs},
                                                         {"converged", StopReason::kConverged},
                                                         {"plateau", StopReason::kPlateau},
                                                         {"interrupted", StopReason::kInterrupted},
                                                         {"diverged", StopReason::kDiverged}}};

// How --step auto chose the step; a diverged step's loss is null.
ordered_json calibration_json(const StepCalibration& c) {
  ordered_json losses = ordered_json::array();
  for (const double loss : c.losses) losses.push_back(number(loss));
  return {
      {"sample_rows", c.sample_rows},
      {"steps", c.steps},
      {"losses", losses},
      {"start_loss", number(c.start_loss)},
      {"best", c.best},
      {"pick", c.pick},
      {"chosen", c.chosen},
      {"inconclusive", c.inconclusive},
      {"seconds", c.seconds},
  };
}

// Virtual time, bounded staleness and global delay steps, only when on: reports and checkpoints of
// runs without them read as before.
void add_simulation_config(ordered_json& json, const TrainConfig& c) {
  if (c.virtual_time) {
    json["clock"] = "virtual";
    json["sample_cost"] =
        fmt::format("{}ns{}", c.sample_cost_ns, c.measure_sample_cost ? " (measured)" : "");
    if (c.read_latency_ns > 0) json["read_latency"] = fmt::format("{}ns", c.read_latency_ns);
    if (c.write_latency_ns > 0) json["write_latency"] = fmt::format("{}ns", c.write_latency_ns);
  }
  if (c.bounded_staleness >= 0) json["bounded_staleness"] = c.bounded_staleness;
  if (c.global_delay) json["delay_unit"] = "global";
}

// The plateau schedule's settings.
void add_plateau_config(ordered_json& json, const TrainConfig& c) {
  json["plateau_patience"] = c.optimizer.plateau_patience;
  json["plateau_factor"] = c.optimizer.plateau_factor;
  json["plateau_threshold"] = c.optimizer.plateau_threshold;
}

// The config of linear runs.
ordered_json linear_config_json(const TrainConfig& c) {
  ordered_json json{{"model", model_name(c.model)},
                    {"policy", to_string(c.policy)},
                    {"threads", c.threads},
                    {"epochs", c.epochs},
                    {"step", *c.optimizer.step},
                    {"decay", c.optimizer.decay},
                    {"l2", *c.l2},
                    {"seed", c.seed},
                    {"divergence_factor", c.divergence_factor},
                    {"delay", c.delay.text},
                    {"staleness_sample", c.staleness_sample},
                    {"coherence_sample", c.coherence_sample},
                    {"coherence_lag", c.coherence_lag},
                    {"simulate", c.simulate}};
  detail::add_schedule_config(json, *c.schedule, c.speed, c.evals_per_epoch, c.dynamic_sharding);
  add_simulation_config(json, c);
  // Only when on: a checkpoint written before the options existed still resumes.
  if (c.optimizer.auto_step) json["step_auto"] = true;
  // Only when not the epoch decay, for the same reason.
  if (c.optimizer.schedule != Schedule::kEpoch) {
    json["step_schedule"] = to_string(c.optimizer.schedule);
    if (c.optimizer.schedule == Schedule::kPlateau) {
      add_plateau_config(json, c);
    } else if (c.optimizer.schedule != Schedule::kConstant) {
      json["schedule_scale"] = c.optimizer.schedule_scale;
    }
  }
  if (c.patience > 0) {
    json["patience"] = c.patience;
    json["tol"] = c.tol;
  }
  if (c.validation_fraction > 0) json["validation_fraction"] = c.validation_fraction;
  if (c.train_loss_sample > 0) json["train_loss_sample"] = c.train_loss_sample;
  // Only when on, as above: absent is the last parameters.
  if (*c.average) json["average"] = "epochs";
  // Only when not f32, as above.
  if (c.data_precision != DataPrecision::kF32) {
    json["data_precision"] = c.data_precision == DataPrecision::kF16 ? "f16" : "u8";
  }
  // Only when off, as above.
  if (!c.frequency_order) json["feature_order"] = "given";
  // Only when not f32, as above.
  if (c.weights == WeightPrecision::kBf16) json["weights"] = "bf16";
  json["order"] = c.block_rows > 0 ? fmt::format("blocks:{}", c.block_rows) : "rows";
  // Samples between replica merges as the run resolved it; 0 = no replicas.
  json["replicate"] = c.replicate;
  // Features the replicas hold, when only the hot ones (--hot-features); absent for all.
  if (c.replicate > 0 && c.hot_features > 0) json["hot_features"] = c.hot_features;
  return json;
}

// Shortest form that reads back: "1", "-1", "0.5".
std::string fmt_label(float label) { return fmt::format("{}", label); }

ordered_json stats_json(const DatasetStats& s) {
  // A regression target has a label per example. The keys differ: fmt writes each float's
  // shortest round-trip form.
  ordered_json labels = ordered_json::object();
  for (const auto& [label, count] : s.label_counts) {
    detail::append_new(labels, fmt_label(label), count);
  }
  return ordered_json{{"rows", s.rows},
                      {"features", s.features},
                      {"nnz", s.nnz},
                      {"mean_nnz_per_row", s.mean_nnz_per_row},
                      {"max_nnz_per_row", s.max_nnz_per_row},
                      {"labels", labels},
                      {"zero_based", s.zero_based}};
}

// The config of softmax, mlp and mf runs.
ordered_json model_config_json(const TrainConfig& c) {
  const auto& o = c.optimizer;
  ordered_json j{{"model", model_name(c.model)}};
  if (const auto* mlp = std::get_if<MlpModel>(&c.model)) j["hidden"] = mlp->hidden;
  if (const auto* mf = std::get_if<FactorisationModel>(&c.model)) {
    j["rank"] = mf->rank;
    j["init_scale"] = mf->init_scale;
  }
  j["optimizer"] = to_string(o.kind);
  j["step"] = *o.step;
  j["schedule"] = to_string(o.schedule);
  if (o.schedule == Schedule::kEpoch) j["decay"] = o.decay;
  if (o.schedule == Schedule::kInverse || o.schedule == Schedule::kInverseSqrt) {
    j["schedule_scale"] = o.schedule_scale;
  }
  if (o.schedule == Schedule::kPlateau) add_plateau_config(j, c);
  switch (o.kind) {
    case OptimizerKind::kMomentum:
    case OptimizerKind::kNesterov:
      j["momentum"] = o.momentum;
      break;
    case OptimizerKind::kRmsprop:
      j["rho"] = o.rho;
      j["epsilon"] = o.epsilon;
      break;
    case OptimizerKind::kAdagrad:
      j["epsilon"] = o.epsilon;
      break;
    case OptimizerKind::kAdam:
      j["beta1"] = o.beta1;
      j["beta2"] = o.beta2;
      j["epsilon"] = o.epsilon;
      break;
    case OptimizerKind::kSgd:
      break;
  }
  j["clip_norm"] = o.clip_norm;
  j["l2"] = *c.l2;
  if (c.schedule->kind == ScheduleSpec::Kind::kFixed) j["batch"] = c.schedule->batch;
  j["policy"] = to_string(c.policy);
  j["threads"] = c.threads;
  j["epochs"] = c.epochs;
  j["seed"] = c.seed;
  j["divergence_factor"] = c.divergence_factor;
  j["delay"] = c.delay.text;
  j["staleness_sample"] = c.staleness_sample;
  j["coherence_sample"] = c.coherence_sample;
  j["coherence_lag"] = c.coherence_lag;
  j["simulate"] = c.simulate;
  detail::add_schedule_config(j, *c.schedule, c.speed, c.evals_per_epoch, c.dynamic_sharding);
  add_simulation_config(j, c);
  // Only when set: a checkpoint written before the option existed still resumes a rows run.
  if (c.block_rows > 0) j["order"] = fmt::format("blocks:{}", c.block_rows);
  if (c.optimizer.auto_step) j["step_auto"] = true;
  if (c.patience > 0) {
    j["patience"] = c.patience;
    j["tol"] = c.tol;
  }
  if (c.validation_fraction > 0) j["validation_fraction"] = c.validation_fraction;
  if (c.train_loss_sample > 0) j["train_loss_sample"] = c.train_loss_sample;
  // Samples between replica merges as the run resolved it; only when it replicates.
  if (c.replicate > 0) j["replicate"] = c.replicate;
  return j;
}

// The held-out evaluation of --validation-fraction, when there is one.
void add_validation(ordered_json& json, const EpochRecord& e) {
  if (!e.validation) return;
  json["validation_loss"] = number(e.validation->loss);
  if (e.validation->accuracy) json["validation_accuracy"] = *e.validation->accuracy;
  if (e.validation->rmse) json["validation_rmse"] = number(*e.validation->rmse);
}

// An epoch of a softmax, mlp or mf run.
ordered_json model_epoch_json(const EpochRecord& e) {
  ordered_json j{{"epoch", e.epoch},
                 {"seconds", e.seconds},
                 {"elapsed", e.elapsed},
                 {"step", e.step},
                 {"train_loss", number(e.train.loss)}};
  if (e.virtual_seconds) j["virtual_seconds"] = *e.virtual_seconds;
  if (e.test) j["test_loss"] = number(e.test->loss);
  if (e.train.accuracy) j["train_accuracy"] = *e.train.accuracy;
  if (e.test && e.test->accuracy) j["test_accuracy"] = *e.test->accuracy;
  if (e.train.rmse) j["train_rmse"] = number(*e.train.rmse);
  if (e.test && e.test->rmse) j["test_rmse"] = number(*e.test->rmse);
  add_validation(j, e);
  return j;
}

// An epoch's evaluations in a linear report: losses, the training objective and, for
// classifiers, accuracies.
void add_linear_evaluations(ordered_json& json, const EpochRecord& e, bool classifier) {
  json["train_loss"] = number(e.train.loss);
  json["train_objective"] = number(e.train.objective.value_or(0.0));
  if (classifier) json["train_accuracy"] = e.train.accuracy.value_or(0.0);
  if (e.test) {
    json["test_loss"] = number(e.test->loss);
    if (classifier) json["test_accuracy"] = e.test->accuracy.value_or(0.0);
  }
  add_validation(json, e);
}

}  // namespace

namespace detail {

void append_new(ordered_json& object, std::string key, ordered_json value) {
  static_cast<ordered_json::object_t::Container&>(object.get_ref<ordered_json::object_t&>())
      .emplace_back(std::move(key), std::move(value));
}

// Summary of a histogram; `scale` converts recorded units to reported ones.
ordered_json histogram_json(const Histogram& h, double scale) {
  ordered_json buckets = ordered_json::object();
  for (const auto& [lower, count] : h.buckets()) {
    append_new(buckets, fmt::format("{}", static_cast<double>(lower) * scale), count);
  }
  return ordered_json{{"samples", h.count()},
                      {"mean", h.mean() * scale},
                      {"p50", static_cast<double>(h.quantile(0.5)) * scale},
                      {"p90", static_cast<double>(h.quantile(0.9)) * scale},
                      {"p99", static_cast<double>(h.quantile(0.99)) * scale},
                      {"max", static_cast<double>(h.max()) * scale},
                      {"histogram", std::move(buckets)}};
}

ordered_json staleness_json(const StalenessStats& s) {
  ordered_json json = histogram_json(s.updates, 1.0);
  json["micros"] = histogram_json(s.nanos, 1e-3);
  return json;
}

ordered_json staleness_report_json(const StalenessStats& overall,
                                   const std::vector<StalenessStats>& per_worker, double rate) {
  ordered_json staleness = staleness_json(overall);
  staleness["sample_rate"] = rate;
  staleness["per_worker"] = ordered_json::array();
  for (const auto& w : per_worker) staleness["per_worker"].push_back(staleness_json(w));
  return staleness;
}

ordered_json coherence_json(const std::vector<CoherencePoint>& points) {
  ordered_json coherence = ordered_json::array();
  for (const auto& p : points) {
    coherence.push_back({{"update", p.update}, {"cosine", p.cosine}, {"samples", p.samples}});
  }
  return coherence;
}

ordered_json delay_json(const DelaySpec& spec, const std::vector<std::uint64_t>& injected_counts) {
  ordered_json injected = ordered_json::object();
  double total = 0, weighted = 0;
  for (std::size_t d = 0; d < injected_counts.size(); ++d) {
    if (injected_counts[d] == 0) continue;
    append_new(injected, std::to_string(d), injected_counts[d]);
    total += static_cast<double>(injected_counts[d]);
    weighted += static_cast<double>(d) * static_cast<double>(injected_counts[d]);
  }
  return {{"spec", spec.text},
          {"injected", std::move(injected)},
          {"mean", total > 0 ? weighted / total : 0.0}};
}

void add_schedule_config(ordered_json& config, const ScheduleSpec& schedule,
                         const SpeedModel& speed, int evals_per_epoch, bool dynamic_sharding) {
  config["schedule"] = schedule.text;
  config["batch_reduce"] = schedule.mean ? "mean" : "sum";
  config["max_batch"] = schedule.max_batch;
  config["worker_speed"] = speed.speeds;
  config["straggler"] = speed.straggler_text;
  config["pause"] = speed.pause_text;
  config["evals_per_epoch"] = evals_per_epoch;
  config["sharding"] = dynamic_sharding ? "dynamic" : "static";
}

ordered_json batch_size_json(const Histogram& all, const std::vector<WorkerSummary>& workers) {
  ordered_json batch = histogram_json(all, 1.0);
  batch.erase("samples");
  batch["updates"] = all.count();
  batch["per_worker"] = ordered_json::array();
  for (const auto& w : workers) {
    batch["per_worker"].push_back({{"mean", w.batch_sizes.mean()},
                                   {"p50", w.batch_sizes.quantile(0.5)},
                                   {"p99", w.batch_sizes.quantile(0.99)},
                                   {"updates", w.updates},
                                   {"samples", w.samples}});
  }
  return batch;
}

ordered_json bound_json(int bound, const std::vector<WorkerSummary>& workers) {
  std::uint64_t waits = 0;
  double seconds = 0;
  ordered_json per_worker = ordered_json::array();
  for (const auto& w : workers) {
    waits += w.bound_waits;
    seconds += w.bound_wait_seconds;
    per_worker.push_back({{"waits", w.bound_waits}, {"wait_seconds", w.bound_wait_seconds}});
  }
  return {{"bound", bound},
          {"waits", waits},
          {"wait_seconds", seconds},
          {"per_worker", std::move(per_worker)}};
}

ordered_json curve_json(const std::vector<CurvePoint>& curve) {
  ordered_json points = ordered_json::array();
  for (const auto& p : curve) {
    points.push_back(
        {{"seconds", p.seconds}, {"updates", p.updates}, {"train_loss", number(p.train_loss)}});
    if (p.virtual_seconds) points.back()["virtual_seconds"] = *p.virtual_seconds;
  }
  return points;
}

}  // namespace detail

using detail::histogram_json;

namespace {

// Trained across processes: how they shared the parameters, and the staleness across them in
// the keys of the staleness across threads.
void add_exchange(ordered_json& json, const Report& report) {
  if (!report.exchange) return;
  const ExchangeSummary& x = *report.exchange;
  json["staleness"]["across_processes"] = detail::staleness_json(x.staleness);
  json["processes"] = {{"ranks", x.ranks},
                       {"sync", x.sync},
                       {"merge_every", x.merge_every},
                       {"merges", x.merges},
                       {"merges_per_rank", x.merges_per_rank},
                       {"merge_seconds", x.merge_seconds},
                       {"bytes", x.bytes}};
  if (x.bound >= 0) {
    json["processes"]["bound"] = x.bound;
    json["processes"]["bound_waits"] = x.bound_waits;
    json["processes"]["bound_wait_seconds"] = x.bound_wait_seconds;
  }
}

// The report of a linear run.
ordered_json linear_report_json(const Report& report) {
  const bool classifier = is_classifier(std::get<LinearModel>(report.config.model).loss);
  ordered_json epochs = ordered_json::array();
  for (const auto& e : report.epochs) {
    ordered_json record{
        {"epoch", e.epoch}, {"seconds", e.seconds}, {"elapsed", e.elapsed}, {"step", e.step}};
    if (e.virtual_seconds) record["virtual_seconds"] = *e.virtual_seconds;
    add_linear_evaluations(record, e, classifier);
    epochs.push_back(std::move(record));
  }
  ordered_json json{{"config", linear_config_json(report.config)},
                    {"dataset", stats_json(report.dataset.value_or(DatasetStats{}))}};
  if (report.test_dataset) json["test_dataset"] = stats_json(*report.test_dataset);
  if (report.training_rows) {
    json["training_rows"] = {{"index_bits", report.training_rows->index_bits},
                             {"values", report.training_rows->values},
                             {"bytes_per_nonzero", report.training_rows->bytes_per_nonzero}};
    // Only when renumbered, so the reports of narrower models keep their bytes.
    if (report.training_rows->renumbered) json["training_rows"]["renumbered"] = true;
  }
  // Only with some, so the reports of runs without keep their bytes.
  if (report.mean_merged_features > 0) json["mean_merged_features"] = report.mean_merged_features;
  if (report.hot_share) json["hot_share"] = *report.hot_share;
  if (!report.labels.empty()) {
    json["label_values"] = {{"negative", report.labels[0]}, {"positive", report.labels[1]}};
  }
  json["epochs"] = std::move(epochs);
  json["updates"] = {{"computed", report.updates_computed}, {"applied", report.updates_applied}};
  json["staleness"] = detail::staleness_report_json(report.staleness, report.staleness_per_worker,
                                                    report.config.staleness_sample);
  add_exchange(json, report);
  json["coherence"] = detail::coherence_json(report.coherence);
  json["batch_size"] = detail::batch_size_json(report.batch_sizes, report.workers);
  if (report.config.bounded_staleness >= 0)
    json["bounded_staleness"] = detail::bound_json(report.config.bounded_staleness, report.workers);
  if (report.windows_ns.count() > 0)
    json["window_micros"] = histogram_json(report.windows_ns, 1e-3);
  json["curve"] = detail::curve_json(report.curve);
  json["delay"] = detail::delay_json(report.config.delay, report.injected_delays);
  json["samples"] = report.samples;
  json["train_seconds"] = report.train_seconds;
  json["samples_per_second"] = report.samples_per_second;
  ordered_json final_values = ordered_json::object();
  if (!report.epochs.empty()) {
    const auto& last = report.epochs.back();
    final_values["epoch"] = last.epoch;
    if (last.virtual_seconds) final_values["virtual_seconds"] = *last.virtual_seconds;
    add_linear_evaluations(final_values, last, classifier);
  }
  json["final"] = std::move(final_values);
  json["interrupted"] = report.interrupted;
  json["stopped"] = detail::enum_name(kStopReasons, report.stopped);
  if (report.step_calibration)
    json["step_calibration"] = calibration_json(*report.step_calibration);
  json["resumed_from"] = report.resumed_from;
  return json;
}
// The report of a softmax, mlp or mf run.
ordered_json model_report_json(const Report& report) {
  const auto& s = report.data;
  ordered_json dataset{{"format", s.format}, {"rows", s.rows}};
  if (s.format == "ratings") {
    dataset["users"] = s.users;
    dataset["items"] = s.items;
  } else {
    dataset["features"] = s.features;
    dataset["classes"] = s.classes;
  }
  if (s.format == "libsvm") dataset["zero_based"] = s.zero_based;
  dataset["test_rows"] = s.test_rows;
  dataset["parameters"] = s.parameters;
  ordered_json json{{"config", model_config_json(report.config)}, {"dataset", dataset}};
  if (!report.labels.empty()) json["classes"] = report.labels;
  ordered_json epochs = ordered_json::array();
  for (const auto& e : report.epochs) epochs.push_back(model_epoch_json(e));
  json["epochs"] = std::move(epochs);
  json["updates"] = {{"computed", report.updates_computed}, {"applied", report.updates_applied}};
  json["staleness"] = detail::staleness_report_json(report.staleness, report.staleness_per_worker,
                                                    report.config.staleness_sample);
  add_exchange(json, report);
  json["coherence"] = detail::coherence_json(report.coherence);
  json["delay"] = detail::delay_json(report.config.delay, report.injected_delays);
  json["batch_size"] = detail::batch_size_json(report.batch_sizes, report.workers);
  if (report.config.bounded_staleness >= 0)
    json["bounded_staleness"] = detail::bound_json(report.config.bounded_staleness, report.workers);
  if (report.windows_ns.count() > 0)
    json["window_micros"] = detail::histogram_json(report.windows_ns, 1e-3);
  json["curve"] = detail::curve_json(report.curve);
  json["samples"] = report.samples;
  json["train_seconds"] = report.train_seconds;
  json["samples_per_second"] = report.samples_per_second;
  json["final"] =
      report.epochs.empty() ? ordered_json::object() : model_epoch_json(report.epochs.back());
  json["interrupted"] = report.interrupted;
  json["stopped"] = detail::enum_name(kStopReasons, report.stopped);
  if (report.step_calibration)
    json["step_calibration"] = calibration_json(*report.step_calibration);
  json["resumed_from"] = report.resumed_from;
  return json;
}

}  // namespace

std::string config_to_json(const TrainConfig& config, int indent) {
  const TrainConfig c = config.resolved();
  return (is_linear(c.model) ? linear_config_json(c) : model_config_json(c)).dump(indent);
}

std::string to_json(const Report& report, int indent) {
  return (is_linear(report.config.model) ? linear_report_json(report) : model_report_json(report))
      .dump(indent);
}

}  // namespace hogwild
