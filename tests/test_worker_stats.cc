// Measurement: the staleness and coherence probes, the per-worker record and the report's sums of
// it.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/coherence_probe.h"
#include "engine/sampling.h"
#include "engine/staleness_probe.h"
#include "engine/worker_stats.h"
#include "hogwild/detail/random.h"
#include "hogwild/trainer.h"

using hogwild::detail::kCoherenceWindowsPerEpoch;
using hogwild::detail::WorkerStats;

TEST_CASE("summarise_workers adds the workers' counts, delays, staleness and coherence") {
  WorkerStats a;
  WorkerStats b;
  a.size_for(2, 3);
  b.size_for(2, 0);
  CHECK(a.injected.size() == 4);
  CHECK(a.coherence_windows == 2 * kCoherenceWindowsPerEpoch);
  CHECK(a.coherence_sum.empty());  // grown as windows are measured
  a.samples = 100;
  a.computed = a.applied = 10;
  for (int k = 0; k < 10; ++k) a.batch_sizes.record(10);
  a.injected = {3, 0, 2, 0};
  a.staleness.updates.record(5);
  hogwild::detail::CoherenceProbe::add(a, 1, 0.2);
  hogwild::detail::CoherenceProbe::add(a, 1, 0.3);
  hogwild::detail::CoherenceProbe::add(a, 2 * kCoherenceWindowsPerEpoch, 1.0);  // beyond the run
  CHECK(a.coherence_sum.size() == 2);
  b.samples = 40;
  b.computed = 40;
  b.applied = 39;  // single-sample updates: no batch sizes recorded
  b.injected = {1};
  b.staleness.updates.record(1);
  b.staleness.updates.record(3);
  hogwild::detail::CoherenceProbe::add(b, 1, 0.25);

  hogwild::Report report;
  const std::vector<const WorkerStats*> workers = {&a, &b};
  hogwild::detail::summarise_workers<hogwild::Report>(workers, 1000, report);
  CHECK(report.updates_computed == 50);
  CHECK(report.updates_applied == 49);
  CHECK(report.injected_delays == std::vector<std::uint64_t>{4, 0, 2});  // trailing zero dropped
  CHECK(report.staleness.updates.count() == 3);
  CHECK(report.staleness.updates.mean() == doctest::Approx(3.0));
  REQUIRE(report.workers.size() == 2);
  CHECK(report.workers[1].batch_sizes.count() == 39);  // read as 39 updates of one sample
  CHECK(report.workers[1].batch_sizes.mean() == doctest::Approx(1.0));
  CHECK(report.batch_sizes.count() == 49);
  REQUIRE(report.coherence.size() == 1);
  CHECK(report.coherence[0].update == 2 * 1000 / kCoherenceWindowsPerEpoch);  // end of window 1
  CHECK(report.coherence[0].cosine == doctest::Approx(0.75 / 3));
  CHECK(report.coherence[0].samples == 3);
}

TEST_CASE("the staleness probe counts the updates others applied between a read and its write") {
  std::vector<hogwild::detail::AppliedCounter> counters(3);
  hogwild::detail::StalenessProbe probe(1.0, 7, counters, 1);
  CHECK(probe.on());
  CHECK(probe.publishes());
  CHECK(probe.tick());  // rate 1: every update is measured
  counters[0].value = 4;
  counters[2].value = 6;
  const auto at_read = probe.read();
  CHECK(at_read.others == 10);
  counters[0].value = 9;  // 5 more by worker 0, 2 more by worker 2, 100 by this one (not others)
  counters[2].value = 8;
  probe.publish(100);
  CHECK(counters[1].value == 100);
  hogwild::StalenessStats stats;
  const auto at_write = probe.record(at_read, stats, 3);
  CHECK(at_write.others == 17);
  CHECK(at_write.ns >= at_read.ns);
  CHECK(stats.updates.count() == 3);
  CHECK(stats.updates.max() == 7);
  CHECK(stats.nanos.count() == 3);

  std::vector<hogwild::detail::AppliedCounter> alone(1);
  hogwild::detail::StalenessProbe single(0.5, 7, alone, 0);
  CHECK_FALSE(single.publishes());  // nobody else reads its count
  single.publish(5);
  CHECK(alone[0].value == 0);
  hogwild::detail::StalenessProbe off(0.0, 7, counters, 0);
  CHECK_FALSE(off.on());
  CHECK_FALSE(off.tick());
}

TEST_CASE("the coherence probe keeps a gradient and compares it lag updates later") {
  using Step = hogwild::detail::CoherenceProbe::Step;
  hogwild::detail::CoherenceProbe probe(1.0, 3, 2);  // every gradient sampled, lag 2
  CHECK(probe.at(1) == Step::kSave);
  CHECK(probe.quiet_after(1) == 1);  // update 2 is quiet, update 3 compares
  CHECK(probe.at(2) == Step::kNone);
  CHECK(probe.at(3) == Step::kCompare);
  CHECK(probe.at(4) == Step::kSave);  // the clock runs again once the comparison is done

  // At a rate of 1/4, skipping the quiet updates picks what stepping one by one picks.
  hogwild::detail::CoherenceProbe stepped(0.25, 9, 3);
  hogwild::detail::CoherenceProbe skipping(0.25, 9, 3);
  std::vector<std::uint64_t> by_step, by_skip;
  for (std::uint64_t u = 1; u <= 2000; ++u) {
    if (stepped.at(u) != Step::kNone) by_step.push_back(u);
  }
  for (std::uint64_t u = 1; u <= 2000;) {
    const std::uint64_t quiet = std::min<std::uint64_t>(skipping.quiet_after(u - 1), 2001 - u);
    skipping.skip(quiet);
    u += quiet;
    if (u > 2000) break;
    if (skipping.at(u) != Step::kNone) by_skip.push_back(u);
    ++u;
  }
  CHECK(by_step.size() > 200);
  CHECK(by_skip == by_step);

  WorkerStats stats;
  stats.size_for(1, 0);
  hogwild::detail::CoherenceProbe::add(stats, 3, 0.5);
  hogwild::detail::CoherenceProbe::add(stats, kCoherenceWindowsPerEpoch, 0.5);  // beyond: ignored
  CHECK(stats.coherence_sum[3] == 0.5);
  CHECK(stats.coherence_count[3] == 1);
  CHECK_FALSE(hogwild::detail::CoherenceProbe().on());
}

TEST_CASE("a dense gradient's cosine is the sparse merge's, bit for bit, and the closed form") {
  using hogwild::detail::dense_cosine;
  using hogwild::detail::sparse_cosine;
  // Closed forms: parallel, orthogonal, opposite, 45 degrees; a zero vector gives 0.
  const std::vector<float> x{1, 0, 0}, y{0, 2, 0}, xy{3, 3, 0}, zero{0, 0, 0};
  const std::vector<float> minus_x{-2, 0, 0};
  CHECK(dense_cosine(x, x) == 1.0);
  CHECK(dense_cosine(x, y) == 0.0);
  CHECK(dense_cosine(x, minus_x) == -1.0);
  CHECK(dense_cosine(x, xy) == doctest::Approx(1 / std::sqrt(2.0)).epsilon(1e-15));
  CHECK(dense_cosine(x, zero) == 0.0);

  // Every coordinate present in both: the merge of (index, value) pairs sums the same terms in
  // the same order, so the two agree to the last bit, on values spread over decades.
  hogwild::detail::Rng rng(11);
  std::vector<float> a(10007), b(10007);
  for (std::size_t k = 0; k < a.size(); ++k) {
    a[k] = static_cast<float>(rng.normal() * std::exp(4 * rng.uniform()));
    b[k] = static_cast<float>(rng.normal() * std::exp(4 * rng.uniform())) + 0.3f * a[k];
  }
  const auto entry = [](const std::vector<float>& v) {
    return [&v](std::size_t i) { return std::pair{static_cast<std::uint32_t>(i), v[i]}; };
  };
  const double merged = sparse_cosine(a.size(), entry(a), b.size(), entry(b));
  CHECK(dense_cosine(a, b) == merged);
  CHECK(merged > 0.1);
}
