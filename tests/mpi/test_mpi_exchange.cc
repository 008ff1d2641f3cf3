// The MPI exchange under mpirun (2 and 3 processes, tests/CMakeLists.txt): with atomic writes no
// update is lost across processes, counted. Each worker thread adds 1 to coordinates of its
// process's parameters (atomic fetch-add, as --policy atomic does) while merges run on the
// workers' threads; after the segment every process holds the same parameters, and their sum is
// every increment of every process (rma), or that sum over the process count (allreduce, which
// averages).

#include <mpi.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <thread>
#include <vector>

#include "hogwild/detail/param_store.h"
#include "hogwild/mpi_exchange.h"

namespace {

int failures = 0;

void expect(bool ok, const char* what, int rank, double found, double expected) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: %s: expected %.17g, found %.17g\n", rank, what, expected, found);
}

// One segment: `threads` workers per process, each `increments` adds of 1 to pseudo-random
// coordinates, reporting progress every `range` increments; returns the parameters' sum.
double run_segment(hogwild::Exchange& exchange, hogwild::detail::ParamStore& store, int threads,
                   std::uint64_t increments, std::uint64_t range, std::uint64_t seed) {
  exchange.begin_segment(static_cast<std::uint64_t>(threads) * increments);
  std::vector<std::jthread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      std::uint64_t state = seed * 7919 + static_cast<std::uint64_t>(t) * 104729 + 1;
      for (std::uint64_t done = 0; done < increments;) {
        const std::uint64_t n = std::min(range, increments - done);
        for (std::uint64_t k = 0; k < n; ++k) {
          state = state * 6364136223846793005ULL + 1442695040888963407ULL;
          const std::size_t i = (state >> 33) % store.size();
          std::atomic_ref<float>(store.data()[i]).fetch_add(1.0f, std::memory_order_relaxed);
        }
        done += n;
        exchange.after_range(n);
      }
    });
  }
  workers.clear();  // joins
  exchange.end_segment(false);
  const auto values = store.values();
  return std::accumulate(values.begin(), values.end(), 0.0);
}

void check_mode(const hogwild::MpiSession& session, hogwild::SyncMode mode, int threads) {
  const int rank = session.rank();
  const int ranks = session.ranks();
  // Small enough that every coordinate's count stays exact in a float (below 2^24).
  hogwild::detail::ParamStore store(3000);
  store.fill(0.0f);
  auto exchange = hogwild::make_mpi_exchange(session, mode, 64);
  exchange->attach(store.values(), hogwild::Policy::kAtomic);
  const std::uint64_t increments = 5000;
  double expected = 0;
  for (int segment = 0; segment < 3; ++segment) {
    const double sum = run_segment(*exchange, store, threads, increments, 48,
                                   static_cast<std::uint64_t>(rank * 31 + segment));
    const double added = static_cast<double>(increments) * threads * ranks;
    expected = mode == hogwild::SyncMode::kRma ? expected + added : expected + added / ranks;
    // Counts are whole numbers, exact in floats under rma; averaging divides them by the
    // process count, which rounds in the last bits of each coordinate.
    const bool counted = mode == hogwild::SyncMode::kRma
                             ? sum == expected
                             : std::abs(sum - expected) <= 1e-5 * expected;
    expect(counted, mode == hogwild::SyncMode::kRma ? "rma: sum" : "allreduce: sum", rank, sum,
           expected);
    // Every process ends the segment with the same parameters.
    std::vector<float> first(store.values().begin(), store.values().end());
    MPI_Bcast(first.data(), static_cast<int>(first.size()), MPI_FLOAT, 0, MPI_COMM_WORLD);
    const bool same = std::equal(first.begin(), first.end(), store.values().begin());
    expect(same, "parameters equal to rank 0's", rank, same, 1);
  }
  const hogwild::ExchangeSummary summary = exchange->summary();
  if (rank == 0) {
    std::uint64_t counted = 0;
    for (const auto m : summary.merges_per_rank) counted += m;
    expect(summary.staleness.updates.count() ==
               3 * increments * static_cast<std::uint64_t>(threads * ranks),
           "staleness records every merged sample", rank,
           static_cast<double>(summary.staleness.updates.count()),
           3.0 * static_cast<double>(increments) * threads * ranks);
    expect(counted > 0, "merges", rank, static_cast<double>(counted), 1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int code = 0;
  {
    hogwild::MpiSession session(&argc, &argv);
    for (const int threads : {1, 2, 3}) {
      check_mode(session, hogwild::SyncMode::kRma, threads);
      check_mode(session, hogwild::SyncMode::kAllreduce, threads);
    }
    int any = 0;
    MPI_Allreduce(&failures, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (session.rank() == 0) {
      std::printf("%s: %d processes, %d failed checks\n", any == 0 ? "passed" : "FAILED",
                  session.ranks(), any);
    }
    code = any == 0 ? 0 : 1;
  }
  return code;
}
