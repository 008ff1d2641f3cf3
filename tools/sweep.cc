// `hogwild sweep`: runs `hogwild train` over a grid of options, one child process per run, so
// a run that fails (bad value, divergence, crash) is recorded and the sweep goes on.
#include "sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli_checkpoint.h"
#include "hogwild/error.h"
#include "train_options.h"

extern char** environ;

namespace hogwild_cli {
namespace {

namespace fs = std::filesystem;
using Grid = std::vector<std::pair<std::string, std::vector<std::string>>>;

// A train option that a sweep cannot pass to every run ("" when it can): the reports are named
// by the sweep, and runs of one grid given one checkpoint would overwrite or resume each other.
std::string refusal(const std::string& option) {
  if (option == "--checkpoint" || option == "--resume")
    return option + ": expected no checkpoint file, the runs would share it";
  for (const auto& o : train_options()) {
    if ((o.flags & kReportPath) && option == o.name)
      return option + ": expected no report path, the sweep names them";
  }
  return "";
}

bool is_train_option(const std::string& option) {
  for (const auto& o : train_options()) {
    if (option == o.name) return true;
  }
  return false;
}

void add_grid_line(Grid& grid, const std::string& text, const std::string& where) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw hogwild::InputError(fmt::format(
        "{}: expected KEY=V1,V2,... (KEY a train option without dashes), found '{}'", where, text));
  }
  std::string key = text.substr(0, eq);
  while (!key.empty() && key.front() == '-') key.erase(0, 1);
  // Checked here so that a mistyped key stops the sweep before any run, not every run alike.
  if (!is_train_option("--" + key)) {
    throw hogwild::InputError(
        fmt::format("{}: expected a train option as KEY, found '{}'", where, key));
  }
  if (const std::string refused = refusal("--" + key); !refused.empty())
    throw hogwild::InputError(refused);
  std::vector<std::string> values;
  std::stringstream items(text.substr(eq + 1));
  for (std::string v; std::getline(items, v, ',');) {
    if (v.empty()) {
      throw hogwild::InputError(fmt::format("{}: expected no empty value in '{}'", where, text));
    }
    values.push_back(v);
  }
  for (const auto& [existing, _] : grid) {
    if (existing == key) {
      throw hogwild::InputError(
          fmt::format("{}: expected each key once, found '{}' twice", where, key));
    }
  }
  grid.emplace_back(key, values);
}

Grid read_grid(const SweepOptions& o) {
  Grid grid;
  if (!o.config.empty()) {
    std::ifstream in(o.config);
    if (!in) throw hogwild::SystemError(fmt::format("{}: cannot open", o.config));
    std::size_t line_no = 0;
    for (std::string line; std::getline(in, line);) {
      ++line_no;
      if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
      line.erase(0, line.find_first_not_of(" \t\r"));
      line.erase(line.find_last_not_of(" \t\r") + 1);
      if (!line.empty()) add_grid_line(grid, line, fmt::format("{}:{}", o.config, line_no));
    }
  }
  for (const auto& g : o.grid) add_grid_line(grid, g, "--grid");
  if (grid.empty())
    throw hogwild::InputError("--grid: expected at least one KEY=V1,V2,... (or --config FILE)");
  return grid;
}

// Refuses the pass-through options that every run would share, as `--opt VALUE` or `--opt=VALUE`.
void check_train_args(const std::vector<std::string>& args) {
  for (const auto& a : args) {
    const std::string option = a.substr(0, a.find('='));
    if (const std::string refused = refusal(option); !refused.empty())
      throw hogwild::InputError(refused);
  }
}

// A run's name: its grid values, safe as a file name.
std::string run_name(const std::vector<std::pair<std::string, std::string>>& combo) {
  std::string name;
  for (const auto& [k, v] : combo) {
    if (!name.empty()) name += "__";
    name += k + "=" + v;
  }
  for (auto& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '=' && c != '.' && c != '-' &&
        c != '_')
      c = '_';
  }
  return name;
}

int spawn_and_wait(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0)
    throw hogwild::SystemError(fmt::format("cannot start {}: {}", args[0], std::strerror(rc)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

std::string csv_field(std::string s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (const char c : s) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string num(const nlohmann::json& j) {
  if (j.is_null()) return "";
  if (j.is_number()) return fmt::format("{}", j.get<double>());
  return j.dump();
}

// The result columns of one finished report.
std::map<std::string, std::string> results(const nlohmann::json& r, const SweepOptions& o) {
  std::map<std::string, std::string> row;
  const auto& fin = r.value("final", nlohmann::json::object());
  for (const char* key : {"train_loss", "test_loss", "test_accuracy"}) {
    row[std::string("final_") + key] = num(fin.value(key, nlohmann::json()));
  }
  for (const char* key : {"samples_per_second", "train_seconds"}) {
    row[key] = num(r.value(key, nlohmann::json()));
  }
  if (r.contains("staleness")) {
    row["staleness_mean"] = num(r["staleness"].value("mean", nlohmann::json()));
    row["staleness_p99"] = num(r["staleness"].value("p99", nlohmann::json()));
  }
  if (r.contains("batch_size"))
    row["batch_size_mean"] = num(r["batch_size"].value("mean", nlohmann::json()));
  // Time and updates to the targets, from the loss curve (loss) and the epochs (accuracy).
  if (o.target_loss > 0 && r.contains("curve")) {
    for (const auto& p : r["curve"]) {
      if (!p["train_loss"].is_null() && p["train_loss"].get<double>() <= o.target_loss) {
        row["seconds_to_target_loss"] = num(p["seconds"]);
        row["updates_to_target_loss"] = num(p["updates"]);
        break;
      }
    }
  }
  if (o.target_accuracy > 0 && r.contains("epochs")) {
    for (const auto& e : r["epochs"]) {
      if (e.contains("test_accuracy") && e["test_accuracy"].get<double>() >= o.target_accuracy) {
        row["seconds_to_target_accuracy"] = num(e.value("elapsed", nlohmann::json()));
        row["epochs_to_target_accuracy"] = num(e["epoch"]);
        break;
      }
    }
  }
  return row;
}

// clang-format off
const std::vector<std::string> kResultColumns = {
    "status", "error", "seconds_to_target_loss", "updates_to_target_loss",
    "seconds_to_target_accuracy", "epochs_to_target_accuracy", "final_train_loss",
    "final_test_loss", "final_test_accuracy", "samples_per_second", "train_seconds",
    "staleness_mean", "staleness_p99", "batch_size_mean", "report"};
// clang-format on

}  // namespace

CLI::App* add_sweep(CLI::App& app, SweepOptions& o) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run `hogwild train` over a grid of options: one JSON report per run in --out, plus "
      "results.csv with a row per run. Failed runs are recorded and the sweep goes on; "
      "re-running skips runs whose report exists.");
  cmd->add_option("--out", o.out, "output directory")->required();
  cmd->add_option("--grid", o.grid,
                  "KEY=V1,V2,...: a train option (without dashes) and its values; repeat for more "
                  "keys (the grid is their product)");
  cmd->add_option("--config", o.config,
                  "file with one KEY=V1,V2,... per line (# comments), added to the --grid keys");
  cmd->add_option("--target-loss", o.target_loss,
                  "report time and updates until the training loss is at or below this");
  cmd->add_option("--target-accuracy", o.target_accuracy,
                  "report time and epochs until the test accuracy is at or above this");
  cmd->allow_extras();
  cmd->footer(
      "Every other argument is passed to each `hogwild train` run, e.g. "
      "hogwild sweep --out runs --grid threads=1,2 --grid policy=racy,atomic --train "
      "data.svm --epochs 5; --json and --csv (the sweep names the reports), --checkpoint and "
      "--resume (the runs would share the file) are refused.\n"
      "Exit codes: 0 every run succeeded (or had its report already), 2 bad usage or bad input "
      "(before any run) or an output that cannot be written, 4 at least one run failed "
      "(results.csv still lists every run).");
  return cmd;
}

int run_sweep(SweepOptions& o) {
  const Grid grid = read_grid(o);
  check_train_args(o.train_args);
  const fs::path out(o.out);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw hogwild::SystemError(fmt::format("{}: cannot create: {}", o.out, ec.message()));
  check_writable((out / "results.csv").string());
  const std::string self = fs::read_symlink("/proc/self/exe").string();

  std::size_t total = 1;
  for (const auto& [_, values] : grid) total *= values.size();
  std::vector<std::map<std::string, std::string>> rows;
  const auto start = std::chrono::steady_clock::now();
  std::size_t executed = 0;
  for (std::size_t index = 0; index < total; ++index) {
    std::vector<std::pair<std::string, std::string>> combo;
    std::size_t rest = index;
    for (auto it = grid.rbegin(); it != grid.rend(); ++it) {
      combo.emplace(combo.begin(), it->first, it->second[rest % it->second.size()]);
      rest /= it->second.size();
    }
    const std::string name = run_name(combo);
    const fs::path report = out / (name + ".json");
    const fs::path log = out / (name + ".log");
    std::map<std::string, std::string> row;
    for (const auto& [k, v] : combo) row["grid." + k] = v;
    bool skipped = false;
    if (fs::exists(report)) {
      skipped = true;
    } else {
      std::vector<std::string> args{self, "train"};
      args.insert(args.end(), o.train_args.begin(), o.train_args.end());
      for (const auto& [k, v] : combo) {
        args.push_back("--" + k);
        args.push_back(v);
      }
      const fs::path partial = out / (name + ".json.partial");
      args.push_back("--json");
      args.push_back(partial.string());
      const int code = spawn_and_wait(args, log);
      ++executed;
      if (code == 0 && fs::exists(partial)) {
        fs::rename(partial, report);
      } else {
        fs::remove(partial, ec);
        row["status"] = fmt::format("failed (exit {})", code);
        row["error"] = last_line(log);
      }
    }
    if (fs::exists(report)) {
      std::ifstream in(report);
      const auto r = nlohmann::json::parse(in, nullptr, false);
      if (r.is_discarded()) {
        row["status"] = "failed";
        row["error"] = "unreadable report " + report.string();
      } else {
        row.merge(results(r, o));
        row["report"] = report.filename().string();
        row["status"] = skipped ? "ok (existing report)" : "ok";
      }
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::size_t remaining = total - index - 1;
    const double eta =
        executed ? elapsed / static_cast<double>(executed) * static_cast<double>(remaining) : 0.0;
    fmt::print(stderr, "[{}/{}] {}: {}{} (elapsed {:.1f} s, ETA {:.1f} s)\n", index + 1, total,
               name, row["status"], row["error"].empty() ? "" : ": " + row["error"], elapsed, eta);
    rows.push_back(std::move(row));
  }

  std::string csv;
  for (const auto& [k, _] : grid) csv += csv_field(k) + ",";
  for (std::size_t c = 0; c < kResultColumns.size(); ++c)
    csv += kResultColumns[c] + (c + 1 < kResultColumns.size() ? "," : "\n");
  for (auto& row : rows) {
    for (const auto& [k, _] : grid) csv += csv_field(row["grid." + k]) + ",";
    for (std::size_t c = 0; c < kResultColumns.size(); ++c) {
      csv += csv_field(row[kResultColumns[c]]) + (c + 1 < kResultColumns.size() ? "," : "\n");
    }
  }
  const fs::path csv_path = out / "results.csv";
  const fs::path tmp = out / "results.csv.partial";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << csv;
    if (!f.flush()) throw hogwild::SystemError(fmt::format("{}: cannot write", tmp.string()));
  }
  fs::rename(tmp, csv_path);
  std::size_t failed = 0;
  for (auto& row : rows) failed += row["status"].rfind("failed", 0) == 0;
  fmt::print(stderr, "sweep: {} runs, {} failed; results in {}\n", rows.size(), failed,
             csv_path.string());
  return failed ? kExitRunsFailed : 0;
}

}  // namespace hogwild_cli
