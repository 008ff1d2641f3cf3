// End-to-end tests of the hogwild command: generate, inspect, train, report, errors.
#include <bzlib.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "cli_support.h"

namespace fs = std::filesystem;
using Result = hogwild::test::CliResult;
using hogwild::test::kSanitized;
using hogwild::test::run;
using hogwild::test::slurp;
using hogwild::test::work_dir;

namespace {

std::string path(const char* name) { return (work_dir() / name).string(); }

// A LIBSVM line with 0-based indices 0 and 2.
std::string fmt_row(int label, double a, double b) {
  return std::to_string(label) + " 0:" + std::to_string(a) + " 2:" + std::to_string(b) + "\n";
}

void generate() {
  static bool done = false;
  if (done) return;
  const auto r = run("gen sparse --rows 4000 --features 2000 --nnz-per-row 20 --seed 3 --out " +
                     path("train.svm") + " --test-rows 1000 --test-out " + path("test.svm"));
  REQUIRE(r.code == 0);
  done = true;
}

}  // namespace

namespace {
std::string json_order(const std::string& report) {
  return nlohmann::json::parse(slurp(report))["config"]["order"].get<std::string>();
}
}  // namespace

TEST_CASE("gen, info and train produce a JSON report with the documented fields") {
  generate();
  const auto info = run("info " + path("train.svm"));
  REQUIRE(info.code == 0);
  CHECK(info.out.find("rows:            4000") != std::string::npos);
  CHECK(info.out.find("nnz:             80000") != std::string::npos);

  const auto r = run("train --train " + path("train.svm") + " --test " + path("test.svm") +
                     " --threads 2 --epochs 3 --json " + path("report.json") + " --csv " +
                     path("epochs.csv") + " --compare-serial");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("test_acc") != std::string::npos);
  CHECK(r.out.find("speed-up over serial") != std::string::npos);
  CHECK(r.out.find("order: blocks of 128 stored rows (storage shuffled at load), replicas: "
                   "merged every 2048 samples (auto)") != std::string::npos);
  CHECK(json_order(path("report.json")) == "blocks:128");
  const auto json = nlohmann::json::parse(slurp(path("report.json")));
  for (const char* key : {"model", "policy", "threads", "epochs", "step", "decay", "l2", "seed"}) {
    CHECK(json["config"].contains(key));
  }
  CHECK(json["config"]["threads"] == 2);
  CHECK(json["dataset"]["rows"] == 4000);
  CHECK(json["dataset"]["nnz"] == 80000);
  CHECK(json["dataset"]["features"].get<int>() <= 2000);
  REQUIRE(json["epochs"].size() == 4);
  for (const auto& e : json["epochs"]) {
    for (const char* key : {"epoch", "seconds", "train_loss", "test_loss", "test_accuracy"}) {
      CHECK(e.contains(key));
    }
  }
  CHECK(json["samples_per_second"].get<double>() > 0);
  CHECK(json["final"]["test_accuracy"].get<double>() > 0.6);
  CHECK(json["serial_baseline"]["speedup"].get<double>() > 0);
  const std::string csv = slurp(path("epochs.csv"));
  CHECK(csv.rfind("epoch,seconds,", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);
}

TEST_CASE("gen ctr writes hashed one-hot rows that info reads and train learns") {
  const auto g =
      run("gen ctr --rows 6000 --test-rows 2000 --fields 6 --categories 500 "
          "--features 100000 --signal 2.5 --seed 4 --out " +
          path("ctr.svm") + " --test-out " + path("ctr.test.svm"));
  INFO(g.err);
  REQUIRE(g.code == 0);
  CHECK(g.err.find("6000 rows x 100000 hashed features (6 fields") != std::string::npos);
  const auto info = run("info " + path("ctr.svm"));
  REQUIRE(info.code == 0);
  CHECK(info.out.find("rows:            6000") != std::string::npos);
  CHECK(info.out.find("max 6") != std::string::npos);
  // One thread, so that the loss is the same on every run: with two, replicas merged every 2048
  // samples on 6,000 rows end between 0.163 and 0.18 as the threads are scheduled.
  const auto r = run("train --train " + path("ctr.svm") + " --test " + path("ctr.test.svm") +
                     " --threads 1 --epochs 3 --json " + path("ctr.json"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(slurp(path("ctr.json")));
  // 4.8% clicks: predicting the rate for every row scores about 0.19; the planted model's
  // logits vary with a standard deviation of 2.5, which the run learns part of (0.170).
  CHECK(json["final"]["test_loss"].get<double>() < 0.18);
}

TEST_CASE(
    "a model wider than 2^18 features is renumbered by frequency, and info and the report say so") {
  const auto g =
      run("gen ctr --rows 3000 --fields 6 --categories 2000 --features 300000 --seed 5 "
          "--out " +
          path("wide.svm"));
  INFO(g.err);
  REQUIRE(g.code == 0);
  // The features some row holds, counted from the file itself.
  std::set<std::string> held;
  std::istringstream rows(slurp(path("wide.svm")));
  for (std::string token; rows >> token;) {
    if (const auto colon = token.find(':'); colon != std::string::npos) {
      held.insert(token.substr(0, colon));
    }
  }
  const auto info = run("info " + path("wide.svm"));
  REQUIRE(info.code == 0);
  // The dimension is the largest index present (at most the 300000 hashed).
  CHECK(info.out.find(fmt::format("held:            {} of the ", held.size())) !=
        std::string::npos);
  CHECK(info.out.find(" features appear in some row (over 262144: a linear run renumbers them "
                      "by frequency") != std::string::npos);
  const auto r =
      run("train --train " + path("wide.svm") + " --epochs 2 --json " + path("wide.json"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find(", features renumbered by frequency\n") != std::string::npos);
  const auto json = nlohmann::json::parse(slurp(path("wide.json")));
  CHECK(json["training_rows"]["renumbered"] == true);
  CHECK(json["training_rows"]["index_bits"] == (held.size() <= 65536 ? 16 : 32));
  CHECK_FALSE(json["config"].contains("feature_order"));
  REQUIRE(run("train --train " + path("wide.svm") + " --epochs 2 --feature-order given --json " +
              path("given.json"))
              .code == 0);
  const auto given = nlohmann::json::parse(slurp(path("given.json")));
  CHECK_FALSE(given["training_rows"].contains("renumbered"));
  CHECK(given["config"]["feature_order"] == "given");
  generate();
  const auto narrow = run("info " + path("train.svm"));
  REQUIRE(narrow.code == 0);
  CHECK(narrow.out.find("held:            ") != std::string::npos);
  CHECK(narrow.out.find("renumbers") == std::string::npos);
}

TEST_CASE("--limit trains on the first N examples of LIBSVM and ratings files, test files too") {
  std::ofstream(path("limit.svm")) << "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2 9:1\n";
  std::ofstream(path("limit.txt")) << "0 0 4\n1 2 3\n2 1 5\n3 3 1\n";
  struct Case {
    std::string args;
    std::size_t rows;  // the examples the report counts
  };
  const std::string svm = "train --quiet --epochs 1 --train " + path("limit.svm");
  const std::string ratings = "train --quiet --epochs 1 --format ratings --train " +
                              path("limit.txt") + " --test " + path("limit.txt");
  for (const auto& c : {Case{svm + " --limit 2", 2}, Case{svm + " --limit 9", 4},
                        Case{svm + " --limit 0", 4}, Case{ratings + " --limit 3", 3}}) {
    CAPTURE(c.args);
    const auto r = run(c.args + " --json " + path("limit.json"));
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto report = nlohmann::json::parse(slurp(path("limit.json")));
    CHECK(report["samples"] == c.rows);  // one epoch: every kept example once
  }
  // The first two rows are those trained: the same model as a file of those two rows.
  std::ofstream(path("first2.svm")) << "1 1:1 2:0.5\n-1 2:1 3:1\n";
  REQUIRE(run(svm + " --limit 2 --policy serial --json " + path("limit2.json")).code == 0);
  REQUIRE(run("train --quiet --epochs 1 --policy serial --train " + path("first2.svm") +
              " --json " + path("first2.json"))
              .code == 0);
  const auto limited = nlohmann::json::parse(slurp(path("limit2.json")));
  const auto first2 = nlohmann::json::parse(slurp(path("first2.json")));
  CHECK(limited["final"]["train_loss"] == first2["final"]["train_loss"]);
  CHECK(limited["dataset"]["features"] == 9);  // the dimension stays the file's
}

TEST_CASE("info on far more features than nonzeros counts them from the nonzeros") {
  // Index 2^32 - 1 in a three-line file: per-feature counts would take 17 GB.
  std::ofstream(path("sparse_wide.svm")) << "1 3:2 1000000:1\n-1 3:1 77:0.5\n1 4294967295:3\n";
  // Within 2 GB of address space, where per-feature counts cannot be allocated (the sanitizer
  // builds, which reserve far more for their shadow memory, run it without the limit).
  const auto info =
      run("info " + path("sparse_wide.svm"), "/dev/null", kSanitized ? "" : "ulimit -v 2000000; ");
  INFO(info.err);
  REQUIRE(info.code == 0);
  CHECK(info.out.find("features:        4294967295\n") != std::string::npos);
  CHECK(info.out.find("held:            4 of the 4294967295 features") != std::string::npos);
  // Squares by feature: 3 holds 4 + 1, 77 0.25, 1000000 1, 4294967295 9: 9 / 15.25.
  CHECK(info.out.find("one feature holds 59.02% of the squared values") != std::string::npos);
}

TEST_CASE("a constant feature merges as the workers' mean change, and the replicas line says so") {
  generate();
  // Every row gains feature 2001 = 1 (an intercept's constant feature): half the squared values.
  std::istringstream rows(slurp(path("train.svm")));
  std::ofstream out(path("constant.svm"));
  for (std::string line; std::getline(rows, line);) out << line << " 2001:1\n";
  out.close();
  const auto info = run("info " + path("constant.svm"));
  CHECK(info.out.find("heaviest:        one feature holds ") != std::string::npos);
  CHECK(info.out.find("% of the squared values (over 2%: replica merges add the workers' mean "
                      "change of its weight)") != std::string::npos);
  CHECK(run("info " + path("train.svm")).out.find("squared values\n") != std::string::npos);
  const auto r = run("train --train " + path("constant.svm") + " --threads 2 --epochs 1 --json " +
                     path("constant.json"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("replicas: merged every 2048 samples (auto); 1 feature over 2% of the squared "
                   "values merged as the workers' mean change") != std::string::npos);
  const auto report = nlohmann::json::parse(slurp(path("constant.json")));
  CHECK(report["config"]["replicate"] == 2048);
  CHECK(report["mean_merged_features"] == 1);
  // Without the constant feature, no such line and no such key.
  const auto plain = run("train --train " + path("train.svm") + " --threads 2 --epochs 1 --json " +
                         path("plain.json"));
  CHECK(plain.out.find("replicas: merged every 2048 samples (auto)\n") != std::string::npos);
  CHECK(!nlohmann::json::parse(slurp(path("plain.json"))).contains("mean_merged_features"));
}

TEST_CASE("the replicas line says what auto found in a wide model's hottest features") {
  // The replicas line of a 2-thread run on 2000 rows of 2M features: feature 1 + r % 8 and
  // `cold` features of the row's own.
  const auto replicas_line = [](const char* name, int cold) {
    {
      std::ofstream out(path(name));
      for (int r = 0; r < 2000; ++r) {
        out << (r % 2 ? "+1" : "-1") << " " << 1 + r % 8 << ":1";
        for (int k = 0; k < cold; ++k) out << " " << 2'000'000 + r * cold + k << ":1";
        out << "\n";
      }
    }
    const auto r = run(std::string("train --train ") + path(name) + " --threads 2 --epochs 1");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto at = r.out.find("replicas: ");
    REQUIRE(at != std::string::npos);
    return r.out.substr(at, r.out.find('\n', at) - at);
  };
  // 3 cold features a row: the 4096 hottest (the 8, 4088 cold) hold 6088 of 8000 nonzeros;
  // each of the 8 holds 250 of the 8000 squared values, over 2%.
  CHECK(replicas_line("hot.svm", 3) ==
        "replicas: merged every 2048 samples (auto), the 4096 hottest features only (76.1% of "
        "the nonzeros); 8 features over 2% of the squared values merged as the workers' mean "
        "change");
  // 20: 6088 of 42000.
  CHECK(replicas_line("cold.svm", 20) ==
        "replicas: off (auto: the 4096 hottest features hold 14.5% of the nonzeros, under 25%)");
}

TEST_CASE("bad usage and bad data exit 2 with one clear line") {
  generate();
  struct Case {
    std::string args;
    std::string message;
  };
  std::ofstream(path("bad.svm")) << "1 1:0.5\n-1 2:x\n";
  const Case cases[] = {
      {"train --train " + path("bad.svm"), path("bad.svm") + ":2: expected a numeric value"},
      {"train --train /nonexistent.svm", "/nonexistent.svm: cannot open"},
      {"train --train " + path("train.svm") + " --model nope", "--model: expected one of"},
      {"train --train " + path("train.svm") + " --policy nope", "--policy: expected one of"},
      {"train --train " + path("train.svm") + " --threads -2", "--threads"},
      {"train --train " + path("train.svm") + " --epochs 0", "--epochs: expected at least 1"},
      {"train --train " + path("train.svm") + " --step 0", "--step"},
      {"train --train " + path("train.svm") + " --epochs abc", "--epochs"},
      {"train", "--train is required"},
      {"frobnicate",
       "unknown command 'frobnicate'; expected one of gen, train, sweep, predict, info"},
      {"", "expected a command, one of gen, train, sweep, predict, info"},
      {"gen", "gen: expected a generator, one of sparse, ratings, ctr"},
      {"gen sparsee --out " + path("x.svm"),
       "gen: unknown generator 'sparsee'; expected one of sparse, ratings, ctr"},
      {"gen sparse --out " + path("x.svm") + " --nnz-per-row 0", "--nnz-per-row"},
      {"gen ctr --out " + path("x.svm") + " --positive-rate 1.5", "--positive-rate"},
      {"gen ctr --out /nonexistent/x.svm --rows 10", "/nonexistent/x.svm: cannot write"},
      {"gen ctr --out " + path("x.svm") + " --test-rows 5", "--test-out: expected a file name"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto r = run(c.args);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("a diverging run exits 3 and names the epoch") {
  generate();
  fs::remove(path("diverged.json"));
  fs::remove(path("diverged.csv"));
  const auto r = run("train --train " + path("train.svm") +
                     " --model squared --step 1000 --epochs 3 --policy serial --json " +
                     path("diverged.json") + " --csv " + path("diverged.csv"));
  CHECK(r.code == 3);
  CHECK(r.err.find("epoch 1: training loss") != std::string::npos);
  CHECK(r.out.find("nan") == std::string::npos);
  // The reports of the failed run: its epochs up to the one that diverged.
  const auto json = nlohmann::json::parse(slurp(path("diverged.json")));
  CHECK(json["stopped"] == "diverged");
  CHECK(json["epochs"].size() == 2);
  const std::string csv = slurp(path("diverged.csv"));
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);  // the header, epochs 0 and 1
  // The diverged epoch's loss is an empty field, as the JSON's null.
  CHECK(csv.find("nan") == std::string::npos);
  CHECK(csv.find("inf") == std::string::npos);
  CHECK(json["epochs"][1]["train_loss"].is_null());
}

TEST_CASE("the CSV has the held-out examples' columns, as the JSON") {
  generate();
  const auto r = run("train --train " + path("train.svm") +
                     " --policy serial --epochs 2 --validation-fraction 0.2 --quiet --json " +
                     path("held.json") + " --csv " + path("held.csv"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto json = nlohmann::json::parse(slurp(path("held.json")));
  std::istringstream csv(slurp(path("held.csv")));
  std::string header, row;
  std::getline(csv, header);
  CHECK(header.ends_with(",validation_loss,validation_accuracy"));
  for (const auto& epoch : json["epochs"]) {
    REQUIRE(std::getline(csv, row));
    CHECK(row.ends_with(fmt::format(",{},{}", epoch["validation_loss"].get<double>(),
                                    epoch["validation_accuracy"].get<double>())));
  }
}

TEST_CASE("--help explains the options and exit codes") {
  const auto r = run("train --help");
  CHECK(r.code == 0);
  for (const char* option : {"--train", "--test", "--model", "--policy", "--threads", "--epochs",
                             "--step", "--decay", "--l2", "--seed", "--json", "Exit codes"}) {
    CHECK(r.out.find(option) != std::string::npos);
  }
}

TEST_CASE("every key of a report's config names an option of `train --help`") {
  generate();
  const auto help = run("train --help");
  REQUIRE(help.code == 0);
  for (const std::string args :
       {"--model hinge --delay const:1", "--model softmax --optimizer adam --batch 4",
        "--model softmax --optimizer rmsprop --step-schedule inverse",
        "--simulate 4 --clock virtual --sample-cost 2us --bounded-staleness 1 --batch 2"}) {
    CAPTURE(args);
    const auto r = run("train --train " + path("train.svm") + " --epochs 1 --quiet " + args +
                       " --json " + path("keys.json"));
    REQUIRE(r.code == 0);
    const auto config = nlohmann::json::parse(slurp(path("keys.json")))["config"];
    for (const auto& [key, value] : config.items()) {
      std::string option = key == "schedule_scale" ? "step-schedule-scale"
                           : key == "step_auto"    ? "step"
                                                   : key;
      std::replace(option.begin(), option.end(), '_', '-');
      CAPTURE(option);
      CHECK(help.out.find("  --" + option + " ") != std::string::npos);
    }
  }
}

TEST_CASE("a simulation in virtual time prints, reports and tabulates its virtual time") {
  generate();
  const auto r = run("train --train " + path("train.svm") +
                     " --simulate 4 --clock virtual --sample-cost 2us --worker-speed 0.5 "
                     "--bounded-staleness 0 --epochs 2 --csv " +
                     path("virtual.csv") + " --json " + path("virtual.json"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  // 1000 samples a worker and epoch; the half-speed worker's cost 4 us each paces them all.
  CHECK(r.out.find("virtual time: 0.008 s") != std::string::npos);
  CHECK(r.out.find("bounded staleness 0: workers waited for the slowest") != std::string::npos);
  const std::string csv = slurp(path("virtual.csv"));
  CHECK(csv.substr(0, csv.find('\n')).ends_with(",virtual_seconds"));
  const auto json = nlohmann::json::parse(slurp(path("virtual.json")));
  CHECK(json["final"]["virtual_seconds"].get<double>() == doctest::Approx(0.008));
  CHECK(json["config"]["clock"] == "virtual");
  CHECK(json["bounded_staleness"]["waits"].get<std::uint64_t>() > 0);
}

TEST_CASE("sweep refuses the report paths it names itself") {
  for (const char* option : {"--json", "--csv"}) {
    const auto r =
        run("sweep --out " + path("refused") + " --grid threads=1 --train x.svm " + option + " y");
    CHECK(r.code == 2);
    CHECK(r.err.find(std::string(option) + ": expected no report path, the sweep names them") !=
          std::string::npos);
  }
}

TEST_CASE("sweep runs a 2x2 grid, records a failed run, and resumes without rerunning") {
  generate();
  const auto out = work_dir() / "sweep";
  fs::remove_all(out);
  const std::string args = "sweep --out " + out.string() +
                           " --grid threads=1,2 --grid step=0.5,1e9 --train " + path("train.svm") +
                           " --epochs 2 --target-loss 0.6";
  const auto first = run(args);
  INFO(first.err);
  REQUIRE(first.code == 4);  // two runs failed
  std::size_t reports = 0;
  for (const auto& entry : fs::directory_iterator(out))
    reports += entry.path().extension() == ".json";
  CHECK(reports == 4);  // the two diverging runs leave theirs up to the epoch that diverged
  const std::string csv = slurp(out / "results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 5);  // header + 4 rows
  CHECK(csv.rfind("threads,step,status,error,", 0) == 0);
  CHECK(csv.find("1,0.5,ok,") != std::string::npos);
  CHECK(csv.find("2,1e9,failed (exit 3),") != std::string::npos);
  CHECK(csv.find("the run diverged") != std::string::npos);
  CHECK(csv.find(",threads=2__step=1e9.json\n") != std::string::npos);
  const auto diverged = nlohmann::json::parse(slurp(out / "threads=2__step=1e9.json"));
  CHECK(diverged["stopped"] == "diverged");
  CHECK(first.err.find("[4/4]") != std::string::npos);
  CHECK(first.err.find("ETA") != std::string::npos);

  // Resume: finished runs are skipped (their reports are not rewritten).
  const auto stamp = fs::last_write_time(out / "threads=1__step=0.5.json");
  const auto second = run(args);
  REQUIRE(second.code == 4);
  CHECK(second.err.find("threads=1__step=0.5: ok (existing report)") != std::string::npos);
  CHECK(fs::last_write_time(out / "threads=1__step=0.5.json") == stamp);
  CHECK(std::count(second.err.begin(), second.err.end(), '\n') == 5);

  // A 2x2 grid where every run succeeds gives 4 reports.
  const auto ok_out = work_dir() / "sweep_ok";
  fs::remove_all(ok_out);
  const auto ok = run("sweep --out " + ok_out.string() +
                      " --grid threads=1,2 --grid policy=racy,atomic --train " + path("train.svm") +
                      " --epochs 1");
  REQUIRE(ok.code == 0);
  reports = 0;
  for (const auto& entry : fs::directory_iterator(ok_out))
    reports += entry.path().extension() == ".json";
  CHECK(reports == 4);
  const std::string ok_csv = slurp(ok_out / "results.csv");
  CHECK(std::count(ok_csv.begin(), ok_csv.end(), '\n') == 5);
  CHECK(run("sweep --out " + ok_out.string() + " --grid threads").code == 2);
}

namespace {

// A small data set of its own for the sweep tests: each of them runs a few one-epoch trainings.
std::string small_data() {
  static bool done = false;
  const std::string file = path("small.svm");
  if (!done) {
    const auto r =
        run("gen sparse --rows 200 --features 50 --nnz-per-row 5 --seed 5 --out " + file);
    REQUIRE(r.code == 0);
    done = true;
  }
  return file;
}

std::size_t count_reports(const fs::path& dir) {
  std::size_t reports = 0;
  for (const auto& entry : fs::directory_iterator(dir))
    reports += entry.path().extension() == ".json";
  return reports;
}

}  // namespace

TEST_CASE("sweep refuses a checkpoint or a checkpoint to resume, which every run would share") {
  const auto out = work_dir() / "refused_checkpoint";
  const std::string ckpt = path("c.ckpt"), a = path("a.ckpt"), b = path("b.ckpt");
  for (const char* option : {"--checkpoint", "--resume"}) {
    for (const std::string form : {std::string(option) + " " + ckpt, option + ("=" + ckpt)}) {
      CAPTURE(form);
      const auto r = run("sweep --out " + out.string() + " --grid threads=1,2 --train " +
                         small_data() + " " + form);
      CHECK(r.code == 2);
      CHECK(r.err == std::string("hogwild: ") + option +
                         ": expected no checkpoint file, the runs would share it\n");
    }
  }
  // As grid keys too: with a second key, runs would share each value.
  const auto key = run("sweep --out " + out.string() + " --grid checkpoint=" + a + "," + b +
                       " --train " + small_data());
  CHECK(key.code == 2);
  CHECK(key.err.find("--checkpoint: expected no checkpoint file") != std::string::npos);
  const auto json = run("sweep --out " + out.string() + " --grid json=" + a + "," + b +
                        " --train " + small_data());
  CHECK(json.code == 2);
  CHECK(json.err.find("--json: expected no report path") != std::string::npos);
  CHECK(!fs::exists(out));  // refused before anything ran
}

TEST_CASE("sweep refuses an unknown grid key before any run") {
  const auto out = work_dir() / "unknown_key";
  const auto r = run("sweep --out " + out.string() + " --grid threads=1 --grid bogus=1,2 --train " +
                     small_data());
  CHECK(r.code == 2);
  CHECK(r.err == "hogwild: --grid: expected a train option as KEY, found 'bogus'\n");
  const auto config = work_dir() / "unknown_key.grid";
  std::ofstream(config) << "# keys\nthreads=1\n--no-such-option=a\n";
  const auto c = run("sweep --out " + out.string() + " --config " + config.string() + " --train " +
                     small_data());
  CHECK(c.code == 2);
  CHECK(c.err == "hogwild: " + config.string() +
                     ":3: expected a train option as KEY, found 'no-such-option'\n");
  CHECK(!fs::exists(out));
}

TEST_CASE("sweep exits 4 when a run failed and 0 when every run succeeded") {
  const auto out = work_dir() / "sweep_exit";
  fs::remove_all(out);
  const std::string args = "sweep --out " + out.string() + " --train " + small_data() +
                           " --epochs 1 --grid step=0.5,1e30";
  const auto r = run(args);
  CHECK(r.code == 4);
  CHECK(r.err.find("sweep: 2 runs, 1 failed") != std::string::npos);
  const std::string csv = slurp(out / "results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);  // results.csv still lists every run
  CHECK(csv.find("1e30,failed (exit 3),") != std::string::npos);
  CHECK(run(args).code == 4);  // the failed run is tried again, and fails again
  CHECK(run("sweep --out " + out.string() + " --train " + small_data() +
            " --epochs 1 --grid step=0.5")
            .code == 0);
  const auto help = run("sweep --help");
  CHECK(help.out.find("4 at least one run failed") != std::string::npos);
}

TEST_CASE("sweep names runs with long grid values by a prefix and a hash of the values") {
  const auto out = work_dir() / "sweep_long";
  fs::remove_all(out);
  // 13 keys: the values joined are longer than a file name may be.
  const std::string args =
      "sweep --out " + out.string() + " --train " + small_data() +
      " --epochs 1 --grid staleness-sample=0.01 --grid coherence-sample=0.01"
      " --grid divergence-factor=1000 --grid validation-fraction=0.1 --grid train-loss-sample=100"
      " --grid evals-per-epoch=1 --grid coherence-lag=1 --grid data-precision=f32"
      " --grid feature-order=frequency --grid batch-reduce=mean --grid sharding=static"
      " --grid replicate=auto --grid policy=racy,serial";
  const auto r = run(args);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().filename().string();
    CHECK(name.size() <= 205);
    CHECK(name.rfind("staleness-sample=0.01__coherence-sample=0.01__", 0) == 0);
    names.insert(name);
  }
  CHECK(names.size() == 2);
  const auto again = run(args);
  CHECK(again.code == 0);
  CHECK(std::count(again.err.begin(), again.err.end(), '\n') == 3);
  CHECK(again.err.find("ok (existing report)") != std::string::npos);
  CHECK(again.err.find(": ok (elapsed") == std::string::npos);
}

TEST_CASE(
    "sweep records a run as failed, without aborting, when the file system refuses its files") {
  const auto out = work_dir() / "sweep_blocked";
  fs::remove_all(out);
  // A link to itself where the first run's report goes: asking what is there fails.
  fs::create_directories(out);
  fs::create_symlink("threads=1.json", out / "threads=1.json");
  const auto r = run("sweep --out " + out.string() + " --train " + small_data() +
                     " --epochs 1 --grid threads=1,2");
  INFO(r.err);
  CHECK(r.code == 4);
  CHECK(r.err.find("[1/2] threads=1: failed: filesystem error: ") != std::string::npos);
  CHECK(r.err.find("Too many levels of symbolic links") != std::string::npos);
  CHECK(r.err.find("[2/2] threads=2: ok") != std::string::npos);
  const std::string csv = slurp(out / "results.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 3);
}

TEST_CASE("sweep reuses a report only when the run's arguments are the same") {
  const auto out = work_dir() / "sweep_args";
  fs::remove_all(out);
  const auto other = work_dir() / "small_other.svm";
  const auto gen =
      run("gen sparse --rows 100 --features 50 --nnz-per-row 5 --seed 6 --out " + other.string());
  REQUIRE(gen.code == 0);
  const auto report = out / "threads=1.json";
  const auto sweep = [&](const std::string& args) {
    return run("sweep --out " + out.string() + " --grid threads=1 " + args);
  };
  REQUIRE(sweep("--train " + small_data() + " --epochs 1").code == 0);
  CHECK(nlohmann::json::parse(slurp(report))["config"]["epochs"] == 1);
  const auto more = sweep("--train " + small_data() + " --epochs 2");
  REQUIRE(more.code == 0);
  CHECK(more.err.find("existing report") == std::string::npos);
  CHECK(nlohmann::json::parse(slurp(report))["config"]["epochs"] == 2);
  CHECK(slurp(out / "threads=1.args").ends_with("--epochs\n2\n--threads\n1\n"));
  const auto same = sweep("--train " + small_data() + " --epochs 2");
  CHECK(same.err.find("threads=1: ok (existing report)") != std::string::npos);
  const auto data = sweep("--train " + other.string() + " --epochs 2");
  CHECK(data.err.find("existing report") == std::string::npos);
  CHECK(nlohmann::json::parse(slurp(report))["dataset"]["rows"] == 100);
}

TEST_CASE("sweep gives grid values that clean to the same file name files of their own") {
  const auto out = work_dir() / "sweep_collide";
  fs::remove_all(out);
  // '+' and '@' both become '_' in a file name.
  const auto plus = work_dir() / "d+1.txt";
  const auto at = work_dir() / "d@1.txt";
  std::ofstream(plus) << "0\n";
  std::ofstream(at) << "2\n";
  const auto r = run("sweep --out " + out.string() + " --train " + small_data() +
                     " --epochs 1 --grid delay=trace:" + plus.string() + ",trace:" + at.string());
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.err.find("existing report") == std::string::npos);
  std::set<std::string> delays;
  for (const auto& entry : fs::directory_iterator(out)) {
    if (entry.path().extension() == ".json")
      delays.insert(nlohmann::json::parse(slurp(entry.path()))["config"]["delay"]);
  }
  CHECK(delays == std::set<std::string>{"trace:" + plus.string(), "trace:" + at.string()});
  CHECK(count_reports(out) == 2);
}

TEST_CASE("tools/plot turns a sweep CSV and reports into PNG figures") {
  generate();
  const auto out = work_dir() / "plot_sweep";
  fs::remove_all(out);
  REQUIRE(run("sweep --out " + out.string() +
              " --grid threads=1,2 --grid delay=none,const:4 --train " + path("train.svm") +
              " --epochs 2 --evals-per-epoch 3 --target-loss 0.65")
              .code == 0);
  const auto figures = work_dir() / "figures";
  fs::remove_all(figures);
  const std::string command =
      std::string(HOGWILD_SOURCE_DIR) + "/tools/plot " + (out / "results.csv").string() + " " +
      (out / "threads=2__delay=const_4.json").string() + " " +
      (out / "threads=2__delay=none.json").string() + " --out " + figures.string() + " >/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  const char* expected[] = {"loss_vs_time.png",
                            "loss_vs_updates.png",
                            "staleness.png",
                            "batch_size.png",
                            "coherence.png",
                            "results_final_train_loss.png",
                            "results_samples_per_second.png",
                            "results_normalised.png"};
  for (const char* name : expected) {
    CAPTURE(name);
    const auto file = figures / name;
    REQUIRE(fs::exists(file));
    CHECK(fs::file_size(file) > 5000);
    const std::string bytes = slurp(file);
    CHECK(bytes.substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  }
  // Input that is neither a report nor a sweep CSV: exit 2 with a message.
  std::ofstream(path("not_a_report.json")) << "{oops";
  CHECK(WEXITSTATUS(
            std::system((std::string(HOGWILD_SOURCE_DIR) + "/tools/plot " +
                         path("not_a_report.json") + " --out " + figures.string() + " 2>/dev/null")
                            .c_str())) == 2);
}

TEST_CASE("tools/plot draws fixed-time against fixed-minibatch curves and per-worker batches") {
  generate();
  const auto dir = work_dir() / "fixed_vs_time";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string reports;
  for (const char* schedule : {"fixed:4", "time:100us"}) {
    for (const char* speeds : {"", " --worker-speed 1,0.5"}) {
      const auto json =
          dir / (std::string(schedule).substr(0, 4) + (*speeds ? "-slow" : "") + ".json");
      const auto r = run("train --train " + path("train.svm") + " --threads 2 --epochs 2 " +
                         "--evals-per-epoch 3 --sharding dynamic --schedule " + schedule + speeds +
                         " --quiet --json " + json.string());
      INFO(r.err);
      REQUIRE(r.code == 0);
      reports += " " + json.string();
    }
  }
  const auto figures = dir / "figures";
  const std::string command = std::string(HOGWILD_SOURCE_DIR) + "/tools/plot" + reports +
                              " --out " + figures.string() + " >/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  for (const char* name : {"fixed_vs_time.png", "batch_per_worker.png"}) {
    CAPTURE(name);
    const auto file = figures / name;
    REQUIRE(fs::exists(file));
    CHECK(fs::file_size(file) > 5000);
    CHECK(slurp(file).substr(0, 8) == std::string("\x89PNG\r\n\x1a\n", 8));
  }
}

TEST_CASE(
    "train and predict read compressed files and standard input, and a truncated file exits 2") {
  generate();
  const std::string text = slurp(path("train.svm"));
  std::string packed(text.size() + text.size() / 100 + 700, '\0');
  auto size = static_cast<unsigned>(packed.size());
  REQUIRE(BZ2_bzBuffToBuffCompress(packed.data(), &size, const_cast<char*>(text.data()),
                                   static_cast<unsigned>(text.size()), 9, 0, 0) == BZ_OK);
  packed.resize(size);
  std::ofstream(path("train.data"), std::ios::binary) << packed;  // no telling name
  const auto piped = run("train --train - --epochs 2 --quiet --checkpoint " + path("model.ckpt") +
                             " --json " + path("piped.json"),
                         path("train.data"));
  INFO(piped.err);
  REQUIRE(piped.code == 0);
  CHECK(nlohmann::json::parse(slurp(path("piped.json")))["dataset"]["rows"] == 4000);
  const auto named = run("train --train " + path("train.data") + " --epochs 2 --quiet --json " +
                         path("named.json"));
  REQUIRE(named.code == 0);
  const auto predicted =
      run("predict --model " + path("model.ckpt") + " --data -", path("train.data"));
  REQUIRE(predicted.code == 0);
  CHECK(std::count(predicted.out.begin(), predicted.out.end(), '\n') == 4000);
  std::ofstream(path("cut.data"), std::ios::binary) << packed.substr(0, packed.size() / 3);
  const auto cut = run("train --train " + path("cut.data"));
  CHECK(cut.code == 2);
  CHECK(cut.err.find(path("cut.data") + ": expected a complete bzip2 stream, found it truncated") !=
        std::string::npos);
  const auto piped_cut = run("train --train -", path("cut.data"));
  CHECK(piped_cut.code == 2);
  CHECK(piped_cut.err.find("standard input: expected a complete bzip2 stream") !=
        std::string::npos);
}

TEST_CASE("0-based LIBSVM files as scikit-learn writes them: train, report, checkpoint, predict") {
  // Classes by the sign of feature 0 + feature 2, indices from 0.
  std::string text;
  for (int i = 0; i < 400; ++i) {
    const double a = (i % 7) - 3, b = (i % 5) - 2;
    text += fmt_row(a + b > 0 ? 1 : -1, a, b);
  }
  std::ofstream(path("zero.svm")) << text;
  const auto r =
      run("train --train " + path("zero.svm") + " --test " + path("zero.svm") +
          " --epochs 3 --quiet --json " + path("zero.json") + " --checkpoint " + path("zero.ckpt"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto report = nlohmann::json::parse(slurp(path("zero.json")));
  CHECK(report["dataset"]["zero_based"] == true);
  CHECK(report["dataset"]["features"] == 3);
  CHECK(report["test_dataset"]["zero_based"] == true);
  const auto predicted =
      run("predict --model " + path("zero.ckpt") + " --data " + path("zero.svm"));
  REQUIRE(predicted.code == 0);
  CHECK(predicted.err.find("accuracy") != std::string::npos);
  const auto told = run("train --train " + path("zero.svm") + " --zero-based no");
  CHECK(told.code == 2);
  CHECK(told.err.find(path("zero.svm") + ":1: expected a feature index >= 1") != std::string::npos);
  const auto bad = run("train --train " + path("zero.svm") + " --zero-based maybe");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--zero-based: expected auto, yes or no, found 'maybe'") != std::string::npos);
}
