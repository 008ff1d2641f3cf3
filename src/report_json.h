#pragma once

// JSON pieces shared by the linear and the model trainers' reports.

#include <nlohmann/json.hpp>
#include <vector>

#include "hogwild/delay.h"
#include "hogwild/staleness.h"

namespace hogwild::detail {

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

}  // namespace hogwild::detail
