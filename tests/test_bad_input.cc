// Bad input that the LIBSVM reader and the hogwild command reject (or, for CRLF, accept), case
// by case, with the exact message; the rows of docs/robustness.md that no other test checks.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "hogwild/error.h"
#include "hogwild/libsvm.h"
#include "sanitized.h"

namespace fs = std::filesystem;
using hogwild::InputError;
using hogwild::parse_libsvm;

namespace {

std::string error_of(const std::string& text) {
  try {
    (void)parse_libsvm(text, "bad.svm");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

fs::path work_dir() {
  static const fs::path dir = [] {
    auto d = fs::temp_directory_path() / ("hogwild_bad_input_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

std::string write(const char* name, const std::string& text) {
  const auto p = work_dir() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The command sits next to the tests directory of the same build tree (build/<preset>/hogwild).
fs::path cli() {
  std::error_code ec;
  const auto self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path{} : self.parent_path().parent_path() / "hogwild";
}

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result run(const std::string& args) {
  const auto out = work_dir() / "stdout.txt";
  const auto err = work_dir() / "stderr.txt";
  const std::string command =
      cli().string() + " " + args + " >" + out.string() + " 2>" + err.string() + " </dev/null";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// A command refused with exit 2 and one line of stderr holding `message`.
void check_refused(const std::string& args, const std::string& message) {
  CAPTURE(args);
  const auto r = run(args);
  CHECK(r.code == 2);
  CHECK(r.err.find("hogwild: " + message) != std::string::npos);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("reader: truncated lines, binary garbage, long tokens and CRLF line numbers") {
  // A file cut in the middle of a feature, before its colon.
  CHECK(error_of("1 1:0.5 2") == "bad.svm:1: expected index:value, found '2'");
  CHECK(error_of("1 1:0.5\n-1 2") == "bad.svm:2: expected index:value, found '2'");
  // Binary files: non-printable bytes are shown escaped, and the token is cut at 40 bytes.
  CHECK(error_of(std::string("\177ELF\002\001\001\000\000\000", 10)) ==
        "bad.svm:1: expected a numeric label, found '\\x7fELF\\x02\\x01\\x01\\x00\\x00\\x00'");
  CHECK(error_of(std::string(100, 'z')) ==
        "bad.svm:1: expected a numeric label, found '" + std::string(40, 'z') + "...'");
  // CRLF: the carriage return is whitespace, never part of a token, and lines count as usual.
  CHECK(error_of("1 1:1\r\n-1 2:x\r\n") ==
        "bad.svm:2: expected a numeric value for feature 2, found 'x'");
  const auto crlf = parse_libsvm("1 1:1\r\n-1 2:0.5\r\n\r\n", "crlf.svm");
  CHECK(crlf.rows() == 2);
  CHECK(crlf.values == std::vector<float>{1.0f, 0.5f});
  // A repeated index is reported as such, anywhere in the row.
  CHECK(error_of("1 1:1 2:1 2:1\n") ==
        "bad.svm:1: expected each feature index once per line, found 2 twice");
  CHECK(error_of("1 2:1 3:1 1:1\n") ==
        "bad.svm:1: expected feature indices in increasing order, found 1 after 3");
  // Signs and infinities in labels and indices.
  CHECK(error_of("inf 1:1\n") == "bad.svm:1: expected a finite label, found 'inf'");
  CHECK(error_of("1 +3:1\n") == "bad.svm:1: expected a positive integer feature index, found '+3'");
  CHECK(error_of("1 18446744073709551616:1\n") ==
        "bad.svm:1: expected a feature index <= 4294967295, found '18446744073709551616'");
  // The largest index is accepted: the reader does not guess how much memory training has.
  CHECK(parse_libsvm("1 4294967295:1\n", "max.svm").num_features == 4294967295u);
}

TEST_CASE("reader: an empty file on disk and a file of blank lines") {
  const std::string empty = write("empty.svm", "");
  const std::string message =
      empty + ":1: expected at least one example 'label index:value ...', found an empty file";
  CHECK_THROWS_WITH_AS(hogwild::read_libsvm(empty), message.c_str(), InputError);
  CHECK(error_of("\n\r\n  \n") ==
        "bad.svm:4: expected at least one example 'label index:value "
        "...', found only blank or comment lines");
}

TEST_CASE("command: bad data files exit 2 with the reader's message on one line") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string good = write("good.svm", "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n");
  struct Case {
    std::string args;
    std::string message;
  };
  const std::string empty = write("empty.svm", "");
  const std::string dup = write("dup.svm", "1 3:1 3:2\n");
  const std::string huge = write("huge.svm", "1 4294967296:1\n");
  const std::string negative = write("neg.svm", "1 -3:1\n");
  const std::string nan = write("nan.svm", "1 1:nan\n");
  const std::string garbage = write("garbage.bin", std::string("\177ELF\002\001", 6));
  const std::string three = write("three.svm", "1 1:1\n2 2:1\n-1 3:1\n");
  const std::string max = write("max.svm", "1 4294967295:1\n-1 1:1\n");
  const std::string dir = work_dir().string();
  const Case cases[] = {
      {"info " + empty,
       empty + ":1: expected at least one example 'label index:value ...', found an empty file"},
      {"train --train " + empty, empty + ":1: expected at least one example"},
      {"train --train " + good + " --test " + empty, empty + ":1: expected at least one example"},
      {"info " + dup, dup + ":1: expected each feature index once per line, found 3 twice"},
      {"info " + huge, huge + ":1: expected a feature index <= 4294967295, found '4294967296'"},
      {"info " + negative, negative + ":1: expected a positive integer feature index, found '-3'"},
      {"info " + nan, nan + ":1: expected a finite value for feature 1, found 'nan'"},
      {"info " + garbage, garbage + ":1: expected a numeric label, found '\\x7fELF\\x02\\x01'"},
      {"info " + dir, dir + ": cannot read: is a directory"},
      {"train --train " + dir, dir + ": cannot read: is a directory"},
      {"info /nonexistent/file.svm",
       "/nonexistent/file.svm: cannot open: No such file or directory"},
      {"train --train " + max,
       max + ": expected a model of at most 1073741824 parameters (--max-parameters), found the "
             "largest feature index 4294967295, which needs 4294967295 parameters (80.0 GiB)"},
      {"train --model softmax --train " + max,
       max + ": expected a model of at most 1073741824 parameters (--max-parameters), found the "
             "largest feature index 4294967295 and 2 classes"},
      {"train --train " + three,
       three + ":3: expected two label classes for a binary model, found a third, -1, "
               "after 1 and 2"},
      // Outputs are checked before the data is read: the missing training file is not reached.
      {"train --train /no/such/train.svm --json /no/such/dir/report.json",
       "/no/such/dir/report.json: cannot write: No such file or directory"},
      {"train --train /no/such/train.svm --csv " + dir, dir + ": cannot write: is a directory"},
      {"train --train /no/such/train.svm --checkpoint /no/such/dir/model.ckpt",
       "/no/such/dir/model.ckpt: cannot write: No such file or directory"},
      {"predict --model /no/such/model.ckpt --data " + good + " --out /no/such/dir/out.txt",
       "/no/such/dir/out.txt: cannot write: No such file or directory"},
  };
  for (const auto& c : cases) check_refused(c.args, c.message);
}

TEST_CASE("command: an output that is an input, another output or empty exits 2 before work") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string data = "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n";
  const std::string good = write("apart.svm", data);
  const std::string dir = work_dir().string();
  // The same file by another name: relative to the working directory, through "..", a link.
  fs::remove(work_dir() / "apart-link.svm");
  fs::create_symlink(good, work_dir() / "apart-link.svm");
  const std::string report = dir + "/apart.json";
  const std::string trace = write("apart-delays.txt", "0\n3\n1\n");
  const std::string report_again = dir + "/sub/../apart.json";
  fs::create_directories(work_dir() / "sub");
  struct Case {
    std::string args;
    std::string message;
  };
  const Case cases[] = {
      {"train --train " + good + " --json " + good,
       "--json: expected a file other than the --train file, found " + good +
           " (it would be overwritten)"},
      {"train --train " + good + " --test " + good + " --checkpoint " + dir + "/apart-link.svm",
       "--checkpoint: expected a file other than the --train file"},
      {"train --train " + good + " --json " + report + " --csv " + report_again,
       "--csv: expected a file other than the --json file, found " + report_again +
           " (one would be lost)"},
      {"train --train " + good + " --delay trace:" + trace + " --csv " + trace,
       "--csv: expected a file other than the --delay file, found " + trace +
           " (it would be overwritten)"},
      {"train --train " + good + " --resume " + report + " --json " + report,
       "--json: expected a file other than the --resume file"},
      {"predict --model " + report + " --data " + good + " --out " + good,
       "--out: expected a file other than the --data file"},
      {"gen sparse --rows 4 --test-rows 2 --out " + report + " --test-out " + report_again,
       "--test-out: expected a file other than the --out file"},
      {"train --train " + good + " --checkpoint ''",
       "--checkpoint: expected a file path, found an empty string"},
      {"train --train " + good + " --json ''",
       "--json: expected a file path, found an empty string"},
      {"train --train " + good + " --test ''",
       "--test: expected a file path, found an empty string"},
      {"predict --model '' --data " + good, "--model: expected a file path, found an empty string"},
      {"info ''", "file: expected a file path, found an empty string"},
      {"train --train - --test -",
       "--test: expected standard input (-) for one file, found it for --train too"},
      // "-" reads standard input; as an output it would create a file called "-".
      {"train --train " + good + " --json -",
       "--json: expected a file to write, found '-' (which names standard input; ./- is a file "
       "called -)"},
      {"train --train " + good + " --checkpoint -", "--checkpoint: expected a file to write"},
      {"gen sparse --rows 4 --out -", "--out: expected a file to write, found '-'"},
      // Counts beyond their type's range, which CLI11 reads as its largest value.
      {"gen sparse --rows 99999999999999999999999 --out " + report,
       "--rows: expected an integer in [0, 18446744073709551615], found "
       "'99999999999999999999999'"},
      {"gen sparse --rows -1 --out " + report, "--rows: expected a non-negative integer"},
      {"sweep --out - --grid threads=1 --train " + good,
       "--out: expected a directory to write, found '-'"},
      {"sweep --out " + dir + "/sweep --grid threads=1 --train " + good + " --target-accuracy 50",
       "--target-accuracy: expected a fraction in [0, 1] (0.9 for 90%), found '50'"},
      // Each run's options are checked as train checks them before the sweep starts one.
      {"sweep --out " + dir + "/sweep --grid threads=1,2 --epochs 1",
       "run threads=1: --train is required"},
      {"sweep --out " + dir + "/sweep --grid threads=1 --threads 2 --train " + good,
       "--grid: expected keys that no other argument gives, found --threads in both"},
      {"sweep --out " + dir + "/sweep --grid policy=racy,serial --threads 2 --train " + good,
       "run policy=serial: --threads: expected 1 with --policy serial (it runs one worker), found "
       "2"},
      {"sweep --out " + dir + "/sweep --grid step=0.1,abc --train " + good,
       "run step=abc: --step: expected a number or auto, found 'abc'"},
      {"sweep --out " + dir + "/sweep --grid threads=1,2 --train " + dir + "/missing.svm",
       "run threads=1: " + dir + "/missing.svm: cannot open: No such file or directory"},
      {"sweep --out " + dir + "/sweep --grid threads=1 --train -",
       "run threads=1: --train: expected a file, found '-' (standard input, which one run alone "
       "could read)"},
  };
  for (const auto& c : cases) {
    check_refused(c.args, c.message);
    CHECK(slurp(good) == data);
    CHECK_FALSE(fs::exists(report));
    CHECK_FALSE(fs::exists("-"));
    CHECK_FALSE(fs::exists(dir + "/sweep"));
  }
  CHECK(slurp(trace) == "0\n3\n1\n");
}

TEST_CASE("command: predict --out - writes standard output, as without --out") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string good = write("dash.svm", "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n");
  const std::string model = (work_dir() / "dash.ckpt").string();
  REQUIRE(run("train --quiet --epochs 2 --train " + good + " --checkpoint " + model).code == 0);
  const auto plain = run("predict --model " + model + " --data " + good);
  const auto dash = run("predict --model " + model + " --data " + good + " --out -");
  CHECK(plain.code == 0);
  CHECK(dash.code == 0);
  CHECK(std::count(dash.out.begin(), dash.out.end(), '\n') == 4);
  CHECK(dash.out == plain.out);
  CHECK_FALSE(fs::exists("-"));
}

TEST_CASE("command: predict takes LIBSVM rows without labels, not a file that mixes them") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string good = write("nolabels.svm", "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n");
  const std::string model = (work_dir() / "nolabels.ckpt").string();
  REQUIRE(run("train --quiet --epochs 2 --train " + good + " --checkpoint " + model).code == 0);
  // The same rows, their labels left out, between a comment and a blank line.
  const std::string bare = write("bare.svm", "# new examples\n1:1 2:0.5\n\n2:1 3:1\n1:2\n3:2\n");
  const auto labelled = run("predict --model " + model + " --data " + good);
  const auto unlabelled = run("predict --model " + model + " --data " + bare);
  INFO(unlabelled.err);
  REQUIRE(unlabelled.code == 0);
  CHECK(unlabelled.out == labelled.out);
  CHECK(labelled.err.find("accuracy") != std::string::npos);
  CHECK(unlabelled.err.find("accuracy") == std::string::npos);
  const std::string mixed = write("mixed.svm", "# new examples\n1:1 2:0.5\n\n1 2:1 3:1\n");
  check_refused("predict --model " + model + " --data " + mixed,
                mixed +
                    ":4: expected features only, as on line 2 (a file without labels), "
                    "found the label '1'");
  // A malformed example before the labelled one is the one named; a label that is not text is
  // shown escaped, not cut at its NUL byte.
  const std::string malformed_first = write("mixed3.svm", "1:0.5 2:x\n1 1:1\n");
  check_refused("predict --model " + model + " --data " + malformed_first,
                malformed_first + ":1: expected a numeric value for feature 2, found 'x'");
  const std::string nul_label = write("mixed4.svm", std::string("1:0.5 2:1\n") + '\0' + "1 1:1\n");
  check_refused("predict --model " + model + " --data " + nul_label,
                nul_label +
                    ":2: expected features only, as on line 1 (a file without labels), "
                    "found the label '\\x001'");
  check_refused("predict --model " + model + " --data " + good + " --labels " + good,
                "--labels: expected only with a model trained on IDX images, found a logistic "
                "model trained on libsvm data (its labels are in --data)");
  // IDX images (their magic 00 00 08 03) for a model trained on LIBSVM text.
  const std::string images = write("images.idx", std::string("\0\0\x08\x03"
                                                             "\0\0\0\x01"
                                                             "\0\0\0\x01"
                                                             "\0\0\0\x02"
                                                             "ab",
                                                             18));
  check_refused("predict --model " + model + " --data " + images,
                images +
                    ": expected LIBSVM text for this logistic model (trained on libsvm data), "
                    "found an IDX file");
  const std::string labels_first = write("mixed2.svm", "1 1:1\n2:1 3:1\n");
  check_refused("predict --model " + model + " --data " + labels_first,
                labels_first + ":2: expected a label before the features, found '2:1'");
  // A file without examples names the form predict takes, its label optional.
  const std::string empty = write("empty.svm", "");
  check_refused("predict --model " + model + " --data " + empty,
                empty +
                    ":1: expected at least one example to predict, '[label] index:value ...', "
                    "found an empty file");
  const std::string blank = write("blank.svm", "# nothing yet\n\n");
  check_refused("predict --model " + model + " --data " + blank,
                blank +
                    ":3: expected at least one example to predict, '[label] index:value ...', "
                    "found only blank or comment lines");
}

TEST_CASE("command: --checkpoint refuses a FIFO and writes through a link to its target") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string good = write("fifo.svm", "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n");
  const auto fifo = work_dir() / "model.fifo";
  fs::remove(fifo);
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // A reader holds the FIFO open, so that a check which opened it for writing would go on
  // (and the run replace it) instead of waiting for one.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  const auto refused = run("train --train " + good + " --epochs 1 --checkpoint " + fifo.string());
  ::close(reader);
  CHECK(refused.code == 2);
  CHECK(refused.err ==
        "hogwild: " + fifo.string() + ": cannot write: expected a regular file, found a FIFO\n");
  CHECK(fs::is_fifo(fifo));

  const auto target = work_dir() / "target.ckpt";
  const auto link = work_dir() / "link.ckpt";
  fs::remove(target);
  fs::remove(link);
  fs::create_symlink(target.filename(), link);
  const auto saved =
      run("train --train " + good + " --epochs 2 --quiet --checkpoint " + link.string());
  INFO(saved.err);
  CHECK(saved.code == 0);
  CHECK(fs::is_symlink(link));
  CHECK(slurp(target).substr(0, 8) == "HOGWCKPT");
  const auto resumed = run("train --train " + good + " --epochs 3 --quiet --checkpoint " +
                           link.string() + " --resume " + link.string());
  CHECK(resumed.code == 0);
  CHECK(fs::is_symlink(link));
}

TEST_CASE("command: output that does not reach standard output exits 2") {
  if (!fs::exists(cli()) || !fs::exists("/dev/full")) {
    MESSAGE("the hogwild command or /dev/full is missing; skipped");
    return;
  }
  const std::string good = write("full.svm", "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n");
  const auto err = work_dir() / "full-stderr.txt";
  for (const std::string args : {"info " + good, "train --epochs 1 --train " + good}) {
    CAPTURE(args);
    const std::string command = cli().string() + " " + args + " >/dev/full 2>" + err.string();
    const int status = std::system(command.c_str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(slurp(err).find("hogwild: standard output: cannot write: No space left on device\n") !=
          std::string::npos);
  }
}

TEST_CASE("command: CRLF files are accepted, --threads 0 means every core, 16 means 16") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string crlf = write("crlf.svm", "1 1:1 2:0.5\r\n-1 2:1 3:1\r\n1 1:2\r\n-1 3:2\r\n");
  const auto info = run("info " + crlf);
  CHECK(info.code == 0);
  CHECK(info.out.find("rows:            4") != std::string::npos);
  const auto r = run("train --train " + crlf + " --epochs 1 --threads 0");
  INFO(r.err);
  CHECK(r.code == 0);
  // More threads than cores: what was asked for, without oneTBB's warning about its limit.
  const auto many = run("train --train " + crlf + " --epochs 1 --threads 16");
  CHECK(many.code == 0);
  CHECK(many.err.find("TBB") == std::string::npos);
  CHECK(many.out.find("threads: 16") != std::string::npos);
}

TEST_CASE("command: options out of range or unparsable exit 2 and name the option") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string good = write("good.svm", "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n");
  struct Case {
    std::string args;
    std::string message;
  };
  const Case cases[] = {
      {"--epochs -1", "--epochs: expected at least 1, found -1"},
      {"--step -1", "--step: expected a finite step size > 0, found -1"},
      {"--step nan", "--step: expected a finite step size > 0, found nan"},
      {"--step inf", "--step: expected a finite step size > 0, found inf"},
      {"--decay nan", "--decay: expected a factor in (0, 1], found nan"},
      {"--l2 nan", "--l2: expected a finite strength >= 0, found nan"},
      {"--delay nope", "--delay: expected none, const:S, uniform:S, geometric:P[:CAP]"},
      {"--threads abc", "--threads: expected an integer, found 'abc'"},
      {"--epochs abc", "--epochs: expected an integer, found 'abc'"},
      {"--step x", "--step: expected a number or auto, found 'x'"},
      {"--step 1e", "--step: expected a number or auto, found '1e'"},
      {"--patience -1", "--patience: expected a count of epochs >= 0 (0 = off), found -1"},
      {"--patience 2 --tol -1", "--tol: expected a finite improvement >= 0, found -1"},
      {"--patience 2 --tol nan", "--tol: expected a finite improvement >= 0, found nan"},
      {"--validation-fraction 0.7",
       "--validation-fraction: expected a fraction in [0, 0.5] (0 = none), found 0.7"},
      {"--validation-fraction x", "--validation-fraction"},
      {"--seed abc", "--seed: expected a non-negative integer, found 'abc'"},
      {"--seed -3", "--seed: expected a non-negative integer, found '-3'"},
      {"--train-loss-sample -1",
       "--train-loss-sample: expected a non-negative integer, found '-1'"},
      {"--train-loss-sample 0.5", "--train-loss-sample: expected a non-negative integer"},
      {"--limit -1", "--limit: expected a non-negative integer, found '-1'"},
      {"--seed 1180591620717411303424",
       "--seed: expected an integer in [0, 18446744073709551615], found '1180591620717411303424'"},
      {"--epochs 99999999999999999999",
       "--epochs: expected an integer in [-2147483648, 2147483647], found "
       "'99999999999999999999'"},
      {"--replicate abc",
       "--replicate: expected off, auto or a count of samples between merges, found 'abc'"},
      {"--replicate 0", "--replicate: expected off, auto or a count of samples between merges"},
      {"--replicate 64 --delay const:2", "--replicate: expected off or auto with --delay"},
      {"--hot-features -1",
       "--hot-features: expected a count of features in [0, 2147483648], found '-1'"},
      {"--hot-features 64 --replicate off", "--hot-features: expected 0 with --replicate off"},
      {"--average mean", "--average: expected epochs or off, found 'mean'"},
      {"--clock virtual", "--clock: expected rounds without --simulate"},
      {"--delay const:2 --delay-unit global", "--delay-unit: expected own without --simulate"},
      {"--simulate 2 --delay-unit steps", "--delay-unit: expected own or global, found 'steps'"},
      {"--simulate 2 --clock sometimes", "--clock: expected rounds or virtual, found 'sometimes'"},
      {"--simulate 2 --clock virtual --sample-cost 0us", "--sample-cost"},
      {"--simulate 2 --clock virtual --sample-cost fast", "--sample-cost"},
      {"--simulate 2 --clock virtual --worker-speed 1,1,0.5",
       "--worker-speed: expected at most 2 speeds, one per virtual worker, found 3"},
      {"--simulate 2 --bounded-staleness 1",
       "--bounded-staleness: expected --clock virtual with --simulate"},
      {"--bounded-staleness 2 --delay const:1", "--bounded-staleness: expected no --delay"},
      {"--bounded-staleness -2", "--bounded-staleness: expected a bound in [0, 1048576]"},
      {"--write-latency 5us", "--write-latency: expected only with --simulate K --clock virtual"},
      {"--simulate 2 --read-latency 5us",
       "--read-latency: expected only with --simulate K --clock virtual"},
      {"--simulate 2 --clock virtual --write-latency -5us", "--write-latency: expected a positive"},
      {"--simulate 2 --clock virtual --read-latency soon", "--read-latency: expected a positive"},
      {"--simulate 2 --clock virtual --write-latency 2h", "--write-latency: expected a positive"},
      {"--simulate 2 --clock virtual --write-latency 1us --bounded-staleness 1",
       "--bounded-staleness: expected no --write-latency"},
      {"--order blocks:0",
       "--order: expected rows, blocks or blocks:B with B in [1, 16777216], "
       "found 'blocks:0'"},
      {"--order shuffled", "--order: expected rows, blocks or blocks:B"},
      {"--order blocks:12x", "--order: expected rows, blocks or blocks:B"},
      {"--model softmax --replicate 64",
       "--replicate: expected off or auto for softmax on LIBSVM data (its updates touch a few "
       "rows), found 64"},
      {"--model softmax --hot-features 64", "--hot-features: expected only with the linear models"},
      {"--model softmax --average epochs", "--average: expected only with the linear models"},
      {"--data-precision f8", "--data-precision: expected f32, f16 or u8, found 'f8'"},
      {"--feature-order sorted", "--feature-order: expected frequency or given, found 'sorted'"},
      {"--model softmax --feature-order given",
       "--feature-order: expected only with the linear models"},
      {"--weights f16", "--weights: expected f32 or bf16, found 'f16'"},
      {"--model softmax --weights bf16", "--weights: expected only with the linear models"},
      {"--weights bf16 --policy striped", "--weights: expected f32 with --policy striped"},
      {"--weights bf16 --delay uniform:4", "--weights: expected f32 with --delay"},
      {"--weights bf16 --replicate 256", "--replicate: expected off or auto with --weights bf16"},
      {"--model softmax --data-precision f16",
       "--data-precision: expected only with the linear models"},
      {"--replicate 64 --hot-features 2 --data-precision u8",
       "--data-precision: expected f32 with --hot-features"},
      {"--model softmax --order blocks:0", "--order: expected rows, blocks or blocks:B"},
      {"--max-parameters 2",
       "good.svm: expected a model of at most 2 parameters "
       "(--max-parameters), found the largest feature index 3, which "
       "needs 3 parameters"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto r = run("train --train " + good + " " + c.args);
    CHECK(r.code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("command: an option the run does not use is refused, naming what it needs") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string good = write("unused.svm", "1 1:1 2:0.5\n-1 2:1 3:1\n1 1:2\n-1 3:2\n");
  struct Case {
    std::string args;
    std::string message;
  };
  // Each option beside one that makes it apply, then without.
  const std::string softmax = "--model softmax --epochs 1";
  const Case cases[] = {
      {"--momentum 0.5",
       "--momentum: expected only with --optimizer momentum or nesterov, found "
       "--optimizer sgd"},
      {softmax + " --optimizer nesterov --momentum 0.5", ""},
      {softmax + " --optimizer adam --momentum 0.5",
       "--momentum: expected only with --optimizer momentum or nesterov, found --optimizer adam"},
      {softmax + " --optimizer rmsprop --rho 0.5 --epsilon 1e-6", ""},
      {softmax + " --optimizer adam --rho 0.5",
       "--rho: expected only with --optimizer rmsprop, found --optimizer adam"},
      {softmax + " --optimizer adam --beta1 0.5 --beta2 0.9", ""},
      {softmax + " --optimizer adagrad --beta2 0.9",
       "--beta2: expected only with --optimizer adam, found --optimizer adagrad"},
      {softmax + " --epsilon 1e-6",
       "--epsilon: expected only with --optimizer adagrad, rmsprop or adam, found --optimizer sgd"},
      {"--epochs 1 --decay 0.5", ""},
      {"--step-schedule inverse --decay 0.5",
       "--decay: expected only with --step-schedule epoch, found --step-schedule inverse"},
      {"--epochs 1 --step-schedule inverse-sqrt --step-schedule-scale 2", ""},
      {"--step-schedule-scale 2",
       "--step-schedule-scale: expected only with --step-schedule "
       "inverse or inverse-sqrt, found --step-schedule epoch"},
      {"--epochs 1 --step-schedule plateau --plateau-patience 1 --plateau-factor 0.5 "
       "--plateau-threshold 0.01",
       ""},
      {"--plateau-factor 0.5",
       "--plateau-factor: expected only with --step-schedule plateau, found --step-schedule epoch"},
      {"--plateau-patience 3", "--plateau-patience: expected only with --step-schedule plateau"},
      {"--plateau-threshold 0.1",
       "--plateau-threshold: expected only with --step-schedule plateau"},
      {"--epochs 1 --patience 1 --tol 0.1", ""},
      {"--tol 0.1", "--tol: expected only with --patience above 0"},
      {"--epochs 1 --coherence-sample 0.5 --coherence-lag 2", ""},
      {"--coherence-sample 0 --coherence-lag 2",
       "--coherence-lag: expected only with --coherence-sample above 0"},
      {"--batch 2 --coherence-sample 0.5",
       "--coherence-sample: expected only with single-sample updates for the linear models "
       "(their minibatches keep no gradient to compare), found --schedule fixed:2"},
      {"--threads 2 --worker-speed 1,0.5 --coherence-sample 0.5",
       "--coherence-sample: expected only with single-sample updates for the linear models"},
      {"--epochs 1 --schedule time:1ms --max-batch 2", ""},
      {"--batch 2 --max-batch 2",
       "--max-batch: expected only with --schedule time:W (the windows it closes), found "
       "--schedule fixed:2"},
      {"--train-labels " + good, "--train-labels: expected only with --format idx"},
      {"--test-labels " + good, "--test-labels: expected only with --format idx"},
      {"--epochs 1 --zero-based no", ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto r = run("train --quiet --train " + good + " " + c.args);
    INFO(r.err);
    if (c.message.empty()) {
      CHECK(r.code == 0);
      continue;
    }
    CHECK(r.code == 2);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("command: values a --data-precision cannot hold exit 2 naming the file") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  const std::string negative = write("negative.svm", "1 1:1 2:-0.5\n-1 2:1 3:1\n");
  const std::string huge = write("huge.svm", "1 1:1 2:70000\n-1 2:1 3:1\n");
  const auto u8 = run("train --train " + negative + " --data-precision u8");
  CHECK(u8.code == 2);
  CHECK(u8.err.find(negative + ": expected values >= 0 for --data-precision u8") !=
        std::string::npos);
  const auto f16 = run("train --train " + huge + " --data-precision f16");
  CHECK(f16.code == 2);
  CHECK(f16.err.find(huge + ": expected values within +-65504 for --data-precision f16") !=
        std::string::npos);
  CHECK(run("train --train " + negative + " --data-precision f16 --epochs 1 --quiet").code == 0);
}

TEST_CASE("command: a size no allocation could hold exits 1, out of memory, in one line") {
  if (!fs::exists(cli())) {
    MESSAGE("the hogwild command is not built (HOGWILD_BUILD_TOOLS=OFF); skipped");
    return;
  }
  // The sanitizers' allocators abort on such a request rather than fail it.
  if (hogwild::test::kSanitized) return;
  const auto r = run("gen sparse --rows 9223372036854775807 --out " +
                     (work_dir() / "unallocatable.svm").string());
  CHECK(r.code == 1);
  CHECK(r.err == "hogwild: out of memory\n");
  CHECK_FALSE(fs::exists(work_dir() / "unallocatable.svm"));
}
