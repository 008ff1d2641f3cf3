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
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "hogwild/error.h"
#include "hogwild/idx.h"
#include "hogwild/input.h"
#include "hogwild/libsvm.h"
#include "hogwild/predict.h"
#include "hogwild/ratings.h"
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

// Is the line blank or a comment (the ratings reader skips those)?
bool skipped_line(std::string_view line) {
  for (const char c : line) {
    if (c == '#') return true;
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
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

hogwild::Checkpoint load_for_resume(const std::string& path, const hogwild::Checkpoint& expected) {
  hogwild::Checkpoint found = hogwild::load_checkpoint(path);
  hogwild::check_resumes(found, expected, path,
                         {.free_key = free_on_resume, .name_of_key = option_of_key});
  return found;
}

CLI::App* add_predict(CLI::App& app, PredictOptions& o) {
  auto* cmd = app.add_subcommand(
      "predict",
      "Predict with a model saved by `hogwild train --checkpoint`: one line per example (binary "
      "models: the label and the probability of the positive label (logistic) or the margin "
      "(hinge); squared: the value; softmax/mlp: the class label; mf: the rating of each `user "
      "item` line); with labels in the data, the loss and accuracy (or RMSE) go to stderr.");
  cmd->add_option("--model", o.model, "checkpoint file written by --checkpoint")
      ->required()
      ->check(file_path());
  cmd->add_option("--data", o.data,
                  "examples in the format the model trained on: LIBSVM (features beyond the "
                  "model's dimension are ignored), IDX images, or `user item [rating]` lines")
      ->required()
      ->check(file_path());
  cmd->add_option("--labels", o.labels,
                  "IDX: labels file (default: beside the images by the standard name; without "
                  "one, no accuracy)")
      ->check(file_path());
  cmd->add_option("--out", o.out,
                  "write the predictions here instead of standard output (- : standard output)")
      ->check(file_path());
  cmd->footer("Exit codes: 0 success, 2 bad usage, bad data or a corrupt checkpoint.");
  return cmd;
}

int run_predict(const PredictOptions& o) {
  const std::string out = o.out == "-" ? "" : o.out;  // "": standard output
  check_writable(out);
  const NamedFile inputs[] = {{"--model", o.model}, {"--data", o.data}, {"--labels", o.labels}};
  const NamedFile output[] = {{"--out", out}};
  check_outputs_apart(inputs, output);
  check_one_standard_input(inputs);
  const hogwild::Checkpoint model = hogwild::load_checkpoint(o.model);
  hogwild::Predictions p;
  std::size_t rows = 0;
  if (model.format == "idx") {
    std::optional<std::filesystem::path> labels;
    if (!o.labels.empty()) labels = o.labels;
    if (!labels) labels = hogwild::find_idx_labels(o.data);
    if (labels) {
      const auto data = hogwild::read_idx(o.data, *labels);
      p = hogwild::predict(model, data, true);
      rows = data.rows();
    } else {
      auto images = hogwild::read_idx_array(o.data);
      if (images.shape.size() < 2 || images.shape[0] == 0) {
        throw hogwild::InputError(fmt::format(
            "{}: expected images with at least 2 dimensions and one image, found {} dimensions",
            o.data, images.shape.size()));
      }
      hogwild::DenseDataset data;
      data.source = o.data;
      data.cols = images.data.size() / images.shape[0];
      data.bytes = std::move(images.data);
      data.labels.assign(images.shape[0], 0);
      p = hogwild::predict(model, data, false);
      rows = data.rows();
    }
  } else if (model.format == "ratings") {
    // `user item` lines have no rating to compare with; `user item rating` lines do.
    std::string text = hogwild::read_text(o.data), line, with_ratings;
    std::optional<bool> pairs;  // from the first line that holds an example
    for (std::istringstream lines(text); std::getline(lines, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      const bool skipped = skipped_line(line);
      if (!skipped && !pairs) {
        std::string fields = line, field;
        std::replace(fields.begin(), fields.end(), ',', ' ');
        std::size_t count = 0;
        for (std::istringstream split(fields); split >> field;) ++count;
        pairs = count == 2;
      }
      with_ratings += line + (skipped ? "\n" : " 0\n");
    }
    if (pairs.value_or(false)) text = std::move(with_ratings);
    const auto data = hogwild::parse_ratings(text, o.data);
    p = hogwild::predict(model, data, !pairs.value_or(false));
    rows = data.size();
  } else {
    const auto data = hogwild::read_libsvm(
        o.data,
        {.index_base = model.zero_based ? hogwild::IndexBase::kZero : hogwild::IndexBase::kOne});
    p = hogwild::predict(model, data, true);
    rows = data.rows();
  }

  std::string text;
  text.reserve(rows * 12);
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    text += p.scores.empty() ? fmt::format("{}\n", p.values[i])
                             : fmt::format("{} {}\n", p.values[i], p.scores[i]);
  }
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    write_text(out, text);
  }
  std::string summary =
      fmt::format("{} predictions with the {} model of epoch {}", rows, model.model, model.epoch);
  if (p.loss) summary += fmt::format(", loss {:.6f}", *p.loss);
  if (p.accuracy) summary += fmt::format(", accuracy {:.2f}%", 100 * *p.accuracy);
  if (p.rmse) summary += fmt::format(", rmse {:.5f}", *p.rmse);
  fmt::print(stderr, "{}\n", summary);
  return 0;
}

}  // namespace hogwild_cli
