// A run's passes over its data before training, on the RCV1-like rows (generate_sparse's
// defaults: 100k rows, 47,236 features, 75 nonzeros a row, Zipf 1):
//   heavy_features/<threads>   the replicated run's heavy-feature pass (each feature's sum of
//                              squared values, summed in parts of the rows) in an arena of
//                              <threads> threads
//   fresh_buffer/<populate>     a fresh 32 MB buffer (the size of the RCV1-like rows' indices)
//                              made ready to write: 1, resize_on_huge_pages (pages faulted in
//                              by madvise MADV_POPULATE_WRITE); 0, the same with a write to
//                              each 4 KiB page instead, in parallel likewise
// Run: build/<preset>/bench/hogwild_bench_setup --benchmark_repetitions=5

#include <benchmark/benchmark.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstdint>
#include <vector>

#include "hogwild/dataset.h"
#include "hogwild/detail/huge_pages.h"
#include "hogwild/generator.h"
#include "hogwild/trainer.h"

namespace {

const hogwild::Dataset& rcv1_like() {
  static const auto data = hogwild::generate_sparse(hogwild::SparseGeneratorConfig{}).train;
  return data;
}

void heavy_features(benchmark::State& state) {
  const auto& data = rcv1_like();
  tbb::task_arena arena(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    arena.execute([&] {
      benchmark::DoNotOptimize(
          hogwild::heavy_features(data, hogwild::TrainConfig::kMeanMergeMinShare));
    });
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.nnz()));
}
BENCHMARK(heavy_features)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// A write to each 4 KiB page of v's storage from oneTBB's threads: every page a fault.
void write_each_page(std::vector<std::uint32_t>& v, std::size_t n) {
  constexpr std::size_t kPage = 4096;
  volatile char* const first = reinterpret_cast<char*>(v.data());
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n * sizeof(std::uint32_t) / kPage, 512),
                    [&](const auto& range) {
                      for (auto k = range.begin(); k < range.end(); ++k) first[k * kPage] = 0;
                    });
}

void fresh_buffer(benchmark::State& state) {
  constexpr std::size_t kElements = std::size_t{8} << 20;
  const bool populate = state.range(0) != 0;
  for (auto _ : state) {
    std::vector<std::uint32_t> v;
    if (populate) {
      hogwild::detail::resize_on_huge_pages(v, kElements);
    } else {
      hogwild::detail::reserve_on_huge_pages(v, kElements);
      write_each_page(v, kElements);
      v.resize(kElements);
    }
    benchmark::DoNotOptimize(v.data());
  }
  state.SetBytesProcessed(
      static_cast<std::int64_t>(state.iterations() * kElements * sizeof(std::uint32_t)));
}
BENCHMARK(fresh_buffer)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
