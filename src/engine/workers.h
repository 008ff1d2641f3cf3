#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace hogwild::detail {

/// Runs fn(worker) on `count` dedicated threads (Hogwild workers must truly run at the same
/// time, so they are threads, not tasks) and joins them. The first exception a worker throws
/// is rethrown here after every thread has joined.
inline void run_workers(int count, const std::function<void(int)>& fn) {
  std::exception_ptr first_error;
  std::mutex error_mutex;
  {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(count));
    for (int worker = 0; worker < count; ++worker) {
      threads.emplace_back([&, worker] {
        try {
          fn(worker);
        } catch (...) {
          std::lock_guard guard(error_mutex);
          if (!first_error) first_error = std::current_exception();
        }
      });
    }
  }  // jthreads join here
  if (first_error) std::rethrow_exception(first_error);
}

/// The worker threads of one run, started once and kept: run(fn) has worker k call fn(k) for
/// every k and returns when all have returned, as run_workers does, without starting and
/// joining `count` threads for every epoch or segment (tens of microseconds a thread on a
/// virtual machine, a third of a 2,000-row epoch on two threads). Worker 0 is the thread that
/// calls run(), workers 1 to count - 1 threads of the pool's own: the caller would otherwise
/// wake them and then sleep, and the scheduler, seeing its core busy at the wake-up, queued
/// both workers of a two-thread run on the other core for the first epoch's 9 ms
/// (docs/benchmarks.md). Worker k is always the same thread, so it finds its own state warm in
/// its core's cache from one epoch to the next.
class WorkerPool {
 public:
  /// Starts `count` - 1 threads, idle until run(); the caller of run() is worker 0.
  explicit WorkerPool(int count) : size_(count) {
    threads_.reserve(static_cast<std::size_t>(std::max(count - 1, 0)));
    for (int worker = 1; worker < count; ++worker) {
      threads_.emplace_back([this, worker] { serve(worker); });
    }
  }
  ~WorkerPool() {
    {
      std::lock_guard guard(mutex_);
      closing_ = true;
    }
    start_.notify_all();
  }  // jthreads join here
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Number of workers, the caller of run() included.
  int size() const { return size_; }

  /// Runs fn(0) on the calling thread and fn(k) on worker k's thread, and waits for all of
  /// them; the first exception a worker throws is rethrown here after every worker has
  /// returned. Always called from the same thread, which is then always worker 0.
  void run(const std::function<void(int)>& fn) {
    if (size_ <= 0) return;
    {
      const std::lock_guard guard(mutex_);
      job_ = &fn;
      running_ = size_ - 1;
      first_error_ = nullptr;
      ++generation_;
    }
    start_.notify_all();
    std::exception_ptr error;
    try {
      fn(0);
    } catch (...) {
      error = std::current_exception();
    }
    std::unique_lock lock(mutex_);
    if (error && !first_error_) first_error_ = error;
    done_.wait(lock, [this] { return running_ == 0; });
    job_ = nullptr;
    if (first_error_) std::rethrow_exception(std::exchange(first_error_, nullptr));
  }

 private:
  // A worker's thread: waits for each new job, runs its part, reports it done.
  void serve(int worker) {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* job = nullptr;
      {
        std::unique_lock lock(mutex_);
        start_.wait(lock, [&] { return closing_ || generation_ != seen; });
        if (closing_) return;
        seen = generation_;
        job = job_;
      }
      std::exception_ptr error;
      try {
        (*job)(worker);
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard guard(mutex_);
      if (error && !first_error_) first_error_ = error;
      // Dropped under the lock: were this the last reference, the exception would be deleted
      // here while the caller, woken, reads it.
      error = nullptr;
      if (--running_ == 0) done_.notify_one();
    }
  }

  const int size_;
  std::mutex mutex_;
  std::condition_variable start_;  // a new job, or closing
  std::condition_variable done_;   // the last worker of a job returned
  const std::function<void(int)>* job_ = nullptr;
  std::uint64_t generation_ = 0;  // jobs started so far
  int running_ = 0;               // workers of the current job still running
  bool closing_ = false;
  std::exception_ptr first_error_;
  std::vector<std::jthread> threads_;  // last: joined before the members above go
};

}  // namespace hogwild::detail
