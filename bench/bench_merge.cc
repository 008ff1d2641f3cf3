// The cost of one merge: a process's changes added to the shared model and the model read
// back, through MPI (rma: MPI_Get_accumulate into a window spread over the processes;
// allreduce: MPI_Allreduce) against shared memory (a replica's merge into the parameters of
// one process). Run under mpirun (bench/mpi.sh):
//
//   mpirun -np P hogwild_bench_merge [REPEATS]
//
// Prints, on rank 0, a line per model size: microseconds per merge of each kind, the median
// of REPEATS timings of 64 merges each (default 7), and a fit of time against bytes (latency +
// bytes / bandwidth) that bench/mpi.sh's projection reads.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "hogwild/detail/param_store.h"
#include "hogwild/mpi_exchange.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMerges = 64;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One process's replica merged into its parameters in shared memory: the changes added, the
// replica refreshed (as the linear kernel's --replicate merge does, one coordinate at a time).
double shared_memory_micros(std::size_t dim, int repeats) {
  std::vector<float> store(dim, 1.0f), replica(dim, 1.5f), base(dim, 1.0f);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    for (int m = 0; m < kMerges; ++m) {
      for (std::size_t i = 0; i < dim; ++i) {
        const float value = store[i] + (replica[i] - base[i]);
        store[i] = value;
        base[i] = value;
        replica[i] = value + 0.5f;  // the worker's next changes
      }
    }
    times.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
                    kMerges);
  }
  return median(times);
}

// Merges through the exchange: every call of after_range(1) is due (merge_every = 1), with
// every coordinate changed since the last merge.
double exchange_micros(const hogwild::MpiSession& session, hogwild::SyncMode mode, std::size_t dim,
                       int repeats) {
  hogwild::detail::ParamStore store(dim);
  auto exchange = hogwild::make_mpi_exchange(session, mode, 1);
  exchange->attach(store.values(), hogwild::Policy::kRacy);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    exchange->begin_segment(kMerges);
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = Clock::now();
    for (int m = 0; m < kMerges; ++m) {
      for (std::size_t i = 0; i < dim; ++i) store.data()[i] += 0.25f;
      exchange->after_range(1);
    }
    const double mine =
        std::chrono::duration<double, std::micro>(Clock::now() - start).count() / kMerges;
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    times.push_back(slowest);
    exchange->end_segment(false);
  }
  exchange->summary();
  return median(times);
}

// Time against bytes through the smallest and the largest model: {latency in us, bytes per
// us}. (A least-squares line over all sizes is the large sizes' and can give a negative
// latency.)
std::pair<double, double> fit(const std::vector<double>& bytes, const std::vector<double>& us) {
  const double per_us = (bytes.back() - bytes.front()) / (us.back() - us.front());
  return {std::max(0.0, us.front() - bytes.front() / per_us), per_us};
}

}  // namespace

int main(int argc, char** argv) {
  hogwild::MpiSession session(&argc, &argv);
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const std::vector<std::size_t> dims{1024, 16384, 47236, 262144, 1048576};
  std::vector<double> bytes, shm, rma, allreduce;
  if (session.rank() == 0) {
    std::printf("# %d processes; microseconds per merge (median of %d x %d merges)\n",
                session.ranks(), repeats, kMerges);
    std::printf("%10s %12s %12s %12s %12s\n", "floats", "bytes", "shared_us", "rma_us",
                "allreduce_us");
  }
  for (const std::size_t dim : dims) {
    const double s = shared_memory_micros(dim, repeats);
    const double r = exchange_micros(session, hogwild::SyncMode::kRma, dim, repeats);
    const double a = exchange_micros(session, hogwild::SyncMode::kAllreduce, dim, repeats);
    bytes.push_back(static_cast<double>(dim * sizeof(float)));
    shm.push_back(s);
    rma.push_back(r);
    allreduce.push_back(a);
    if (session.rank() == 0) {
      std::printf("%10zu %12zu %12.2f %12.2f %12.2f\n", dim, dim * sizeof(float), s, r, a);
    }
  }
  if (session.rank() == 0) {
    for (const auto& [name, us] :
         {std::pair{"shared", &shm}, std::pair{"rma", &rma}, std::pair{"allreduce", &allreduce}}) {
      const auto [latency, per_us] = fit(bytes, *us);
      std::printf("fit %s: latency_us %.3f bandwidth_MBps %.1f\n", name, latency, per_us);
    }
  }
  return 0;
}
