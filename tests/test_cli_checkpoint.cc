// The command with checkpoints: SIGINT during `hogwild train --checkpoint` exits 130 with a
// valid checkpoint and a partial report (during an injected pause as well), `--resume` finishes
// with the uninterrupted serial run's weights, corrupt and mismatched checkpoints exit 2 (other
// training data of the same shape too), and `hogwild predict`.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli_support.h"
#include "hogwild/checkpoint.h"

namespace fs = std::filesystem;
using Result = hogwild::test::CliResult;
using hogwild::test::run;
using hogwild::test::slurp;
using hogwild::test::work_dir;
using Clock = std::chrono::steady_clock;

namespace {

std::string path(const std::string& name) { return (work_dir() / name).string(); }

std::vector<std::string> split(const std::string& args) {
  std::istringstream in(args);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Starts the command as a child with its output in files; returns its pid.
pid_t start(const std::string& args) {
  const auto words = split(args);
  const std::string out = path("child_stdout.txt");
  const std::string err = path("child_stderr.txt");
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv;
    std::string program = HOGWILD_CLI;
    argv.push_back(program.data());
    std::vector<std::string> copies = words;
    for (auto& w : copies) argv.push_back(w.data());
    argv.push_back(nullptr);
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) {
      ::_exit(99);
    }
    ::execv(program.c_str(), argv.data());
    ::_exit(98);
  }
  return pid;
}

// Waits for the child for up to `seconds`; its exit code, or -1 (killed after the timeout).
int wait_for(pid_t pid, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  int status = 0;
  while (Clock::now() < deadline) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// Polls until `file` exists, for up to `seconds`.
bool appears(const fs::path& file, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (fs::exists(file)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Polls until `file` holds `text`, for up to `seconds`.
bool holds(const fs::path& file, const std::string& text, double seconds) {
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (slurp(file.string()).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

void generate() {
  static bool done = false;
  if (done) return;
  auto r = run("gen sparse --rows 20000 --features 3000 --nnz-per-row 20 --seed 4 --out " +
               path("train.svm") + " --test-rows 2000 --test-out " + path("test.svm"));
  REQUIRE(r.code == 0);
  done = true;
}

std::string checkpoint_file_error(const std::string& args) {
  const auto r = run(args);
  CHECK(r.code == 2);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  return r.err;
}

}  // namespace

TEST_CASE(
    "SIGINT during train keeps a valid checkpoint and a partial report, and resume finishes "
    "with the uninterrupted serial run's weights") {
  generate();
  struct Setup {
    std::string name;
    std::string options;
  };
  // The linear trainer, and the model trainer with Adam's state.
  const Setup setups[] = {
      {"logistic", "--model logistic --step 0.5"},
      {"softmax", "--model softmax --optimizer adam --step 0.005 --batch 8"},
  };
  for (const auto& setup : setups) {
    CAPTURE(setup.name);
    const std::string base = "train --train " + path("train.svm") + " --test " + path("test.svm") +
                             " --policy serial --quiet --seed 7 " + setup.options;
    const fs::path ckpt = path(setup.name + ".ckpt");
    fs::remove(ckpt);
    // Far more epochs than run before the signal: the run is still going when it arrives.
    const pid_t pid = start(base + " --epochs 100000 --checkpoint " + ckpt.string() + " --json " +
                            path(setup.name + "_partial.json"));
    REQUIRE(appears(ckpt, 120));
    REQUIRE(::kill(pid, SIGINT) == 0);
    const int code = wait_for(pid, 120);
    INFO(slurp(path("child_stderr.txt")));
    REQUIRE(code == 130);
    const std::string err = slurp(path("child_stderr.txt"));
    CHECK(err.find("hogwild: interrupted by SIGINT after epoch ") != std::string::npos);

    // The checkpoint is whole, and the partial report says where the run stopped.
    const auto saved = hogwild::load_checkpoint(ckpt);
    CHECK(saved.epoch >= 1);
    CHECK(saved.model == setup.name);
    const auto partial = nlohmann::json::parse(slurp(path(setup.name + "_partial.json")));
    CHECK(partial["interrupted"] == true);
    CHECK(partial["epochs"].back()["epoch"] == saved.epoch);
    CHECK(err.find(ckpt.string() + " holds epoch " + std::to_string(saved.epoch)) !=
          std::string::npos);
    // No temporary file is left beside it.
    for (const auto& entry : fs::directory_iterator(work_dir())) {
      CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
    }

    // Resume to two epochs beyond, and compare with a run that never stopped.
    const int total = saved.epoch + 2;
    const fs::path resumed_ckpt = path(setup.name + "_resumed.ckpt");
    const fs::path whole_ckpt = path(setup.name + "_whole.ckpt");
    const auto resumed =
        run(base + " --epochs " + std::to_string(total) + " --resume " + ckpt.string() +
            " --checkpoint " + resumed_ckpt.string() + " --json " + path("resumed.json"));
    INFO(resumed.err);
    REQUIRE(resumed.code == 0);
    const auto whole = run(base + " --epochs " + std::to_string(total) + " --checkpoint " +
                           whole_ckpt.string() + " --json " + path("whole.json"));
    REQUIRE(whole.code == 0);
    const auto a = hogwild::load_checkpoint(resumed_ckpt);
    const auto b = hogwild::load_checkpoint(whole_ckpt);
    CHECK(a.epoch == total);
    CHECK(a.weights == b.weights);
    CHECK(a.optimizer_state == b.optimizer_state);
    const auto ra = nlohmann::json::parse(slurp(path("resumed.json")));
    const auto rb = nlohmann::json::parse(slurp(path("whole.json")));
    CHECK(ra["resumed_from"] == saved.epoch);
    CHECK(ra["final"]["train_loss"] == rb["final"]["train_loss"]);
    CHECK(ra["final"]["test_loss"] == rb["final"]["test_loss"]);
  }
}

TEST_CASE(
    "SIGINT while workers wait out an hour-long --pause stops the run as it stops any other") {
  generate();
  const fs::path ckpt = path("paused.ckpt");
  const std::string json = path("paused.json");
  fs::remove(ckpt);
  fs::remove(json);
  fs::remove(path("child_stdout.txt"));  // an earlier child's model line is not this one's
  // Every sample stalls for an hour: the first epoch never ends, so no checkpoint is written.
  const pid_t pid = start("train --train " + path("train.svm") +
                          " --quiet --seed 7 --step 0.5 --threads 2 --pause 1:3600s --epochs 3 "
                          "--checkpoint " +
                          ckpt.string() + " --json " + json);
  // The model line is printed once the run is set up, the signal handling with it.
  REQUIRE(holds(path("child_stdout.txt"), "model: ", 120));
  REQUIRE(::kill(pid, SIGINT) == 0);
  const int code = wait_for(pid, 120);
  const std::string err = slurp(path("child_stderr.txt"));
  INFO(err);
  REQUIRE(code == 130);
  CHECK(err.find("hogwild: interrupted by SIGINT after epoch 0; no epoch completed, " +
                 ckpt.string() + " not written by this run") != std::string::npos);
  CHECK_FALSE(fs::exists(ckpt));
  const auto partial = nlohmann::json::parse(slurp(json));
  CHECK(partial["interrupted"] == true);
  CHECK(partial["stopped"] == "interrupted");
  REQUIRE(partial["epochs"].size() == 1);
  CHECK(partial["epochs"][0]["epoch"] == 0);
}

TEST_CASE("corrupt, truncated, foreign and mismatched checkpoints exit 2 with one line") {
  generate();
  const std::string base = "train --train " + path("train.svm") + " --policy serial --quiet";
  const std::string good = path("good.ckpt");
  REQUIRE(run(base + " --epochs 2 --checkpoint " + good).code == 0);
  const std::string bytes = slurp(good);
  const auto write = [](const std::string& name, const std::string& text) {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  };
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x04;
  const std::string flipped_path = write("flipped.ckpt", flipped);
  CHECK(checkpoint_file_error(base + " --epochs 3 --resume " + flipped_path)
            .find("hogwild: " + flipped_path + ": expected CRC-32 ") != std::string::npos);
  const std::string cut = write("cut.ckpt", bytes.substr(0, bytes.size() - 100));
  CHECK(
      checkpoint_file_error(base + " --epochs 3 --resume " + cut).find("(the file is truncated)") !=
      std::string::npos);
  const std::string foreign = path("train.svm");
  CHECK(checkpoint_file_error(base + " --epochs 3 --resume " + foreign)
            .find("expected a hogwild checkpoint (magic 'HOGWCKPT')") != std::string::npos);
  CHECK(checkpoint_file_error(base + " --epochs 3 --step 0.25 --resume " + good)
            .find(good + ": expected --step 0.25 as in this run, found --step auto (it chose "
                         "0.5) in the checkpoint") != std::string::npos);
  CHECK(checkpoint_file_error(base + " --epochs 3 --model hinge --resume " + good)
            .find(good + ": expected a checkpoint of a hinge model (--model), found one of a "
                         "logistic model") != std::string::npos);
  const std::string small = write("small.svm", "1 1:1\n-1 2:1\n");
  CHECK(
      checkpoint_file_error("train --train " + small +
                            " --policy serial --quiet --epochs 3 --resume " + good)
          .find(good + ": expected features 2 (as in the training data and options), found 3000") !=
      std::string::npos);
  CHECK(checkpoint_file_error(base + " --epochs 3 --model softmax --resume " + good)
            .find("expected a checkpoint of a softmax model") != std::string::npos);
  CHECK(checkpoint_file_error(base + " --epochs 1 --resume " + good)
            .find("--epochs: expected at least the 2 epochs already done, found 1") !=
        std::string::npos);
  CHECK(checkpoint_file_error("predict --model " + flipped_path + " --data " + path("test.svm"))
            .find("the checkpoint is corrupt") != std::string::npos);
  // A checkpoint that cannot be written: exit 2 naming it, before training starts.
  CHECK(checkpoint_file_error(base + " --epochs 1 --checkpoint /nonexistent/dir/x.ckpt")
            .find("/nonexistent/dir/x.ckpt: cannot write: No such file or directory") !=
        std::string::npos);
}

TEST_CASE("predict writes one prediction per example and the accuracy of labelled data") {
  generate();
  const std::string model = path("predict.ckpt");
  const auto trained = run("train --train " + path("train.svm") + " --test " + path("test.svm") +
                           " --policy serial --quiet --epochs 3 --checkpoint " + model +
                           " --json " + path("predict.json"));
  REQUIRE(trained.code == 0);
  const auto r = run("predict --model " + model + " --data " + path("test.svm") + " --out " +
                     path("predictions.txt"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string text = slurp(path("predictions.txt"));
  CHECK(std::count(text.begin(), text.end(), '\n') == 2000);
  // Every line: a label and a probability; the labels agree with the test file's as often as
  // the trainer's final test accuracy says, and that accuracy is the one printed.
  std::istringstream lines(text);
  std::istringstream truth(slurp(path("test.svm")));
  std::size_t correct = 0, rows = 0;
  for (std::string line, test_line; std::getline(lines, line) && std::getline(truth, test_line);
       ++rows) {
    std::istringstream fields(line);
    double label = 0, probability = 0;
    fields >> label >> probability;
    CHECK((label == 1 || label == -1));
    CHECK((probability >= 0 && probability <= 1));
    correct += label == std::stod(test_line.substr(0, test_line.find(' ')));
  }
  CHECK(rows == 2000);
  const auto report = nlohmann::json::parse(slurp(path("predict.json")));
  const double accuracy = report["final"]["test_accuracy"];
  CHECK(static_cast<double>(correct) / static_cast<double>(rows) ==
        doctest::Approx(accuracy).epsilon(1e-12));
  char expected[64];
  std::snprintf(expected, sizeof expected, "accuracy %.2f%%", 100 * accuracy);
  CHECK(r.err.find(expected) != std::string::npos);

  // Extra features beyond the model's dimension are ignored.
  std::ofstream(path("wide.svm")) << "1 1:0.5 999999:1\n-1 2:1\n";
  const auto wide = run("predict --model " + model + " --data " + path("wide.svm"));
  CHECK(wide.code == 0);
  CHECK(std::count(wide.out.begin(), wide.out.end(), '\n') == 2);
  // Data of another kind, or labels the model never saw.
  std::ofstream(path("pairs.txt")) << "1 2\n3 4\n";
  CHECK(checkpoint_file_error("predict --model " + model + " --data " + path("pairs.txt"))
            .find(path("pairs.txt") + ":1: expected") != std::string::npos);
  std::ofstream(path("labels7.svm")) << "1 1:1\n7 2:1\n";
  CHECK(checkpoint_file_error("predict --model " + model + " --data " + path("labels7.svm"))
            .find("expected labels -1 or 1 (the training classes), found 7 in example 2") !=
        std::string::npos);

  // Factorisation: `user item` lines get a rating each; `user item rating` lines an RMSE.
  REQUIRE(run("gen ratings --users 60 --items 40 --rank 3 --density 0.3 --seed 2 --out " +
              path("r.txt"))
              .code == 0);
  const std::string mf = path("mf.ckpt");
  REQUIRE(run("train --format ratings --train " + path("r.txt") +
              " --policy serial --quiet --epochs 2 --checkpoint " + mf)
              .code == 0);
  const auto pairs = run("predict --model " + mf + " --data " + path("pairs.txt"));
  INFO(pairs.err);
  CHECK(pairs.code == 0);
  CHECK(std::count(pairs.out.begin(), pairs.out.end(), '\n') == 2);
  CHECK(pairs.err.find("rmse") == std::string::npos);
  const auto rated = run("predict --model " + mf + " --data " + path("r.txt"));
  CHECK(rated.code == 0);
  CHECK(rated.err.find("rmse ") != std::string::npos);
  std::ofstream(path("no_pairs.txt")) << "# none yet\n";
  const auto none = run("predict --model " + mf + " --data " + path("no_pairs.txt"));
  CHECK(none.code == 2);
  CHECK(none.err.find(path("no_pairs.txt") +
                      ":2: expected at least one example to predict, 'user item [rating]', found "
                      "only blank or comment lines") != std::string::npos);
}

TEST_CASE("resume: options free on resume may change, any other names its option") {
  generate();
  const std::string base = "train --train " + path("train.svm") + " --quiet";
  const std::string linear = path("free_linear.ckpt");
  REQUIRE(run(base + " --threads 1 --epochs 1 --checkpoint " + linear).code == 0);
  const auto changed = run(base +
                           " --threads 2 --epochs 2 --staleness-sample 0.5 "
                           "--coherence-sample 0.5 --coherence-lag 2 --evals-per-epoch 2 "
                           "--resume " +
                           linear);
  INFO(changed.err);
  CHECK(changed.code == 0);
  CHECK(
      checkpoint_file_error(base + " --threads 1 --epochs 2 --batch-reduce sum --resume " + linear)
          .find(linear + ": expected --batch-reduce sum as in this run, found mean in "
                         "the checkpoint") != std::string::npos);
  // A model option whose report key differs from its name.
  const std::string softmax = base + " --model softmax --policy serial --step-schedule inverse";
  const std::string model = path("free_softmax.ckpt");
  REQUIRE(run(softmax + " --step-schedule-scale 2 --epochs 1 --checkpoint " + model).code == 0);
  CHECK(checkpoint_file_error(softmax + " --step-schedule-scale 3 --epochs 2 --resume " + model)
            .find(model + ": expected --step-schedule-scale 3.0 as in this run, found 2.0 "
                          "in the checkpoint") != std::string::npos);
}

TEST_CASE("resume on other training data of the same shape exits 2 before training") {
  generate();
  // B: the training file with one value changed, the same rows, dimension and labels.
  std::string text = slurp(path("train.svm"));
  const auto nonzeros = static_cast<std::uint64_t>(std::count(text.begin(), text.end(), ':'));
  const auto colon = text.find(':', text.find('\n', text.size() / 2));
  REQUIRE(colon != std::string::npos);
  const auto end = text.find_first_of(" \n", colon);
  REQUIRE(text.substr(colon + 1, end - colon - 1) != "0.123");
  text.replace(colon + 1, end - colon - 1, "0.123");
  const std::string other = path("other.svm");
  std::ofstream(other, std::ios::binary) << text;
  const std::string options = " --policy serial --quiet --format libsvm";
  const std::string ck = path("data_a.ckpt");
  REQUIRE(
      run("train --train " + path("train.svm") + options + " --epochs 1 --checkpoint " + ck).code ==
      0);
  const auto stored = hogwild::load_checkpoint(ck).training_data;
  REQUIRE(stored);
  CHECK(stored->rows == 20000);
  CHECK(stored->entries == nonzeros);
  const std::string json = path("data_b.json");
  const auto refused = run("train --train " + other + options + " --epochs 2 --json " + json +
                           " --checkpoint " + ck + " --resume " + ck);
  CHECK(refused.code == 2);
  CHECK(std::count(refused.err.begin(), refused.err.end(), '\n') == 1);
  const std::string crc = fmt::format("{:08x}", stored->crc);
  const std::string counts = fmt::format("20000 rows, {} nonzeros, CRC-32 ", nonzeros);
  CHECK(refused.err.find(ck + ": expected the training data the checkpoint was written on (" +
                         counts + crc + "), found " + counts) != std::string::npos);
  CHECK(refused.err.find(" in " + other + "\n") != std::string::npos);
  CHECK(refused.err.find("CRC-32 " + crc + " in ") == std::string::npos);
  CHECK(refused.out.empty());  // before training: not even the data line
  CHECK(!fs::exists(json));
  CHECK(hogwild::load_checkpoint(ck).epoch == 1);  // the checkpoint is left as it was
  // On the data it was written on, it resumes, and the checkpoint it writes keeps the data's.
  const auto resumed = run("train --train " + path("train.svm") + options +
                           " --epochs 2 --checkpoint " + ck + " --resume " + ck);
  INFO(resumed.err);
  CHECK(resumed.code == 0);
  const auto after = hogwild::load_checkpoint(ck);
  CHECK(after.epoch == 2);
  CHECK(after.training_data == stored);
}
