#pragma once

// JSON pieces shared by the linear models' report and the other models'.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "hogwild/delay.h"
#include "hogwild/schedule.h"
#include "hogwild/staleness.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// Appends `key: value` to a JSON object whose keys all differ from `key`: a keyed insert into
/// nlohmann's ordered object looks up every key first, quadratic in the keys (the labels of 50k
/// regression targets, or 35k distinct delays, took seconds).
void append_new(nlohmann::ordered_json& object, std::string key, nlohmann::ordered_json value);
/// Summary (samples, mean, p50, p90, p99, max, histogram) with values times `scale`.
nlohmann::ordered_json histogram_json(const Histogram& h, double scale);
/// Staleness in updates, with the same in microseconds under `micros`.
nlohmann::ordered_json staleness_json(const StalenessStats& s);
/// Overall staleness plus `sample_rate` and `per_worker`.
nlohmann::ordered_json staleness_report_json(const StalenessStats& overall,
                                             const std::vector<StalenessStats>& per_worker,
                                             double rate);
/// The coherence curve: [{update, cosine, samples}].
nlohmann::ordered_json coherence_json(const std::vector<CoherencePoint>& points);
/// {spec, injected: {delay: count}, mean}.
nlohmann::ordered_json delay_json(const DelaySpec& spec,
                                  const std::vector<std::uint64_t>& injected);
/// Adds the minibatch-schedule options to a report's `config`: schedule, batch_reduce,
/// max_batch, worker_speed, straggler, pause, evals_per_epoch, sharding.
void add_schedule_config(nlohmann::ordered_json& config, const ScheduleSpec& schedule,
                         const SpeedModel& speed, int evals_per_epoch, bool dynamic_sharding);
/// `batch_size`: mean, p50, p90, p99, max, histogram and updates over all workers, and
/// `per_worker`: [{mean, p50, p99, updates, samples}].
nlohmann::ordered_json batch_size_json(const Histogram& all,
                                       const std::vector<WorkerSummary>& workers);
/// --bounded-staleness: the bound and the workers' waits for the slowest, in all and per
/// worker: {bound, waits, wait_seconds, per_worker: [{waits, wait_seconds}]}.
nlohmann::ordered_json bound_json(int bound, const std::vector<WorkerSummary>& workers);
/// The loss curve: [{seconds, updates, train_loss}], and virtual_seconds in virtual time.
nlohmann::ordered_json curve_json(const std::vector<CurvePoint>& curve);

}  // namespace hogwild::detail
