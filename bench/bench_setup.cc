// A run's passes over its data before training, on the RCV1-like rows (generate_sparse's
// defaults: 100k rows, 47,236 features, 75 nonzeros a row, Zipf 1):
//   heavy_features/<threads>   the replicated run's heavy-feature pass (each feature's sum of
//                              squared values, summed in parts of the rows) in an arena of
//                              <threads> threads
// Run: build/<preset>/bench/hogwild_bench_setup --benchmark_repetitions=5

#include <benchmark/benchmark.h>
#include <tbb/task_arena.h>

#include "hogwild/dataset.h"
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

}  // namespace

BENCHMARK_MAIN();
