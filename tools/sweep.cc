// `hogwild sweep`: runs `hogwild train` over a grid of options, one child process per run, so
// a run that fails (divergence, a crash, data it cannot read) is recorded and the sweep goes
// on. Every run's options are first parsed and checked as `train` checks them, so that bad
// usage stops the sweep before any run rather than failing every run alike.
#include "sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_checkpoint.h"
#include "cli_paths.h"
#include "hogwild/error.h"
#include "train_options.h"

extern char** environ;

namespace hogwild_cli {
namespace {

namespace fs = std::filesystem;
using Grid = std::vector<std::pair<std::string, std::vector<std::string>>>;
// One run's grid values, key and value, in the grid's key order.
using Combo = std::vector<std::pair<std::string, std::string>>;

// The train option named `name` ("--epochs"), or null.
const TrainOption* train_option(const std::string& name) {
  for (const auto& o : train_options()) {
    if (name == o.name) return &o;
  }
  return nullptr;
}

// A train option that a sweep cannot pass to every run ("" when it can): the reports are named
// by the sweep, and runs of one grid given one checkpoint would overwrite or resume each other.
std::string refusal(const std::string& option) {
  if (option == "--checkpoint" || option == "--resume")
    return option + ": expected no checkpoint file, the runs would share it";
  if (const TrainOption* o = train_option(option); o != nullptr && (o->flags & kReportPath))
    return option + ": expected no report path, the sweep names them";
  return "";
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
  if (train_option("--" + key) == nullptr) {
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

// Refuses the pass-through options that every run would share, as `--opt VALUE` or `--opt=VALUE`,
// and those the grid gives too (each run would get the option twice).
void check_train_args(const std::vector<std::string>& args, const Grid& grid) {
  for (const auto& a : args) {
    const std::string option = a.substr(0, a.find('='));
    if (const std::string refused = refusal(option); !refused.empty())
      throw hogwild::InputError(refused);
    for (const auto& [key, _] : grid) {
      if (option == "--" + key) {
        throw hogwild::InputError(fmt::format(
            "--grid: expected keys that no other argument gives, found {} in both", option));
      }
    }
  }
}

// Parses the arguments of run `name` (after the executable) and checks its options as `hogwild
// train` does, without running it; throws InputError naming the run.
void check_run(const std::vector<std::string>& args, const std::string& name) {
  CLI::App app;
  TrainArgs train;
  const CLI::App* command = add_train(app, train);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // as CLI11 takes them
  const auto refuse = [&](const std::string& what) {
    throw hogwild::InputError(fmt::format("run {}: {}", name, what));
  };
  try {
    app.parse(reversed);
    apply(train);
    const NamedFile inputs[] = {{"--train", train.train},
                                {"--test", train.test},
                                {"--train-labels", train.train_labels},
                                {"--test-labels", train.test_labels}};
    for (const auto& input : inputs) {
      if (input.path == "-") {
        throw hogwild::InputError(fmt::format(
            "{}: expected a file, found '-' (standard input, which one run alone could read)",
            input.option));
      }
      check_readable(input.path);
    }
  } catch (const CLI::ConversionError& e) {
    refuse(conversion_message(*command, e.what()));
  } catch (const CLI::ParseError& e) {
    refuse(e.what());
  } catch (const hogwild::InputError& e) {
    refuse(e.what());
  } catch (const hogwild::SystemError& e) {
    refuse(e.what());
  }
}

// Every combination of the grid's values, the last key varying fastest.
std::vector<Combo> combos(const Grid& grid) {
  std::size_t total = 1;
  for (const auto& [_, values] : grid) total *= values.size();
  std::vector<Combo> all;
  for (std::size_t index = 0; index < total; ++index) {
    Combo combo;
    std::size_t rest = index;
    for (auto it = grid.rbegin(); it != grid.rend(); ++it) {
      combo.emplace(combo.begin(), it->first, it->second[rest % it->second.size()]);
      rest /= it->second.size();
    }
    all.push_back(std::move(combo));
  }
  return all;
}

// 64-bit FNV-1a of the combination, each key and value ended by a NUL (which no argument holds,
// so different combinations hash different bytes). Unlike std::hash it is the same on every
// machine and build, so a later sweep finds the names an earlier one gave.
std::uint64_t combo_hash(const Combo& combo) {
  std::uint64_t h = 14695981039346656037ull;
  const auto add = [&h](const std::string& s) {
    for (const char c : s + '\0') h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  };
  for (const auto& [k, v] : combo) {
    add(k);
    add(v);
  }
  return h;
}

// The longest stem of a run's file names: within NAME_MAX (255 bytes on Linux file systems)
// with the longest suffix the sweep adds (".json.partial") and room to spare.
constexpr std::size_t kMaxStem = 200;

// A run's name: its grid values, safe as a file name.
std::string readable_name(const Combo& combo) {
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

// The runs' file names, one per combination and distinct for distinct combinations: the
// readable name, cut to a prefix with a hash of the values appended where it is too long for a
// file name or where other values clean to the same name (`a/b` and `a_b`).
std::vector<std::string> run_names(const std::vector<Combo>& all) {
  std::vector<std::string> names;
  std::map<std::string, std::set<Combo>> sharing;
  for (const auto& combo : all) {
    names.push_back(readable_name(combo));
    sharing[names.back()].insert(combo);
  }
  std::map<std::string, Combo> owner;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (names[i].size() > kMaxStem || sharing[names[i]].size() > 1) {
      const std::string tag = fmt::format("-{:016x}", combo_hash(all[i]));
      names[i] = names[i].substr(0, kMaxStem - tag.size()) + tag;
    }
    // Equal values name one run twice, which is harmless; two distinct runs must not share.
    if (const auto [it, fresh] = owner.emplace(names[i], all[i]); !fresh && it->second != all[i])
      throw hogwild::InputError(fmt::format("--grid: cannot name two runs apart: {}", names[i]));
  }
  return names;
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

using Row = std::map<std::string, std::string>;

// What every run of one sweep shares.
struct Sweep {
  const SweepOptions& options;
  fs::path out;      // the --out directory
  std::string self;  // this executable, started as `train` for each run
};

// A run's arguments after the executable, without the report path the sweep adds (a file in
// --out, which says where the run went, not what it was).
std::vector<std::string> run_args(const SweepOptions& o, const Combo& combo) {
  std::vector<std::string> args{"train"};
  args.insert(args.end(), o.train_args.begin(), o.train_args.end());
  for (const auto& [k, v] : combo) {
    args.push_back("--" + k);
    args.push_back(v);
  }
  return args;
}

// The record kept beside a run's report: its arguments, one a line, with backslashes and
// newlines escaped so that different argument lists never give the same record.
std::string record_of(const std::vector<std::string>& args) {
  std::string record;
  for (const auto& a : args) {
    for (const char c : a) record += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
    record += '\n';
  }
  return record;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Fills the row's results from a finished report.
void read_report(const fs::path& report, const SweepOptions& o, bool existing, Row& row) {
  std::ifstream in(report);
  const auto r = nlohmann::json::parse(in, nullptr, false);
  if (!r.is_discarded()) {
    try {
      row.merge(results(r, o));
      row["report"] = report.filename().string();
      row["status"] = existing ? "ok (existing report)" : "ok";
      return;
    } catch (const nlohmann::json::exception&) {
      // Valid JSON of another shape: reported below like a report that does not parse.
    }
  }
  row["status"] = "failed";
  row["error"] = "unreadable report " + report.string();
}

// Trains one run into `report` and writes its record; false (the row saying why) when it failed.
bool train_one(const Sweep& sweep, const std::vector<std::string>& args, const std::string& name,
               Row& row) {
  const fs::path report = sweep.out / (name + ".json");
  const fs::path record = sweep.out / (name + ".args");
  const fs::path partial = sweep.out / (name + ".json.partial");
  const fs::path log = sweep.out / (name + ".log");
  // What other arguments left under this name goes first, so that no report outlives its record.
  fs::remove(record);
  fs::remove(report);
  std::vector<std::string> argv{sweep.self};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back("--json");
  argv.push_back(partial.string());
  const int code = spawn_and_wait(argv, log);
  if (code != 0 || !fs::exists(partial)) {
    std::error_code ec;
    if (code == kExitDiverged && fs::exists(partial)) {
      // A diverged run's report holds its epochs up to the divergence: kept for its curve, with
      // no record, so the next sweep runs it again.
      fs::rename(partial, report);
      read_report(report, sweep.options, false, row);
    }
    fs::remove(partial, ec);
    row["status"] = fmt::format("failed (exit {})", code);
    row["error"] = last_line(log);
    return false;
  }
  fs::rename(partial, report);
  // The record last: a run stopped before this point is run again rather than trusted.
  std::ofstream f(record, std::ios::trunc);
  f << record_of(args);
  if (!f.flush()) throw hogwild::SystemError(fmt::format("{}: cannot write", record.string()));
  return true;
}

// One run: its report reused when an earlier sweep made it with the same arguments, trained
// otherwise. A file that cannot be moved or written fails this run, not the sweep.
Row sweep_one(const Sweep& sweep, const Combo& combo, const std::string& name, bool& trained) {
  Row row;
  for (const auto& [k, v] : combo) row["grid." + k] = v;
  const auto args = run_args(sweep.options, combo);
  const fs::path report = sweep.out / (name + ".json");
  try {
    const fs::path record = sweep.out / (name + ".args");
    const bool existing = fs::is_regular_file(report) && fs::is_regular_file(record) &&
                          read_text(record) == record_of(args);
    trained = !existing;
    if (existing || train_one(sweep, args, name, row))
      read_report(report, sweep.options, existing, row);
  } catch (const fs::filesystem_error& e) {
    row["status"] = "failed";
    row["error"] = e.what();
  } catch (const hogwild::SystemError& e) {
    row["status"] = "failed";
    row["error"] = e.what();
  }
  return row;
}

// Writes results.csv (through a partial file, so that an old one is replaced whole).
fs::path write_results(const Grid& grid, std::vector<Row>& rows, const fs::path& out) {
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
  return csv_path;
}

// Runs every combination of the grid and writes results.csv; returns the exit code.
int sweep_grid(const SweepOptions& o) {
  const Grid grid = read_grid(o);
  check_train_args(o.train_args, grid);
  const std::vector<Combo> all = combos(grid);
  const std::vector<std::string> names = run_names(all);
  for (std::size_t index = 0; index < all.size(); ++index) {
    check_run(run_args(o, all[index]), names[index]);
  }
  const fs::path out(o.out);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw hogwild::SystemError(fmt::format("{}: cannot create: {}", o.out, ec.message()));
  check_writable((out / "results.csv").string());
  const Sweep sweep{o, out, fs::read_symlink("/proc/self/exe").string()};

  std::vector<Row> rows;
  const auto start = std::chrono::steady_clock::now();
  std::size_t executed = 0;
  for (std::size_t index = 0; index < all.size(); ++index) {
    bool trained = false;
    Row row = sweep_one(sweep, all[index], names[index], trained);
    executed += trained;
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::size_t remaining = all.size() - index - 1;
    const double eta =
        executed ? elapsed / static_cast<double>(executed) * static_cast<double>(remaining) : 0.0;
    fmt::print(stderr, "[{}/{}] {}: {}{} (elapsed {:.1f} s, ETA {:.1f} s)\n", index + 1, all.size(),
               names[index], row["status"], row["error"].empty() ? "" : ": " + row["error"],
               elapsed, eta);
    rows.push_back(std::move(row));
  }
  const fs::path csv_path = write_results(grid, rows, out);
  std::size_t failed = 0;
  for (auto& row : rows) failed += row["status"].rfind("failed", 0) == 0;
  fmt::print(stderr, "sweep: {} runs, {} failed; results in {}\n", rows.size(), failed,
             csv_path.string());
  return failed ? kExitRunsFailed : 0;
}

// A target: a number in [0, most]; NaN, and a percentage given as a fraction's target, would
// never be met and leave the columns empty without a word.
CLI::Validator finite_at_least_zero(std::string expected, double most) {
  return CLI::Validator(
      [expected, most](const std::string& text) {
        double value = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec == std::errc{} && end == text.data() + text.size() && value >= 0 && value <= most) {
          return std::string();
        }
        return fmt::format("expected {}, found '{}'", expected, text);
      },
      "", "target");
}

}  // namespace

CLI::App* add_sweep(CLI::App& app, SweepOptions& o) {
  auto* cmd = app.add_subcommand(
      "sweep",
      "Run `hogwild train` over a grid of options: one JSON report per run in --out, named by "
      "its grid values (a hash of them appended where the name would be too long or shared), "
      "its arguments beside it in NAME.args, plus results.csv with a row per run. Failed runs "
      "are recorded and the sweep goes on; re-running skips runs whose report was made with "
      "the same arguments.");
  cmd->add_option("--out", o.out, "output directory")->required()->check(output_path("directory"));
  cmd->add_option("--grid", o.grid,
                  "KEY=V1,V2,...: a train option (without dashes) and its values; repeat for more "
                  "keys (the grid is their product)");
  cmd->add_option("--config", o.config,
                  "file with one KEY=V1,V2,... per line (# comments), added to the --grid keys");
  cmd->add_option("--target-loss", o.target_loss,
                  "report time and updates until the training loss is at or below this")
      ->check(finite_at_least_zero("a loss >= 0", 1.0 / 0.0));
  cmd->add_option("--target-accuracy", o.target_accuracy,
                  "report time and epochs until the test accuracy is at or above this fraction "
                  "(0.9 for 90%)")
      ->check(finite_at_least_zero("a fraction in [0, 1] (0.9 for 90%)", 1.0));
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
  // Whatever the file system refuses ends the sweep with one line and exit 2, never an abort.
  try {
    return sweep_grid(o);
  } catch (const fs::filesystem_error& e) {
    throw hogwild::SystemError(e.what());
  }
}

}  // namespace hogwild_cli
