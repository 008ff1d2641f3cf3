// Microbenchmarks of the update paths, all through the library's own ParamStore and policies:
//   sparse/<policy>/d:D/k:K/<dist>    w[idx[k]] += a * val[k], one update per iteration
//   private/<policy>/d:D/k:K/<dist>   the same with a private ParamStore per thread: the
//                                     no-sharing bound (what the machine allows)
//   dense/<policy>/n:N                w[i] += a * x[i] over the whole shared vector (axpy)
//   triad/n:N                         a[i] = b[i] + s * c[i], STREAM-like bandwidth reference
//   bookkeeping/<mode>/<workload>     the cost of staleness bookkeeping per update
// Threaded cases run from 1 to hardware_concurrency threads with real time, and the serial
// baseline is in the same binary, so every ratio is measured side by side.
//
// Glossary: D = dimension (parameters), K = nonzeros per update, N = vector length (floats),
// T = threads, w = the shared parameters, idx/val = one update's indices and values,
// a = step scale, x = the dense input vector.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "hogwild/detail/param_store.h"
#include "hogwild/detail/policies.h"

namespace {

using benchmark::Counter;
using hogwild::detail::ParamStore;

constexpr float kScale = 1e-3f;  // a: small, so values stay far from overflow and subnormals
constexpr std::size_t kWorkloadNonzeros = std::size_t{1} << 22;  // pregenerated per workload

// ---------------------------------------------------------------------------------------
// Sparse workloads: pregenerated index lists, distinct and sorted within each update, so the
// timed loop only reads them. Zipf(1) draws ranks by a power law and maps them through a
// random permutation, so hot features are scattered over the vector as in the generator.

enum class Dist { kUniform, kZipf };

const char* dist_name(Dist d) { return d == Dist::kZipf ? "zipf" : "uniform"; }

struct SparseWorkload {
  std::size_t dim = 0;
  std::size_t nnz = 0;      // K
  std::size_t updates = 0;  // number of pregenerated updates
  std::vector<std::uint32_t> idx;
  std::vector<float> val;

  std::span<const std::uint32_t> indices(std::size_t u) const {
    return {idx.data() + u * nnz, nnz};
  }
  const float* values(std::size_t u) const { return val.data() + u * nnz; }
};

SparseWorkload make_workload(std::size_t dim, std::size_t nnz, Dist dist) {
  SparseWorkload wl;
  wl.dim = dim;
  wl.nnz = nnz;
  wl.updates = std::max<std::size_t>(1, kWorkloadNonzeros / std::max<std::size_t>(1, nnz));
  wl.idx.resize(wl.updates * nnz);
  wl.val.resize(wl.updates * nnz);

  std::mt19937_64 rng(0x5eed0000 + dim * 31 + nnz * 7 + static_cast<int>(dist));
  std::vector<double> cdf;
  if (dist == Dist::kZipf) {
    cdf.resize(dim);
    double total = 0;
    for (std::size_t r = 0; r < dim; ++r) cdf[r] = total += 1.0 / static_cast<double>(r + 1);
  }
  std::vector<std::uint32_t> perm(dim);
  std::iota(perm.begin(), perm.end(), 0u);
  std::shuffle(perm.begin(), perm.end(), rng);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::uint32_t> any(0, static_cast<std::uint32_t>(dim - 1));
  std::uniform_real_distribution<float> value(0.5f, 1.5f);

  std::vector<std::uint8_t> taken(dim, 0);
  for (std::size_t u = 0; u < wl.updates; ++u) {
    std::uint32_t* out = wl.idx.data() + u * nnz;
    for (std::size_t k = 0; k < nnz; ++k) {
      std::uint32_t j;
      do {
        if (dist == Dist::kZipf) {
          const double x = unit(rng) * cdf.back();
          j = perm[std::upper_bound(cdf.begin(), cdf.end(), x) - cdf.begin()];
        } else {
          j = any(rng);
        }
      } while (taken[j]);
      taken[j] = 1;
      out[k] = j;
    }
    for (std::size_t k = 0; k < nnz; ++k) taken[out[k]] = 0;
    std::sort(out, out + nnz);
    for (std::size_t k = 0; k < nnz; ++k) wl.val[u * nnz + k] = value(rng);
  }
  return wl;
}

// Shared objects are built once, by whichever thread asks first, and kept for the whole run.
std::mutex g_cache_mutex;

const SparseWorkload& workload(std::size_t dim, std::size_t nnz, Dist dist) {
  static std::map<std::tuple<std::size_t, std::size_t, Dist>, std::unique_ptr<SparseWorkload>>
      cache;
  std::lock_guard guard(g_cache_mutex);
  auto& slot = cache[{dim, nnz, dist}];
  if (!slot) slot = std::make_unique<SparseWorkload>(make_workload(dim, nnz, dist));
  return *slot;
}

ParamStore& shared_store(std::size_t dim) {
  static std::map<std::size_t, std::unique_ptr<ParamStore>> cache;
  std::lock_guard guard(g_cache_mutex);
  auto& slot = cache[dim];
  if (!slot) slot = std::make_unique<ParamStore>(dim);
  return *slot;
}

/// A plain vector of `n` floats set to `fill`, shared read-only (or sliced) between threads.
std::vector<float>& shared_vector(std::size_t n, int which, float fill) {
  static std::map<std::pair<std::size_t, int>, std::unique_ptr<std::vector<float>>> cache;
  std::lock_guard guard(g_cache_mutex);
  auto& slot = cache[{n, which}];
  if (!slot) slot = std::make_unique<std::vector<float>>(n, fill);
  return *slot;
}

void set_sparse_counters(benchmark::State& state, std::size_t nnz) {
  const auto updates = static_cast<double>(state.iterations());
  state.counters["updates/s"] = Counter(updates, Counter::kIsRate);
  state.counters["nnz/s"] = Counter(updates * static_cast<double>(nnz), Counter::kIsRate);
}

/// Applies the workload's updates through policy P, each thread starting at its own offset.
template <class P>
void run_sparse(benchmark::State& state, const SparseWorkload& wl, ParamStore& store) {
  std::size_t u = wl.updates * static_cast<std::size_t>(state.thread_index()) /
                  static_cast<std::size_t>(state.threads());
  for (auto _ : state) {
    const float* v = wl.values(u);
    P::sparse_update(store, wl.indices(u),
                     [v](float old, std::size_t k) { return old + kScale * v[k]; });
    if (++u == wl.updates) u = 0;
  }
  set_sparse_counters(state, wl.nnz);
}

template <class P>
void BM_Sparse(benchmark::State& state, std::size_t dim, std::size_t nnz, Dist dist) {
  const SparseWorkload& wl = workload(dim, nnz, dist);
  run_sparse<P>(state, wl, shared_store(dim));
}

// The no-sharing bound: the same loop, each thread writing its own parameters.
template <class P>
void BM_Private(benchmark::State& state, std::size_t dim, std::size_t nnz, Dist dist) {
  const SparseWorkload& wl = workload(dim, nnz, dist);
  ParamStore mine(dim);
  run_sparse<P>(state, wl, mine);
}

// ---------------------------------------------------------------------------------------
// Dense: every thread adds a * x to the whole shared vector, as a dense Hogwild update does.
// Bytes counted per element: w and x read, w written = 3 floats.

template <class P>
void BM_Dense(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  ParamStore& store = shared_store(n);
  const float* x = shared_vector(n, 0, 1.0f).data();
  for (auto _ : state) {
    P::dense_update(store, 0, n, [x](float old, std::size_t k) { return old + kScale * x[k]; });
    benchmark::ClobberMemory();
  }
  const double elements = static_cast<double>(state.iterations()) * static_cast<double>(n);
  state.counters["floats/s"] = Counter(elements, Counter::kIsRate);
  state.counters["bytes/s"] = Counter(3 * sizeof(float) * elements, Counter::kIsRate);
}

// STREAM triad over shared arrays, each thread on its own contiguous slice (as STREAM splits
// its arrays between threads): 2 floats read and 1 written per element, counted as 12 bytes
// (STREAM's convention; the write-allocate read of a[] is not counted).
void BM_Triad(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  float* __restrict a = shared_vector(n, 1, 0.0f).data();
  const float* __restrict b = shared_vector(n, 2, 1.0f).data();
  const float* __restrict c = shared_vector(n, 3, 2.0f).data();
  const auto t = static_cast<std::size_t>(state.thread_index());
  const auto threads = static_cast<std::size_t>(state.threads());
  const std::size_t begin = n * t / threads;
  const std::size_t end = n * (t + 1) / threads;
  const float s = 3.0f;
  for (auto _ : state) {
    for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
    benchmark::ClobberMemory();
  }
  const double elements =
      static_cast<double>(state.iterations()) * static_cast<double>(end - begin);
  state.counters["floats/s"] = Counter(elements, Counter::kIsRate);
  state.counters["bytes/s"] = Counter(3 * sizeof(float) * elements, Counter::kIsRate);
}

// ---------------------------------------------------------------------------------------
// Staleness bookkeeping, per update on top of the same racy sparse update:
//   none     nothing (the reference)
//   shared   one std::atomic<uint64_t> fetch_add shared by all threads
//   padded   each thread increments its own cache-line-padded counter (relaxed load + store)
//   sampled  padded, plus every 64th update reads the clock and the other threads' counters
// The `nop` workload (no parameter update) shows the raw cost of each mode.

enum class Bookkeeping { kNone, kShared, kPadded, kSampled };

const char* bookkeeping_name(Bookkeeping b) {
  switch (b) {
    case Bookkeeping::kNone:
      return "none";
    case Bookkeeping::kShared:
      return "shared_atomic";
    case Bookkeeping::kPadded:
      return "padded_per_thread";
    case Bookkeeping::kSampled:
      break;
  }
  return "sampled_every_64";
}

struct alignas(hogwild::detail::kCacheLine) PaddedCounter {
  std::atomic<std::uint64_t> value{0};
};

constexpr int kMaxThreads = 256;
alignas(hogwild::detail::kCacheLine) std::atomic<std::uint64_t> g_shared_counter{0};
PaddedCounter g_thread_counters[kMaxThreads];

template <Bookkeeping B>
void BM_Bookkeeping(benchmark::State& state, std::size_t dim, std::size_t nnz, Dist dist) {
  const SparseWorkload* wl = nnz > 0 ? &workload(dim, nnz, dist) : nullptr;
  ParamStore* store = nnz > 0 ? &shared_store(dim) : nullptr;
  const int tid = state.thread_index();
  const int threads = state.threads();
  std::atomic<std::uint64_t>& mine = g_thread_counters[tid % kMaxThreads].value;
  std::size_t u = wl ? wl->updates * static_cast<std::size_t>(tid) / threads : 0;
  std::uint64_t local = 0;
  for (auto _ : state) {
    if (wl) {
      const float* v = wl->values(u);
      hogwild::detail::RacyPolicy::sparse_update(
          *store, wl->indices(u), [v](float old, std::size_t k) { return old + kScale * v[k]; });
      if (++u == wl->updates) u = 0;
    }
    if constexpr (B == Bookkeeping::kShared) {
      g_shared_counter.fetch_add(1, std::memory_order_relaxed);
    } else if constexpr (B == Bookkeeping::kPadded || B == Bookkeeping::kSampled) {
      // Single writer: a relaxed load and store, no locked instruction.
      mine.store(mine.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
    if constexpr (B == Bookkeeping::kSampled) {
      if ((++local & 63) == 0) {
        std::uint64_t others = 0;
        for (int t = 0; t < threads; ++t) {
          if (t != tid) others += g_thread_counters[t].value.load(std::memory_order_relaxed);
        }
        const auto now = std::chrono::steady_clock::now();
        benchmark::DoNotOptimize(others);
        benchmark::DoNotOptimize(now);
      }
    }
  }
  state.counters["updates/s"] = Counter(static_cast<double>(state.iterations()), Counter::kIsRate);
}

// ---------------------------------------------------------------------------------------

int max_threads() {
  return std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, kMaxThreads);
}

// Per-benchmark minimum times keep a default run of the whole binary short (~1.5 minutes on 2
// cores); a --benchmark_min_time given on the command line replaces them (in Google Benchmark
// 1.7 a per-benchmark MinTime would otherwise win over the flag).
bool g_min_time_from_flag = false;

benchmark::internal::Benchmark* timed(benchmark::internal::Benchmark* b, double min_time) {
  b->UseRealTime();
  if (!g_min_time_from_flag) b->MinTime(min_time);
  return b;
}

// Sets the thread counts: 1 to the number of cores for the concurrent cases, 1 for serial.
void threads(benchmark::internal::Benchmark* b, bool concurrent) {
  if (concurrent) {
    b->ThreadRange(1, max_threads());
  } else {
    b->Threads(1);
  }
}

// Registration keeps each workload's variants next to each other (serial, the four policies,
// the no-sharing bound; triad and dense at one size), so that a burst of outside load hits
// the numbers that are compared with each other alike.
template <class P>
void register_sparse(const char* policy, bool concurrent, const std::string& label, std::size_t dim,
                     std::size_t nnz, Dist dist) {
  auto* b = benchmark::RegisterBenchmark(("sparse/" + std::string(policy) + label).c_str(),
                                         BM_Sparse<P>, dim, nnz, dist);
  timed(b, 0.1);
  threads(b, concurrent);
}

template <class P>
void register_dense(const char* policy, bool concurrent, std::int64_t n, double min_time) {
  auto* b = benchmark::RegisterBenchmark(("dense/" + std::string(policy)).c_str(), BM_Dense<P>);
  timed(b->Arg(n)->ArgName("n"), min_time);
  threads(b, concurrent);
}

void register_all() {
  for (const std::size_t dim : {std::size_t{47236}, std::size_t{10'000'000}}) {
    for (const Dist dist : {Dist::kUniform, Dist::kZipf}) {
      for (const std::size_t nnz : {std::size_t{10}, std::size_t{75}, std::size_t{1000}}) {
        const std::string label =
            "/d:" + std::to_string(dim) + "/k:" + std::to_string(nnz) + "/" + dist_name(dist);
        register_sparse<hogwild::detail::SerialPolicy>("serial", false, label, dim, nnz, dist);
        register_sparse<hogwild::detail::RacyPolicy>("racy", true, label, dim, nnz, dist);
        register_sparse<hogwild::detail::AtomicPolicy>("atomic", true, label, dim, nnz, dist);
        register_sparse<hogwild::detail::StripedPolicy>("striped", true, label, dim, nnz, dist);
        register_sparse<hogwild::detail::LockedPolicy>("locked", true, label, dim, nnz, dist);
        auto* b =
            benchmark::RegisterBenchmark(("private/racy" + label).c_str(),
                                         BM_Private<hogwild::detail::RacyPolicy>, dim, nnz, dist);
        timed(b, 0.1);
        threads(b, true);
      }
    }
  }

  for (std::int64_t n = 1024; n <= (std::int64_t{64} << 20); n *= 4) {
    // Sizes beyond the last-level cache take tens of milliseconds per pass: fewer passes.
    const double min_time = n >= (std::int64_t{16} << 20) ? 0.3 : 0.1;
    auto* b = benchmark::RegisterBenchmark("triad", BM_Triad);
    timed(b->Arg(n)->ArgName("n"), min_time);
    threads(b, true);
    register_dense<hogwild::detail::SerialPolicy>("serial", false, n, min_time);
    register_dense<hogwild::detail::RacyPolicy>("racy", true, n, min_time);
    register_dense<hogwild::detail::AtomicPolicy>("atomic", true, n, min_time);
    register_dense<hogwild::detail::StripedPolicy>("striped", true, n, min_time);
    register_dense<hogwild::detail::LockedPolicy>("locked", true, n, min_time);
  }

  struct Workload {
    const char* name;
    std::size_t dim, nnz;
    Dist dist;
  };
  const Workload workloads[] = {{"nop", 0, 0, Dist::kUniform},
                                {"d:47236/k:75/zipf", 47236, 75, Dist::kZipf},
                                {"d:10000000/k:75/uniform", 10'000'000, 75, Dist::kUniform}};
  auto add = [&](Bookkeeping mode, auto fn, const Workload& w) {
    auto* b = benchmark::RegisterBenchmark(
        ("bookkeeping/" + std::string(bookkeeping_name(mode)) + "/" + w.name).c_str(), fn, w.dim,
        w.nnz, w.dist);
    timed(b, 0.1);
    threads(b, true);
  };
  for (const Workload& w : workloads) {
    // With no update and no bookkeeping the loop is empty: nothing to compare against.
    if (w.nnz > 0) add(Bookkeeping::kNone, BM_Bookkeeping<Bookkeeping::kNone>, w);
    add(Bookkeeping::kShared, BM_Bookkeeping<Bookkeeping::kShared>, w);
    add(Bookkeeping::kPadded, BM_Bookkeeping<Bookkeeping::kPadded>, w);
    add(Bookkeeping::kSampled, BM_Bookkeeping<Bookkeeping::kSampled>, w);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]).starts_with("--benchmark_min_time")) g_min_time_from_flag = true;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
