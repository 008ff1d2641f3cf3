// The delay layer, staleness and coherence measurement and simulation mode in the model
// trainer (softmax, MLP, factorisation).
#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "hogwild/generator.h"
#include "hogwild/model_trainer.h"
#include "hogwild/ratings.h"
#include "test_support.h"

using namespace hogwild;
using hogwild::test::strip_timings;

namespace {

SparseProblem problem(std::size_t rows) {
  SparseGeneratorConfig c;
  c.rows = rows;
  c.features = 300;
  c.nnz_per_row = 10;
  c.seed = 4;
  return generate_sparse(c);
}

}  // namespace

TEST_CASE(
    "model trainer, simulation with const:s: staleness is exactly what the protocol implies") {
  // Same protocol as the linear trainer (see test_delay.cc): one-example minibatches, worker k
  // reads at round t and writes at round t + s or in the final flush, worker by worker.
  for (const int k_workers : {2, 4}) {
    for (const std::uint32_t s : {1u, 3u}) {
      CAPTURE(k_workers);
      CAPTURE(s);
      constexpr std::uint64_t R = 10;
      const auto p = problem(R * static_cast<std::size_t>(k_workers));
      ModelConfig c;
      c.model = ModelKind::kSoftmax;
      c.simulate = k_workers;
      c.batch = 1;
      c.epochs = 1;
      c.delay = DelaySpec::parse("const:" + std::to_string(s));
      c.staleness_sample = 1;
      const auto r = train_model(c, p.train, nullptr);
      REQUIRE(r.staleness_per_worker.size() == static_cast<std::size_t>(k_workers));
      const std::uint64_t K = static_cast<std::uint64_t>(k_workers);
      for (std::uint64_t k = 0; k < K; ++k) {
        std::map<std::uint64_t, std::uint64_t> expected, measured;
        for (std::uint64_t t = 0; t < R; ++t) {
          ++expected[t + s < R ? (t >= s ? s * (K - 1) : t * (K - 1) + k)
                               : (K - 1 - k) + (R - 1 - t) * (K - 1) + k * s];
        }
        for (const auto& [value, count] : r.staleness_per_worker[k].updates.buckets()) {
          measured[value] = count;
        }
        CAPTURE(k);
        CHECK(measured == expected);
      }
    }
  }
}

TEST_CASE("model trainer: every computed update is applied, at several thread counts") {
  const auto p = problem(3000);
  for (const auto model : {ModelKind::kSoftmax}) {
    for (const char* delay : {"none", "const:5", "geometric:0.3"}) {
      for (const int threads : {1, 2, 4}) {
        CAPTURE(delay);
        CAPTURE(threads);
        ModelConfig c;
        c.model = model;
        c.threads = threads;
        c.epochs = 2;
        c.delay = DelaySpec::parse(delay);
        const auto r = train_model(c, p.train, nullptr);
        const std::uint64_t expected = 2 * ((3000 + 16 * threads - 1) / 16);  // >= batches
        CHECK(r.updates_computed > 0);
        CHECK(r.updates_computed <= expected);
        CHECK(r.updates_applied == r.updates_computed);
      }
    }
  }
  // Factorisation (sparse row updates) too.
  RatingsGeneratorConfig g;
  g.users = 100;
  g.items = 80;
  g.rank = 4;
  g.density = 0.2;
  const auto ratings = generate_ratings(g);
  ModelConfig c;
  c.model = ModelKind::kFactorisation;
  c.rank = 4;
  c.threads = 2;
  c.epochs = 2;
  c.delay = DelaySpec::parse("uniform:8");
  const auto r = train_model(c, ratings.train, nullptr);
  CHECK(r.updates_applied == r.updates_computed);
  CHECK(r.updates_computed == 2 * ratings.train.size());
}

TEST_CASE("model trainer: simulation mode is bit-reproducible and measures coherence") {
  const auto p = problem(2000);
  ModelConfig c;
  c.model = ModelKind::kSoftmax;
  c.simulate = 8;
  c.epochs = 2;
  c.optimizer.kind = OptimizerKind::kAdam;
  c.delay = DelaySpec::parse("geometric:0.2");
  c.staleness_sample = 0.5;
  c.coherence_sample = 0.5;
  const auto a = train_model(c, p.train, nullptr);
  const auto b = train_model(c, p.train, nullptr);
  CHECK(a.weights == b.weights);
  auto ja = nlohmann::json::parse(to_json(a));
  auto jb = nlohmann::json::parse(to_json(b));
  strip_timings(ja);
  strip_timings(jb);
  CHECK(ja.dump() == jb.dump());
  REQUIRE(!a.coherence.empty());
  for (const auto& point : a.coherence) {
    CHECK(point.cosine >= -1.0);
    CHECK(point.cosine <= 1.0);
  }
  CHECK(ja["delay"]["injected"].size() > 3);
  CHECK(ja["staleness"]["mean"].get<double>() > 7);  // 8 workers, mean delay 4
}
