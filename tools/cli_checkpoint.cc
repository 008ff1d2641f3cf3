#include "cli_checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "hogwild/error.h"
#include "train_options.h"

namespace hogwild_cli {
namespace {

// Only what is async-signal-safe happens in the handler: a lock-free atomic store, or _exit.
static_assert(std::atomic<bool>::is_always_lock_free);
std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};

extern "C" void on_stop_signal(int signal) {
  if (g_stop.load(std::memory_order_relaxed)) _exit(kExitInterrupted);  // the second one
  g_signal.store(signal, std::memory_order_relaxed);
  g_stop.store(true, std::memory_order_relaxed);
}

struct sigaction g_previous_int;
struct sigaction g_previous_term;
sigset_t g_previous_mask;
std::atomic<bool> g_closing{false};
std::thread g_waiter;

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Takes SIGINT and SIGTERM synchronously, for as long as the run lasts. Every thread the run
// starts blocks them, so the kernel leaves them to this one, which sets the flag at once: a
// handler would run in whichever thread the kernel picks, and under ThreadSanitizer only when
// that thread next calls an intercepted function, which an idle thread-pool worker may never do.
void wait_for_signals() {
  const sigset_t set = stop_signals();
  const timespec poll{0, 50'000'000};
  while (!g_closing.load(std::memory_order_relaxed)) {
    if (const int signal = sigtimedwait(&set, nullptr, &poll); signal > 0) on_stop_signal(signal);
  }
}

}  // namespace

StopOnSignal::StopOnSignal() {
  g_stop.store(false);
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  // The handler serves threads that were running before, which do not block the signals.
  sigaction(SIGINT, &action, &g_previous_int);
  sigaction(SIGTERM, &action, &g_previous_term);
  const sigset_t set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, &g_previous_mask);  // inherited by every thread started now
  g_closing.store(false);
  g_waiter = std::thread(wait_for_signals);
}

StopOnSignal::~StopOnSignal() {
  g_closing.store(true);
  g_waiter.join();
  // A signal that came after the last wait goes to the handler, still installed here.
  pthread_sigmask(SIG_SETMASK, &g_previous_mask, nullptr);
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

const std::atomic<bool>* StopOnSignal::flag() const { return &g_stop; }

std::string StopOnSignal::name() const {
  const int signal = g_signal.load();
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "";
}

void report_interrupted(const StopOnSignal& stop, bool peers, int last_epoch, int resumed_from,
                        const std::string& checkpoint) {
  std::string saved;
  if (!checkpoint.empty() && last_epoch > resumed_from) {
    saved = fmt::format("; {} holds epoch {}", checkpoint, last_epoch);
  } else if (!checkpoint.empty()) {
    saved = fmt::format("; no epoch completed, {} not written by this run", checkpoint);
  }
  // mpirun signals its processes one after another: one may stop at a merge where another
  // asked to, before its own signal arrives.
  const std::string cause = !stop.name().empty() ? stop.name()
                            : peers              ? "another process's stop"
                                                 : "a stop request";
  fmt::print(stderr, "hogwild: interrupted by {} after epoch {}{}\n", cause, last_epoch, saved);
}

hogwild::Checkpoint load_for_resume(const std::string& path, const hogwild::Checkpoint& expected,
                                    const std::string& data) {
  hogwild::Checkpoint found = hogwild::load_checkpoint(path);
  hogwild::check_resumes(
      found, expected, path,
      {.free_key = free_on_resume, .name_of_key = option_of_key, .data_name = data});
  return found;
}

}  // namespace hogwild_cli
