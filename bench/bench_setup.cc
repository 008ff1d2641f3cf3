// A run's passes over its data before training, on the RCV1-like rows (generate_sparse's
// defaults: 100k rows, 47,236 features, 75 nonzeros a row, Zipf 1):
//   heavy_features/<threads>   the replicated run's heavy-feature pass (each feature's sum of
//                              squared values, summed in parts of the rows) in an arena of
//                              <threads> threads
//   fresh_buffer/<populate>     a fresh 32 MB buffer (the size of the RCV1-like rows' indices)
//                              made ready to write: 1, resize_on_huge_pages (pages faulted in
//                              by madvise MADV_POPULATE_WRITE); 0, the same with a write to
//                              each 4 KiB page instead, in parallel likewise
//   fresh_buffer_after_idle/<s>  the same populated 32 MB buffer after <s> seconds (not timed)
//                              with the memory returned to the system: on a virtual machine
//                              that reports free pages to its host (virtio-balloon free page
//                              reporting), memory idle for 2 s or more is given back to the
//                              host, and taking it again costs the host's faults too
//   evaluate_rows/<rows>       the training loss of a model on the first <rows> rows, as a run
//                              evaluates its loss sample after each epoch, on 2 threads
//   evaluate_layout/<layout>   the training loss of a model on all the rows, on one thread, as
//                              a run evaluates it after each epoch: 0, read from the data set
//                              (8 bytes a nonzero); 1, from the packed rows the training loops
//                              read (16-bit indices and floats, 6 bytes); 2 and 3, the same
//                              with every value 1 (binary data: 2 bytes a nonzero packed)
//   describe_rows              the data set's summary (describe: its label counts among it)
//   binary_labels              the two label values of a binary linear model (label_values),
//                              as a run and its checkpoint find them
//   fingerprint                the training data's fingerprint (data_fingerprint: a CRC-32 of
//                              every row), which a run that writes or resumes a checkpoint takes
// and on 1M CTR-like rows (generate_ctr's defaults: 26 one-hot fields hashed into 2^22
// features), what a run of 2 threads with --replicate auto does before it trains on them:
//   wide_counts                the features' counts (feature_counts)
//   wide_plan                  the replicas they decide (resolved_replicas: the share of the
//                              4096 hottest features)
//   wide_heavy_features/<counts>  the heavy features among them, on the machine's threads: 0,
//                              each feature's squares summed over the nonzeros; 1, weighed from
//                              the features' counts, as a run that has them does
//   wide_hot_rows              the rows laid out for the hot replicas (hot_rows)
//   storage_shuffle/<ctr>      the rows' storage shuffled as the CLI does at load for block
//                              order (shuffle_rows; the copy it shuffles not timed): 0, the
//                              RCV1-like rows; 1, the CTR-like rows
// Run: build/<preset>/bench/hogwild_bench_setup --benchmark_repetitions=5

#include <benchmark/benchmark.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "engine/feature_order.h"
#include "engine/hot_rows.h"
#include "engine/linear_evaluation.h"
#include "engine/packed_rows.h"
#include "hogwild/checkpoint.h"
#include "hogwild/ctr_generator.h"
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

const hogwild::Dataset& ctr_like() {
  static const auto data = hogwild::generate_ctr(hogwild::CtrGeneratorConfig{}).train;
  return data;
}

hogwild::TrainConfig two_workers() {
  hogwild::TrainConfig config;
  config.threads = 2;
  return config;
}

void wide_counts(benchmark::State& state) {
  const auto& data = ctr_like();
  for (auto _ : state) benchmark::DoNotOptimize(hogwild::feature_counts(data));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.nnz()));
}
BENCHMARK(wide_counts)->Unit(benchmark::kMillisecond)->UseRealTime();

void wide_plan(benchmark::State& state) {
  const auto& data = ctr_like();
  const auto counts = hogwild::feature_counts(data);
  for (auto _ : state) {
    benchmark::DoNotOptimize(hogwild::resolved_replicas(two_workers(), data, counts));
  }
}
BENCHMARK(wide_plan)->Unit(benchmark::kMillisecond)->UseRealTime();

void wide_heavy_features(benchmark::State& state) {
  const auto& data = ctr_like();
  std::vector<std::uint32_t> counts;
  if (state.range(0) == 1) counts = hogwild::feature_counts(data);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        hogwild::heavy_features(data, hogwild::TrainConfig::kMeanMergeMinShare, counts));
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.nnz()));
}
BENCHMARK(wide_heavy_features)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void wide_hot_rows(benchmark::State& state) {
  const auto& data = ctr_like();
  const auto counts = hogwild::feature_counts(data);
  const auto numbers = hogwild::detail::frequency_numbers(counts);
  const auto hot =
      hogwild::detail::hottest_features(counts, hogwild::TrainConfig::kAutoHotFeatures, numbers);
  for (auto _ : state) benchmark::DoNotOptimize(hogwild::detail::hot_rows(data, hot, numbers));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.nnz()));
}
BENCHMARK(wide_hot_rows)->Unit(benchmark::kMillisecond)->UseRealTime();

void storage_shuffle(benchmark::State& state) {
  const auto& data = state.range(0) == 1 ? ctr_like() : rcv1_like();
  for (auto _ : state) {
    state.PauseTiming();
    hogwild::Dataset copy = data;
    state.ResumeTiming();
    hogwild::shuffle_rows(copy, 1);
    benchmark::DoNotOptimize(copy.indices.data());
    state.PauseTiming();
    copy = {};
    state.ResumeTiming();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.nnz()));
}
BENCHMARK(storage_shuffle)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

// The training loss of a model on the first `rows` RCV1-like rows: a run's evaluation of its
// loss sample after each epoch.
void evaluate_rows(benchmark::State& state) {
  const auto& all = rcv1_like();
  hogwild::Dataset data;
  data.num_features = all.num_features;
  for (std::size_t i = 0; i < static_cast<std::size_t>(state.range(0)); ++i) {
    data.append(all.row(i).indices, all.row(i).values, all.labels[i]);
  }
  std::vector<float> w(data.num_features);
  for (std::size_t j = 0; j < w.size(); ++j) w[j] = static_cast<float>(j % 7) * 0.01f - 0.03f;
  const auto labels = hogwild::label_values(hogwild::LossKind::kLogistic, data);
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        hogwild::evaluate(hogwild::LossKind::kLogistic, w, 0.0, data, labels, 2).loss);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.nnz()));
}
BENCHMARK(evaluate_rows)->Arg(10000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The training loss of a model on all the RCV1-like rows on one thread, from the data set
// (even layouts) or from the packed rows (odd), with the rows' values (0, 1) or every value 1.
void evaluate_layout(benchmark::State& state) {
  // On huge pages, as a run's data set is read into (hogwild::read_libsvm).
  const auto& source = rcv1_like();
  hogwild::Dataset data;
  data.row_offsets = source.row_offsets;
  data.labels = source.labels;
  data.num_features = source.num_features;
  hogwild::detail::resize_on_huge_pages(data.indices, source.nnz());
  hogwild::detail::resize_on_huge_pages(data.values, source.nnz());
  std::copy(source.indices.begin(), source.indices.end(), data.indices.begin());
  std::copy(source.values.begin(), source.values.end(), data.values.begin());
  if (state.range(0) >= 2) std::fill(data.values.begin(), data.values.end(), 1.0f);
  std::vector<float> w(data.num_features);
  for (std::size_t j = 0; j < w.size(); ++j) w[j] = static_cast<float>(j % 7) * 0.01f - 0.03f;
  const auto y = hogwild::detail::mapped_labels(
      data, hogwild::label_values(hogwild::LossKind::kLogistic, data), "data");
  const hogwild::detail::PackedRows packed(data, hogwild::DataPrecision::kF32);
  tbb::task_arena arena(1);
  const auto loss = [&] {
    if (state.range(0) % 2 == 0) {
      return hogwild::detail::evaluate_mapped<hogwild::LogisticLoss>(
                 w, 0.0, hogwild::detail::EvaluatedRows(data), y, arena)
          .loss;
    }
    return hogwild::detail::with_packed_rows(packed, data, [&](const auto& rows) {
      return hogwild::detail::evaluate_mapped<hogwild::LogisticLoss>(w, 0.0, rows, y, arena).loss;
    });
  };
  for (auto _ : state) benchmark::DoNotOptimize(loss());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.nnz()));
}
BENCHMARK(evaluate_layout)->DenseRange(0, 3)->Unit(benchmark::kMillisecond)->UseRealTime();

void describe_rows(benchmark::State& state) {
  const auto& data = rcv1_like();
  for (auto _ : state) benchmark::DoNotOptimize(hogwild::describe(data).label_counts.size());
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.rows()));
}
BENCHMARK(describe_rows)->Unit(benchmark::kMillisecond)->UseRealTime();

void binary_labels(benchmark::State& state) {
  const auto& data = rcv1_like();
  for (auto _ : state) {
    benchmark::DoNotOptimize(hogwild::label_values(hogwild::LossKind::kLogistic, data).size());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * data.rows()));
}
BENCHMARK(binary_labels)->Unit(benchmark::kMillisecond)->UseRealTime();

void fingerprint(benchmark::State& state) {
  const auto& data = rcv1_like();
  std::uint64_t bytes = 0;
  for (auto _ : state) {
    const hogwild::DataFingerprint f = hogwild::data_fingerprint(data);
    bytes = f.bytes;
    benchmark::DoNotOptimize(f.crc);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
}
BENCHMARK(fingerprint)->Unit(benchmark::kMillisecond)->UseRealTime();

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

void fresh_buffer_after_idle(benchmark::State& state) {
  constexpr std::size_t kElements = std::size_t{8} << 20;
  for (auto _ : state) {
    state.PauseTiming();
    std::this_thread::sleep_for(std::chrono::seconds(state.range(0)));
    state.ResumeTiming();
    std::vector<std::uint32_t> v;
    hogwild::detail::resize_on_huge_pages(v, kElements);
    benchmark::DoNotOptimize(v.data());
  }
}
BENCHMARK(fresh_buffer_after_idle)
    ->Arg(0)
    ->Arg(4)
    ->Iterations(4)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
