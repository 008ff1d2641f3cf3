// One thread's sample loop against what bounds it, on the RCV1-like rows (100,000 rows, 47,236
// features, 75 nonzeros a row, Zipf 1; 16-bit indices and float values, as the trainer stores
// them), serial logistic SGD at step 0.5:
//   loop/step      the trainer's plain-loop sample (private_step): a four-way margin that keeps
//                  the weights it reads, the logistic derivative, then w[j] = kept + coef x v
//                  four nonzeros at a time
//   loop/gather    the same with the margin's weights read by AVX2 gathers, eight at a time
//   bound/margin   the margin and the derivative alone, no update: no sample loop that reads
//                  each weight of its row can go faster, whatever its update costs
//   bound/rows     the margin's arithmetic on the rows alone (each index in place of its
//                  weight): the cost of streaming the rows, no weight read
// Run interleaved (docs/benchmarks.md, "The one-thread target against the loop's bounds"):
//   hogwild_bench_bounds --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true

#include <benchmark/benchmark.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hogwild/generator.h"

namespace {

constexpr int kEpochs = 5;
constexpr float kStep = 0.5f;

using Floats4 = float __attribute__((vector_size(16)));

// The generated rows with 16-bit indices, as the trainer packs them below 65,536 features.
struct Rows {
  std::vector<std::uint64_t> offsets;
  std::vector<std::uint16_t> indices;
  std::vector<float> values, labels;
  std::size_t features = 0;
};

const Rows& rcv1() {
  static const Rows rows = [] {
    const hogwild::Dataset data = hogwild::generate_sparse({}).train;
    Rows r;
    r.offsets = data.row_offsets;
    r.indices.assign(data.indices.begin(), data.indices.end());
    r.values = data.values;
    r.labels = data.labels;
    r.features = data.num_features;
    return r;
  }();
  return rows;
}

// The margin over n nonzeros in the trainer's order: sum j takes the nonzeros k = j mod 4.
template <bool kGather>
inline float margin(const float* w, const std::uint16_t* idx, const float* val, std::size_t n,
                    float* kept) {
  Floats4 sums = {0, 0, 0, 0};
  std::size_t k = 0;
#ifdef __AVX2__
  if constexpr (kGather) {
    for (; k + 8 <= n; k += 8) {
      const __m256i at =
          _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(idx + k)));
      const __m256 weights = _mm256_i32gather_ps(w, at, 4);
      _mm256_storeu_ps(kept + k, weights);
      Floats4 low, high, v_low, v_high;
      std::memcpy(&low, kept + k, sizeof low);
      std::memcpy(&high, kept + k + 4, sizeof high);
      std::memcpy(&v_low, val + k, sizeof v_low);
      std::memcpy(&v_high, val + k + 4, sizeof v_high);
      sums += low * v_low;
      sums += high * v_high;
    }
  }
#endif
  for (; k + 4 <= n; k += 4) {
    const Floats4 weights = {w[idx[k]], w[idx[k + 1]], w[idx[k + 2]], w[idx[k + 3]]};
    const Floats4 values = {val[k], val[k + 1], val[k + 2], val[k + 3]};
    std::memcpy(kept + k, &weights, sizeof weights);
    sums += weights * values;
  }
  float m0 = sums[0];
  for (; k < n; ++k) {
    kept[k] = w[idx[k]];
    m0 += kept[k] * val[k];
  }
  return (m0 + sums[1]) + (sums[2] + sums[3]);
}

inline void apply_kept(float* w, const std::uint16_t* idx, const float* val, std::size_t n,
                       float coef, const float* kept) {
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    Floats4 v, x;
    std::memcpy(&v, kept + k, sizeof v);
    std::memcpy(&x, val + k, sizeof x);
    v += coef * x;
    for (int j = 0; j < 4; ++j) w[idx[k + j]] = v[j];
  }
  for (; k < n; ++k) w[idx[k]] = kept[k] + coef * val[k];
}

// The margin's arithmetic with each index (as a float) in place of its weight: the row read
// as the margin reads it, four sums wide, without the weights' loads.
inline float rows_only(const std::uint16_t* idx, const float* val, std::size_t n) {
  Floats4 sums = {0, 0, 0, 0};
  std::size_t k = 0;
  for (; k + 4 <= n; k += 4) {
    const Floats4 at = {static_cast<float>(idx[k]), static_cast<float>(idx[k + 1]),
                        static_cast<float>(idx[k + 2]), static_cast<float>(idx[k + 3])};
    const Floats4 values = {val[k], val[k + 1], val[k + 2], val[k + 3]};
    sums += at * values;
  }
  float m0 = sums[0];
  for (; k < n; ++k) m0 += static_cast<float>(idx[k]) * val[k];
  return (m0 + sums[1]) + (sums[2] + sums[3]);
}

enum class Loop { kStep, kGather, kMarginOnly, kRowsOnly };

// One epoch in storage order; returns what keeps the loop from being optimised away.
template <Loop kLoop>
float epoch(const Rows& r, std::vector<float>& w, std::vector<float>& kept) {
  float sink = 0;
  for (std::size_t i = 0; i + 1 < r.offsets.size(); ++i) {
    const std::size_t begin = r.offsets[i], n = r.offsets[i + 1] - begin;
    const std::uint16_t* idx = r.indices.data() + begin;
    const float* val = r.values.data() + begin;
    if constexpr (kLoop == Loop::kRowsOnly) {
      sink += rows_only(idx, val, n);
      continue;
    }
    const float m = margin<kLoop == Loop::kGather>(w.data(), idx, val, n, kept.data());
    const float y = r.labels[i];
    const float g = -y / (1.0f + std::exp(y * m));
    if constexpr (kLoop == Loop::kMarginOnly) {
      sink += g;
    } else {
      apply_kept(w.data(), idx, val, n, -kStep * g, kept.data());
    }
  }
  return sink;
}

template <Loop kLoop>
void run(benchmark::State& state) {
  const Rows& r = rcv1();
  std::size_t longest = 0;
  for (std::size_t i = 0; i + 1 < r.offsets.size(); ++i) {
    longest = std::max<std::size_t>(longest, r.offsets[i + 1] - r.offsets[i]);
  }
  std::vector<float> kept(longest);
  for (auto _ : state) {
    std::vector<float> w(r.features, 0.0f);
    for (int e = 0; e < kEpochs; ++e) benchmark::DoNotOptimize(epoch<kLoop>(r, w, kept));
    benchmark::DoNotOptimize(w.data());
  }
  const double samples = static_cast<double>(r.labels.size()) * kEpochs;
  state.counters["samples_per_s"] = benchmark::Counter(
      samples * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

BENCHMARK(run<Loop::kStep>)->Name("loop/step")->Unit(benchmark::kMillisecond)->UseRealTime();
#ifdef __AVX2__
BENCHMARK(run<Loop::kGather>)->Name("loop/gather")->Unit(benchmark::kMillisecond)->UseRealTime();
#endif
BENCHMARK(run<Loop::kMarginOnly>)
    ->Name("bound/margin")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(run<Loop::kRowsOnly>)->Name("bound/rows")->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
