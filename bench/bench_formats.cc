// Formats the training loops do not use, measured before building them into the trainer:
//   epoch/<weights>/<rows>/<data>   epochs of serial logistic SGD over generated rows
// weights: f32 (what the trainer stores), bf16-sr (bfloat16 with stochastic rounding, as
//   Buckwild! and low-precision SGD store a model: half the bytes, an unbiased rounding),
//   bf16-rn (bfloat16 rounded to nearest, the reference that shows why the rounding must be
//   stochastic: steps smaller than half a unit in the last place are lost);
// rows: idx32 (32-bit feature indices, the trainer's layout beyond 65,536 features), delta16
//   (16-bit gaps between a row's indices, a gap over 65,534 escaped to two more 16-bit words);
// data: rcv1 (47,236 features, 75 nonzeros a row, Zipf 1), text1m (the same with 1,048,576
//   features: gaps mostly below 65,535), ctr (2^22 hashed features, 26 one-hot fields); each
//   also as <data>-freq, its features renumbered by descending frequency.
// Each benchmark runs kEpochs epochs from zero weights with the step 0.5 / (1 + epoch) and
// reports samples/s and the last epoch's mean training log loss (`loss`), so speed and what
// the format does to learning come from the same run. Run interleaved (docs/benchmarks.md):
//   hogwild_bench_formats --benchmark_repetitions=5 --benchmark_enable_random_interleaving=true
//
// The loop is the trainer's arithmetic without its policies: a four-way margin, the logistic
// derivative, then w[j] += coef * x[j] for the row's nonzeros.

#include <benchmark/benchmark.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "hogwild/ctr_generator.h"
#include "hogwild/dataset.h"
#include "hogwild/generator.h"

namespace {

constexpr int kEpochs = 5;
constexpr std::uint16_t kEscape = 0xFFFF;  // delta16: the gap follows in two words

// ---------------------------------------------------------------------------------------
// Weights: a float each, or the upper half of a float's bits.

struct F32Weights {
  std::vector<float> w;
  static constexpr bool kRandom = false;
  explicit F32Weights(std::size_t d) : w(d, 0.0f) {}
  float get(std::uint32_t j) const { return w[j]; }
  void add(std::uint32_t j, float delta, std::uint32_t) { w[j] += delta; }
};

float widen_bf16(std::uint16_t h) { return std::bit_cast<float>(std::uint32_t{h} << 16); }

template <bool kStochastic>
struct Bf16Weights {
  std::vector<std::uint16_t> w;
  static constexpr bool kRandom = kStochastic;
  explicit Bf16Weights(std::size_t d) : w(d, 0) {}
  float get(std::uint32_t j) const { return widen_bf16(w[j]); }
  // Adds to the float's bits 16 random bits (stochastic: rounds up with probability equal to
  // the dropped fraction) or half a unit with ties to even, then keeps the upper half.
  void add(std::uint32_t j, float delta, std::uint32_t random16) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(get(j) + delta);
    const std::uint32_t round = kStochastic ? random16 : 0x7FFF + ((bits >> 16) & 1);
    w[j] = static_cast<std::uint16_t>((bits + round) >> 16);
  }
};

// ---------------------------------------------------------------------------------------
// Rows: the data set's CSR arrays, or every row's index gaps in 16 bits.

struct Idx32Rows {
  const hogwild::Dataset& data;
  template <class Fn>
  void visit(std::size_t r, Fn&& fn) const {
    const auto row = data.row(r);
    fn(row.indices.data(), row.values.data(), row.indices.size());
  }
};

struct Delta16Rows {
  const hogwild::Dataset& data;
  std::vector<std::uint64_t> offsets{0};
  std::vector<std::uint16_t> gaps;
  std::size_t escaped = 0;

  explicit Delta16Rows(const hogwild::Dataset& d) : data(d) {
    for (std::size_t r = 0; r < d.rows(); ++r) {
      std::uint32_t previous = 0;
      for (const std::uint32_t j : d.row(r).indices) {
        const std::uint32_t gap = j - previous;
        if (gap < kEscape) {
          gaps.push_back(static_cast<std::uint16_t>(gap));
        } else {
          gaps.insert(gaps.end(), {kEscape, static_cast<std::uint16_t>(gap >> 16),
                                   static_cast<std::uint16_t>(gap & 0xFFFF)});
          ++escaped;
        }
        previous = j;
      }
      offsets.push_back(gaps.size());
    }
  }
  // Decodes row r's indices into `scratch` (what a loop that reads them twice would do).
  template <class Fn>
  void visit(std::size_t r, Fn&& fn) const {
    thread_local std::vector<std::uint32_t> scratch;
    const auto row = data.row(r);
    scratch.resize(row.indices.size());
    const std::uint16_t* g = gaps.data() + offsets[r];
    std::uint32_t j = 0;
    for (std::size_t k = 0; k < scratch.size(); ++k) {
      std::uint32_t gap = *g++;
      if (gap == kEscape) {
        gap = (std::uint32_t{g[0]} << 16) | g[1];
        g += 2;
      }
      scratch[k] = j += gap;
    }
    fn(scratch.data(), row.values.data(), scratch.size());
  }
};

// ---------------------------------------------------------------------------------------

template <class Weights, class Rows>
double train_epoch(const hogwild::Dataset& data, const Rows& rows, Weights& weights, float step,
                   std::uint64_t& random) {
  double loss = 0;
  for (std::size_t r = 0; r < data.rows(); ++r) {
    rows.visit(r, [&](const std::uint32_t* idx, const float* val, std::size_t n) {
      float m[4] = {0, 0, 0, 0};
      std::size_t k = 0;
      for (; k + 4 <= n; k += 4) {
        for (int q = 0; q < 4; ++q) m[q] += weights.get(idx[k + q]) * val[k + q];
      }
      for (; k < n; ++k) m[0] += weights.get(idx[k]) * val[k];
      const float y = data.labels[r];
      const float z = y * ((m[0] + m[1]) + (m[2] + m[3]));
      loss += std::log1p(std::exp(-static_cast<double>(z)));
      const float coef = step * y / (1.0f + std::exp(z));
      if constexpr (Weights::kRandom) {
        for (k = 0; k < n; ++k) {
          if (k % 4 == 0) {  // xorshift64: 16 random bits for each of the next four nonzeros
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
          }
          const auto random16 = static_cast<std::uint32_t>(random >> (16 * (k % 4))) & 0xFFFF;
          weights.add(idx[k], coef * val[k], random16);
        }
      } else {
        for (k = 0; k < n; ++k) weights.add(idx[k], coef * val[k], 0);
      }
    });
  }
  return loss / static_cast<double>(data.rows());
}

// `data` with its features renumbered by descending frequency (the most frequent is 0), each
// row's nonzeros kept in their order: the same arithmetic, the hot weights on adjacent lines.
hogwild::Dataset by_frequency(const hogwild::Dataset& data) {
  const std::vector<std::uint32_t> counts = hogwild::feature_counts(data);
  std::vector<std::uint32_t> order(counts.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return counts[a] > counts[b]; });
  std::vector<std::uint32_t> number(counts.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) number[order[i]] = i;
  hogwild::Dataset renumbered = data;
  for (auto& j : renumbered.indices) j = number[j];
  return renumbered;
}

const hogwild::Dataset& dataset(const std::string& name) {
  static const auto rcv1 = [] {
    hogwild::SparseGeneratorConfig config;
    return hogwild::generate_sparse(config).train;
  }();
  static const auto text1m = [] {
    hogwild::SparseGeneratorConfig config;
    config.features = std::size_t{1} << 20;
    return hogwild::generate_sparse(config).train;
  }();
  static const auto ctr = [] {
    hogwild::CtrGeneratorConfig config;
    config.rows = 200000;
    return hogwild::generate_ctr(config).train;
  }();
  static const auto rcv1_freq = by_frequency(rcv1);
  static const auto text1m_freq = by_frequency(text1m);
  static const auto ctr_freq = by_frequency(ctr);
  if (name.ends_with("-freq")) {
    return name == "rcv1-freq" ? rcv1_freq : name == "text1m-freq" ? text1m_freq : ctr_freq;
  }
  return name == "rcv1" ? rcv1 : name == "text1m" ? text1m : ctr;
}

template <class Weights, class Rows>
void run_epochs(benchmark::State& state, const hogwild::Dataset& data, const Rows& rows) {
  double loss = 0;
  for (auto _ : state) {
    Weights weights(data.num_features);
    std::uint64_t random = 0x9E3779B97F4A7C15ull;
    for (int epoch = 0; epoch < kEpochs; ++epoch) {
      loss = train_epoch(data, rows, weights, 0.5f / (1.0f + static_cast<float>(epoch)), random);
    }
    benchmark::DoNotOptimize(weights);
  }
  state.counters["samples_per_s"] = benchmark::Counter(
      static_cast<double>(data.rows() * kEpochs * state.iterations()), benchmark::Counter::kIsRate);
  state.counters["loss"] = loss;
}

template <class Weights>
void epoch_idx32(benchmark::State& state, const std::string& name) {
  const auto& data = dataset(name);
  run_epochs<Weights>(state, data, Idx32Rows{data});
}

template <class Weights>
void epoch_delta16(benchmark::State& state, const std::string& name) {
  const auto& data = dataset(name);
  const Delta16Rows rows(data);
  run_epochs<Weights>(state, data, rows);
  state.counters["escaped_share"] =
      static_cast<double>(rows.escaped) / static_cast<double>(std::max<std::size_t>(1, data.nnz()));
}

int register_all() {
  for (const std::string name : {"rcv1", "text1m", "ctr", "rcv1-freq", "text1m-freq", "ctr-freq"}) {
    const auto add = [&](const std::string& format, auto fn) {
      benchmark::RegisterBenchmark(("epoch/" + format + "/" + name).c_str(), fn, name)
          ->Unit(benchmark::kMillisecond)
          ->Iterations(1)
          ->UseRealTime();
    };
    add("f32/idx32", epoch_idx32<F32Weights>);
    add("bf16-sr/idx32", epoch_idx32<Bf16Weights<true>>);
    add("bf16-rn/idx32", epoch_idx32<Bf16Weights<false>>);
    add("f32/delta16", epoch_delta16<F32Weights>);
  }
  return 0;
}

const int registered = register_all();

}  // namespace

BENCHMARK_MAIN();
