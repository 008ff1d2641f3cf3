// The worker pool: every worker runs each job once, on its own thread every time (worker 0 on
// the caller's), the caller sees every worker's writes when run() returns, and a worker's
// exception reaches the caller after all have returned while the pool stays usable; at several
// thread counts.
#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "engine/workers.h"

using hogwild::detail::WorkerPool;

TEST_CASE(
    "a pool runs each job once per worker, each worker on its own thread every time, worker 0 "
    "on the caller's") {
  for (const int threads : {1, 2, 4, 8}) {
    CAPTURE(threads);
    WorkerPool pool(threads);
    CHECK(pool.size() == threads);
    const auto n = static_cast<std::size_t>(threads);
    std::vector<std::thread::id> first(n);
    pool.run(
        [&](int worker) { first[static_cast<std::size_t>(worker)] = std::this_thread::get_id(); });
    CHECK(first[0] == std::this_thread::get_id());
    for (std::size_t k = 1; k < n; ++k) {
      CHECK(first[k] != std::this_thread::get_id());
      for (std::size_t j = 0; j < k; ++j) CHECK(first[j] != first[k]);
    }
    // Plain (non-atomic) writes: run() returning orders them before the caller's reads.
    std::vector<long> sums(n, 0);
    bool same_threads = true;
    constexpr int kJobs = 500;
    std::vector<char> moved(n, 0);
    for (int job = 1; job <= kJobs; ++job) {
      pool.run([&](int worker) {
        const auto k = static_cast<std::size_t>(worker);
        sums[k] += job;
        if (std::this_thread::get_id() != first[k]) moved[k] = 1;
      });
    }
    for (std::size_t k = 0; k < n; ++k) {
      CHECK(sums[k] == static_cast<long>(kJobs) * (kJobs + 1) / 2);
      same_threads = same_threads && moved[k] == 0;
    }
    CHECK(same_threads);
  }
}

TEST_CASE("a pool rethrows a worker's exception after every worker returned, and goes on") {
  for (const int threads : {1, 2, 4, 8}) {
    // The last worker (a pool thread, or the caller with one worker) and worker 0 (the caller).
    for (const int failing : {threads - 1, 0}) {
      CAPTURE(threads);
      CAPTURE(failing);
      WorkerPool pool(threads);
      std::atomic<int> finished{0};
      CHECK_THROWS_WITH_AS(pool.run([&](int worker) {
        if (worker == failing) throw std::runtime_error("worker failed");
        ++finished;
      }),
                           "worker failed", std::runtime_error);
      CHECK(finished == threads - 1);
      finished = 0;
      CHECK_NOTHROW(pool.run([&](int) { ++finished; }));  // the error was not kept
      CHECK(finished == threads);
    }
  }
}
