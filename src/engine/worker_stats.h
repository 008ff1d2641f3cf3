#pragma once

// What each worker counts and measures, and the report's sums of it.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampling.h"
#include "hogwild/staleness.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// One worker's counts and measurements over a run, kernel-independent: the report is their
/// sum (summarise_workers).
struct WorkerStats {
  std::uint64_t samples = 0;                   ///< samples processed
  std::uint64_t computed = 0;                  ///< updates computed
  std::uint64_t applied = 0;                   ///< updates applied to the shared parameters
  Histogram batch_sizes;                       ///< samples per update (minibatches, windows)
  Histogram windows_ns;                        ///< time windows' lengths
  std::vector<std::uint64_t> injected;         ///< count of each injected delay value
  StalenessStats staleness;                    ///< measured staleness
  std::size_t coherence_windows = 0;           ///< the run's coherence windows, at most
  std::vector<double> coherence_sum;           ///< per coherence window: sum of cosines
  std::vector<std::uint64_t> coherence_count;  ///< per coherence window: cosines summed

  /// Sized for a run of `epochs` epochs with delays of at most `max_delay`. The coherence
  /// windows grow as they are measured: a run given `--epochs 1000000` to train until
  /// interrupted would otherwise hold 160 MB of them per worker from the start.
  void size_for(int epochs, std::uint32_t max_delay) {
    injected.assign(std::size_t{max_delay} + 1, 0);
    coherence_windows = static_cast<std::size_t>(epochs) * kCoherenceWindowsPerEpoch;
    coherence_sum.clear();
    coherence_count.clear();
  }
};

/// Adds what the workers measured to a report: update counts, staleness (all workers and per
/// worker), per-worker summaries, batch sizes and time windows, the injected delay counts
/// (trailing zero counts dropped, at least one bin) and the coherence curve
/// (kCoherenceWindowsPerEpoch windows per epoch of `rows` samples). A worker that recorded no
/// minibatch made single-sample updates: its batch sizes read 1 for each update.
template <class Report>
void summarise_workers(std::span<const WorkerStats* const> workers, std::size_t rows,
                       Report& report) {
  report.injected_delays.assign(1, 0);
  std::vector<double> coherence_sum;
  std::vector<std::uint64_t> coherence_count;
  for (const WorkerStats* s : workers) {
    report.updates_computed += s->computed;
    report.updates_applied += s->applied;
    report.staleness.updates.merge(s->staleness.updates);
    report.staleness.nanos.merge(s->staleness.nanos);
    report.staleness_per_worker.push_back(s->staleness);
    WorkerSummary summary;
    summary.updates = s->applied;
    summary.samples = s->samples;
    summary.batch_sizes = s->batch_sizes;
    if (summary.batch_sizes.count() == 0 && s->applied > 0) {
      summary.batch_sizes.record(1, s->applied);
    }
    summary.windows_ns = s->windows_ns;
    report.batch_sizes.merge(summary.batch_sizes);
    report.windows_ns.merge(s->windows_ns);
    report.workers.push_back(std::move(summary));
    if (report.injected_delays.size() < s->injected.size()) {
      report.injected_delays.resize(s->injected.size(), 0);
    }
    for (std::size_t d = 0; d < s->injected.size(); ++d) {
      report.injected_delays[d] += s->injected[d];
    }
    coherence_sum.resize(std::max(coherence_sum.size(), s->coherence_sum.size()), 0.0);
    coherence_count.resize(coherence_sum.size(), 0);
    for (std::size_t w = 0; w < s->coherence_sum.size(); ++w) {
      coherence_sum[w] += s->coherence_sum[w];
      coherence_count[w] += s->coherence_count[w];
    }
  }
  while (report.injected_delays.size() > 1 && report.injected_delays.back() == 0) {
    report.injected_delays.pop_back();
  }
  for (std::size_t w = 0; w < coherence_sum.size(); ++w) {
    if (coherence_count[w] == 0) continue;
    const std::size_t epoch = w / kCoherenceWindowsPerEpoch;
    const std::size_t part = w % kCoherenceWindowsPerEpoch + 1;
    report.coherence.push_back(CoherencePoint{
        epoch * rows + part * rows / kCoherenceWindowsPerEpoch,
        coherence_sum[w] / static_cast<double>(coherence_count[w]), coherence_count[w]});
  }
}

}  // namespace hogwild::detail
