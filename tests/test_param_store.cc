#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "engine/workers.h"
#include "hogwild/detail/param_store.h"
#include "hogwild/detail/policies.h"
#include "hogwild/generator.h"
#include "hogwild/trainer.h"

using namespace hogwild;
using namespace hogwild::detail;

namespace {

// T threads each add 1 to every coordinate M times, through sparse and dense updates.
template <class P>
void hammer(ParamStore& store, int threads, int rounds, bool dense) {
  std::vector<std::uint32_t> all(store.size());
  std::iota(all.begin(), all.end(), 0u);
  detail::run_workers(threads, [&](int) {
    for (int r = 0; r < rounds; ++r) {
      if (dense) {
        P::dense_update(store, 0, store.size(), [](float old, std::size_t) { return old + 1.0f; });
      } else {
        P::sparse_update(store, all, [](float old, std::size_t) { return old + 1.0f; });
      }
    }
  });
}

template <class P>
void check_no_update_lost(const char* name) {
  for (const int threads : {2, 4, 8}) {
    for (const bool dense : {false, true}) {
      CAPTURE(name);
      CAPTURE(threads);
      CAPTURE(dense);
      // 100 coordinates span several stripes and share cache lines: maximal contention.
      ParamStore store(100, 4);
      constexpr int kRounds = 2000;
      hammer<P>(store, threads, kRounds, dense);
      for (std::size_t i = 0; i < store.size(); ++i) {
        REQUIRE(store.data()[i] == static_cast<float>(threads * kRounds));
      }
    }
  }
}

}  // namespace

TEST_CASE("storage is 64-byte aligned and zero-initialised") {
  for (const std::size_t size : {1u, 15u, 16u, 17u, 1000u}) {
    ParamStore store(size);
    CHECK(reinterpret_cast<std::uintptr_t>(store.data()) % 64 == 0);
    for (std::size_t i = 0; i < size; ++i) CHECK(store.data()[i] == 0.0f);
  }
}

TEST_CASE("atomic loses no update") { check_no_update_lost<AtomicPolicy>("atomic"); }
TEST_CASE("striped loses no update") { check_no_update_lost<StripedPolicy>("striped"); }
TEST_CASE("locked loses no update") { check_no_update_lost<LockedPolicy>("locked"); }

TEST_CASE("racy never invents updates") {
  for (const int threads : {2, 4}) {
    ParamStore store(100);
    constexpr int kRounds = 2000;
    hammer<RacyPolicy>(store, threads, kRounds, false);
    for (std::size_t i = 0; i < store.size(); ++i) {
      CHECK(store.data()[i] >= 1.0f);
      CHECK(store.data()[i] <= static_cast<float>(threads * kRounds));
    }
  }
}

TEST_CASE("every policy applies the same single-threaded update") {
  std::vector<std::uint32_t> idx{0, 3, 17, 18, 63, 64, 99};
  std::vector<float> expected;
  {
    ParamStore store(100);
    SerialPolicy::sparse_update(store, idx,
                                [](float old, std::size_t k) { return old + 0.5f * k; });
    expected = store.snapshot();
  }
  auto run = [&](auto policy) {
    using P = decltype(policy);
    ParamStore store(100);
    P::sparse_update(store, idx, [](float old, std::size_t k) { return old + 0.5f * k; });
    return store.snapshot();
  };
  for (const auto policy : {Policy::kRacy, Policy::kAtomic, Policy::kStriped, Policy::kLocked}) {
    CAPTURE(to_string(policy));
    CHECK(dispatch_policy(policy, run) == expected);
  }
}

TEST_CASE("a sparse update writes its nonzeros in order, whatever their count") {
  // Lengths around the loops' groups of four, and an index repeated, so that the order of
  // the writes shows in the result: each write doubles what the one before left.
  for (std::size_t n = 0; n <= 9; ++n) {
    CAPTURE(n);
    std::vector<std::uint32_t> idx(n);
    for (std::size_t k = 0; k < n; ++k) idx[k] = k % 3 == 2 ? 5 : static_cast<std::uint32_t>(k);
    const auto op = [](float old, std::size_t k) { return 2.0f * old + static_cast<float>(k); };
    std::vector<float> expected(10, 1.0f);
    for (std::size_t k = 0; k < n; ++k) expected[idx[k]] = op(expected[idx[k]], k);
    const auto run = [&](auto policy) {
      ParamStore store(10);
      std::fill(store.data(), store.data() + store.size(), 1.0f);
      decltype(policy)::sparse_update(store, idx, op);
      return store.snapshot();
    };
    for (const auto policy :
         {Policy::kSerial, Policy::kRacy, Policy::kAtomic, Policy::kStriped, Policy::kLocked}) {
      CAPTURE(to_string(policy));
      CHECK(dispatch_policy(policy, run) == expected);
    }
  }
}

TEST_CASE("dispatch_policy selects the named policy") {
  for (const auto policy :
       {Policy::kRacy, Policy::kAtomic, Policy::kStriped, Policy::kLocked, Policy::kSerial}) {
    CHECK(dispatch_policy(policy, [](auto p) { return decltype(p)::kind; }) == policy);
    CHECK(parse_policy(to_string(policy)) == policy);
  }
}

TEST_CASE("racy with one thread equals serial bit for bit") {
  SparseGeneratorConfig data_config;
  data_config.rows = 3000;
  data_config.features = 500;
  data_config.nnz_per_row = 20;
  const auto problem = generate_sparse(data_config);
  for (const auto loss : {LossKind::kLogistic, LossKind::kHinge, LossKind::kSquared}) {
    for (const double l2 : {0.0, 1e-3}) {
      TrainConfig config;
      config.model = hogwild::LinearModel{loss};
      config.l2 = l2;
      config.epochs = 3;
      config.optimizer.step = 0.1;
      config.policy = Policy::kSerial;
      const auto serial = hogwild::train(config, problem.train, nullptr);
      config.policy = Policy::kRacy;
      config.threads = 1;
      const auto racy = hogwild::train(config, problem.train, nullptr);
      REQUIRE(serial.weights.size() == racy.weights.size());
      CHECK(std::memcmp(serial.weights.data(), racy.weights.data(),
                        serial.weights.size() * sizeof(float)) == 0);
    }
  }
}
