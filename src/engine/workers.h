#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <thread>
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

}  // namespace hogwild::detail
