// Single-precision matrix products through Eigen, the dense models' kernel library: the FLOP
// rate the machine gives one core, and each core when several multiply at once (the peak a
// dense model trained on T threads can approach).
//   gemm/square/n:N          C = A B with N x N matrices (the machine's peak, near enough)
//   gemm/mlp/m:M/k:K/b:B     an MLP layer's forward product over a minibatch: (M x K)(K x B)
// Threaded cases run from 1 to hardware_concurrency threads at once, each on its own
// matrices; the FLOP/s counter is their sum. bench/mlp_peak.sh divides an MLP's training
// FLOP rate by the square product's.

#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <thread>

namespace {

using benchmark::Counter;

// C = A B for an (m x k) A and a (k x n) B, counted as 2 m k n FLOPs per product.
void multiply(benchmark::State& state, Eigen::Index m, Eigen::Index k, Eigen::Index n) {
  const Eigen::MatrixXf a = Eigen::MatrixXf::Random(m, k);
  const Eigen::MatrixXf b = Eigen::MatrixXf::Random(k, n);
  Eigen::MatrixXf c(m, n);
  for (auto _ : state) {
    c.noalias() = a * b;
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  const double flops =
      2.0 * static_cast<double>(m) * static_cast<double>(k) * static_cast<double>(n);
  state.counters["FLOP/s"] =
      Counter(flops * static_cast<double>(state.iterations()), Counter::kIsRate);
}

void square(benchmark::State& state) {
  const auto n = static_cast<Eigen::Index>(state.range(0));
  multiply(state, n, n, n);
}

void mlp_layer(benchmark::State& state) {
  multiply(state, state.range(0), state.range(1), state.range(2));
}

const int kMaxThreads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

BENCHMARK(square)
    ->Name("gemm/square")
    ->ArgName("n")
    ->Arg(512)
    ->Arg(1024)
    ->ThreadRange(1, kMaxThreads)
    ->UseRealTime();
BENCHMARK(mlp_layer)
    ->Name("gemm/mlp")
    ->ArgNames({"m", "k", "b"})
    ->Args({256, 784, 32})
    ->Args({10, 256, 32})
    ->ThreadRange(1, kMaxThreads)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
