// Golden reports: deterministic runs (serial, one worker, simulated) of every model, loss,
// policy, delay spec, schedule, optimiser, replicas and resume, whose JSON reports must stay
// the same byte for byte, timing fields aside. A redesign of the training path proves with
// them that it changed no result.
//
// The reports are the Release build's (-O3, -march=native on an x86-64 with AVX2 and FMA);
// other optimisation levels and instruction sets round the dense models' sums differently, so
// the test is built in Release builds with HOGWILD_NATIVE only (tests/CMakeLists.txt). On a
// machine with AVX-512, Eigen's products for softmax and the MLP use its wider vectors and sum
// in another order: there those reports must match every number to a relative 1e-6 and the
// rest exactly (tolerant_match), every other report still byte for byte.
//
// HOGWILD_UPDATE_GOLDEN=1 rewrites tests/golden/ from the current build (only when a change of
// results is intended; the commit then says which and why).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "cli_support.h"
#include "idx_support.h"
#include "test_support.h"

namespace fs = std::filesystem;
using hogwild::test::run;
using hogwild::test::slurp;
using hogwild::test::work_dir;

namespace {

std::string path(const std::string& name) { return (work_dir() / name).string(); }

// Gzip IDX images and labels under the standard names, in the scratch directory.
void write_idx(const std::string& prefix, std::size_t n, std::uint64_t seed) {
  hogwild::test::write_idx(work_dir(), prefix, n, seed);
}

// The data every case trains on, made once per process from fixed seeds.
void make_data() {
  static const bool made = [] {
    const auto sparse =
        run("gen sparse --rows 1500 --features 400 --nnz-per-row 16 --zipf 1.1 --noise 0.05 "
            "--seed 7 --out " +
            path("s.svm") + " --test-rows 300 --test-out " + path("s_test.svm"));
    REQUIRE_MESSAGE(sparse.code == 0, sparse.err);
    // Beyond 65,536 features (the training rows keep 32-bit indices), and binary data (one-hot
    // fields: no values stored) in a small and a large dimension.
    const auto wide =
        run("gen sparse --rows 1500 --features 70000 --nnz-per-row 16 --zipf 1.1 --noise 0.05 "
            "--seed 8 --out " +
            path("w.svm") + " --test-rows 300 --test-out " + path("w_test.svm"));
    REQUIRE_MESSAGE(wide.code == 0, wide.err);
    const auto binary =
        run("gen ctr --rows 1500 --fields 8 --categories 300 --features 1000 --positive-rate 0.3 "
            "--seed 5 --out " +
            path("c.svm") + " --test-rows 300 --test-out " + path("c_test.svm"));
    REQUIRE_MESSAGE(binary.code == 0, binary.err);
    const auto binary_wide = run(
        "gen ctr --rows 1500 --fields 8 --categories 3000 --features 100000 --positive-rate 0.3 "
        "--seed 6 --out " +
        path("cw.svm") + " --test-rows 300 --test-out " + path("cw_test.svm"));
    REQUIRE_MESSAGE(binary_wide.code == 0, binary_wide.err);
    // Hashing sums colliding categories (values of 2): every value becomes 1.
    for (const char* name : {"c.svm", "c_test.svm", "cw.svm", "cw_test.svm"}) {
      const std::string text = slurp(path(name));
      std::ofstream(path(name)) << std::regex_replace(text, std::regex(":[0-9.]+"), ":1");
    }
    const auto ratings = run(
        "gen ratings --users 150 --items 80 --rank 3 --density 0.2 --noise 0.3 --seed 4 --out " +
        path("r.txt") + " --test-out " + path("r_test.txt") + " --test-fraction 0.1");
    REQUIRE_MESSAGE(ratings.code == 0, ratings.err);
    write_idx("train", 600, 1);
    write_idx("t10k", 150, 2);
    std::ofstream(path("trace.txt")) << "0\n3\n1\n7\n2\n0\n5\n";
    return true;
  }();
  (void)made;
}

// Scratch paths in string values, written relative to the scratch directory.
void relative_paths(nlohmann::ordered_json& j) {
  if (j.is_structured()) {
    for (auto& e : j) relative_paths(e);
  } else if (j.is_string()) {
    const std::string dir = work_dir().string() + "/";
    auto s = j.get<std::string>();
    for (std::size_t at; (at = s.find(dir)) != std::string::npos;) s.replace(at, dir.size(), "");
    j = s;
  }
}

// The report without its timing keys (test::strip_timings) and with scratch paths written
// relative to the scratch directory.
void normalise(nlohmann::ordered_json& j) {
  hogwild::test::strip_timings(j);
  relative_paths(j);
}

struct Case {
  std::string name;
  std::string args;              // after `train`; `@NAME` is a file in the scratch directory
  std::string resume_args = {};  // when set: a second run resuming the first's checkpoint
};

const std::string kSparse = " --train @s.svm --test @s_test.svm";
const std::string kWide = " --train @w.svm --test @w_test.svm";
const std::string kBinary = " --train @c.svm --test @c_test.svm";
const std::string kBinaryWide = " --train @cw.svm --test @cw_test.svm";
const std::string kIdx =
    " --format idx --train @train-images-idx3-ubyte.gz --test @t10k-images-idx3-ubyte.gz";
const std::string kRatings = " --format ratings --train @r.txt --test @r_test.txt";
const std::string kMfWas = " --l2 0.02 --step-schedule epoch";

const std::vector<Case> kCases = {
    {"logistic_serial", kSparse + " --model logistic --policy serial --epochs 3 --step 0.5"},
    {"hinge_serial_rows",
     kSparse + " --model hinge --policy serial --epochs 3 --step 0.5 --order rows"},
    {"squared_serial_l2",
     kSparse + " --model squared --policy serial --l2 0.001 --epochs 3 --step 0.5 --average off"},
    {"squared_average_resume",
     kSparse + " --model squared --simulate 2 --epochs 2 --step 0.5 --checkpoint @sq.ckpt",
     kSparse + " --model squared --simulate 2 --epochs 4 --step 0.5 --checkpoint @sq.ckpt "
               "--resume @sq.ckpt"},
    {"logistic_binary_serial_l2", kBinary + " --policy serial --l2 0.001 --epochs 3 --step 0.5"},
    {"logistic_binary_simulate_batch", kBinary + " --simulate 2 --batch 8 --epochs 2 --step 0.5"},
    {"logistic_binary_wide_replicas",
     kBinaryWide + " --policy racy --threads 1 --replicate 64 --epochs 2 --step 0.5"},
    {"hinge_wide_simulate_delay",
     kWide + " --model hinge --simulate 2 --delay const:4 --epochs 2 --step 0.5"},
    {"logistic_racy_one_thread", kSparse + " --policy racy --threads 1 --epochs 2 --step 0.5"},
    {"logistic_atomic_one_thread", kSparse + " --policy atomic --threads 1 --epochs 2 --step 0.5"},
    {"logistic_striped_one_thread",
     kSparse + " --policy striped --threads 1 --epochs 2 --step 0.5 --order blocks:32"},
    {"logistic_locked_one_thread", kSparse + " --policy locked --threads 1 --epochs 2 --step 0.5"},
    {"logistic_replicas",
     kSparse + " --policy racy --threads 1 --replicate 64 --epochs 2 --step 0.5"},
    {"logistic_simulate_const",
     kSparse + " --simulate 4 --delay const:8 --staleness-sample 1 --coherence-sample 0.2 "
               "--epochs 3 --step 0.5"},
    {"logistic_simulate_uniform",
     kSparse +
         " --simulate 8 --delay uniform:16 --order rows --epochs 2 --step 0.5 --evals-per-epoch 3"},
    {"hinge_simulate_geometric",
     kSparse + " --model hinge --simulate 2 --delay geometric:0.2:32 --epochs 2 --step 0.5"},
    {"logistic_serial_loss_sample",
     kSparse + " --policy serial --epochs 3 --step 0.5 --train-loss-sample 300"},
    {"logistic_serial_trace",
     kSparse + " --policy serial --delay trace:@trace.txt --epochs 2 --step 0.5"},
    {"logistic_serial_batch_sum",
     kSparse + " --policy serial --schedule fixed:16 --batch-reduce sum --epochs 2 --step 0.5"},
    {"logistic_simulate_batch_delay", kSparse + " --simulate 4 --schedule fixed:8 --delay const:2 "
                                                "--staleness-sample 1 --epochs 2 --step 0.5"},
    {"logistic_simulate_global_delay",
     kSparse + " --simulate 8 --delay uniform:16 --delay-unit global --staleness-sample 1 "
               "--epochs 2 --step 0.5"},
    {"logistic_virtual_time_ssp",
     kSparse + " --simulate 8 --clock virtual --sample-cost 700ns --schedule time:6us "
               "--worker-speed 0.25,1,0.5 --straggler shifted-exp:100ns:300ns --pause 0.01:20us "
               "--bounded-staleness 2 --staleness-sample 1 --epochs 2 --step 0.5"},
    {"logistic_virtual_time_latency",
     kSparse + " --simulate 16 --clock virtual --sample-cost 700ns --schedule fixed:4 "
               "--read-latency 2us --write-latency 9us --straggler shifted-exp:100ns:300ns "
               "--delay uniform:3 --delay-unit global --staleness-sample 1 --epochs 2 --step 0.5"},
    {"logistic_resume", kSparse + " --policy serial --epochs 2 --step 0.5 --checkpoint @lin.ckpt",
     kSparse + " --policy serial --epochs 4 --step 0.5 --checkpoint @lin.ckpt --resume @lin.ckpt"},
    {"softmax_libsvm_serial",
     kSparse + " --model softmax --policy serial --epochs 2 --step 0.1 --batch 16"},
    {"softmax_idx_adam",
     kIdx + " --model softmax --optimizer adam --policy serial --epochs 2 --step 0.001"},
    {"softmax_idx_adagrad_simulate", kIdx + " --model softmax --optimizer adagrad --simulate 3 "
                                            "--delay uniform:4 --epochs 2 --step 0.05"},
    {"softmax_idx_rmsprop_inverse",
     kIdx + " --model softmax --optimizer rmsprop --step-schedule inverse --policy serial "
            "--epochs 2 --step 0.001"},
    {"mlp_sgd_serial",
     kIdx + " --model mlp --hidden 8 --policy serial --epochs 2 --step 0.2 --optimizer sgd"},
    {"mlp_momentum_simulate",
     kIdx + " --model mlp --hidden 8,4 --optimizer momentum --simulate 4 --delay const:3 "
            "--staleness-sample 1 --coherence-sample 0.2 --epochs 2 --step 0.019999999999999997"},
    {"mlp_simulate_global_delay",
     kIdx + " --model mlp --hidden 8 --optimizer adam --simulate 4 --delay const:6 "
            "--delay-unit global --staleness-sample 1 --epochs 2 --step 0.001"},
    {"mlp_virtual_time_straggler",
     kIdx + " --model mlp --hidden 8 --optimizer sgd --simulate 4 --clock virtual --batch 4 "
            "--worker-speed 0.5 --staleness-sample 1 --epochs 2 --step 0.2"},
    {"mlp_virtual_time_latency",
     kIdx + " --model mlp --hidden 8 --optimizer adam --simulate 6 --clock virtual "
            "--read-latency 1500ns --write-latency 4us --delay const:1 --schedule time:3us "
            "--staleness-sample 1 --epochs 2 --step 0.01"},
    {"mlp_nesterov_clip",
     kIdx +
         " --model mlp --hidden 6 --optimizer nesterov --clip-norm 1 --step-schedule "
         "inverse-sqrt --policy serial --epochs 2 --step 0.019999999999999997 --evals-per-epoch 2"},
    {"mlp_resume",
     kIdx + " --model mlp --hidden 8 --policy serial --epochs 1 --step 0.2 --optimizer sgd "
            "--checkpoint @m.ckpt",
     kIdx + " --model mlp --hidden 8 --policy serial --epochs 3 --step 0.2 --optimizer sgd "
            "--checkpoint @m.ckpt --resume "
            "@m.ckpt"},
    // mf's defaults changed after these were recorded (l2 0.05, the plateau schedule): the runs
    // name the earlier ones.
    {"mf_serial",
     kRatings + " --model mf --rank 3 --policy serial --epochs 3 --step 0.05" + kMfWas},
    {"mf_serial_loss_sample", kRatings +
                                  " --model mf --rank 3 --policy serial --epochs 2 "
                                  "--step 0.05 --train-loss-sample 500" +
                                  kMfWas},
    {"mf_simulate_delay",
     kRatings +
         " --model mf --rank 3 --simulate 4 --delay uniform:4 --staleness-sample 1 "
         "--epochs 2 --step 0.05" +
         kMfWas},
    {"mf_adam_batch", kRatings +
                          " --model mf --rank 3 --optimizer adam --batch 4 --policy serial "
                          "--epochs 2 --step 0.01" +
                          kMfWas},
};

// The case's arguments with each `@NAME` made a path in the scratch directory.
std::string with_paths(std::string args) {
  const std::string dir = work_dir().string() + "/";
  for (std::size_t at; (at = args.find('@')) != std::string::npos;) args.replace(at, 1, dir);
  return args;
}

// The normalised report of one case, as the golden file holds it.
std::string report_of(const Case& c) {
  make_data();
  const std::string report = path(c.name + ".json");
  fs::remove(path("lin.ckpt"));
  fs::remove(path("m.ckpt"));
  const auto first = run("train" + with_paths(c.args) + " --seed 11 --json " + report);
  REQUIRE_MESSAGE(first.code == 0, (c.name + ": " + first.err));
  if (!c.resume_args.empty()) {
    const auto second = run("train" + with_paths(c.resume_args) + " --seed 11 --json " + report);
    REQUIRE_MESSAGE(second.code == 0, (c.name + " (resumed): " + second.err));
  }
  auto json = nlohmann::ordered_json::parse(slurp(report));
  normalise(json);
  return json.dump(1) + "\n";
}

// True where the dense models' reports can match byte for byte: vectors as wide as the
// recording machine's (AVX2, no AVX-512).
bool recorded_vector_width() {
#if defined(__x86_64__)
  return !__builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

bool dense_model(const std::string& name) {
  return name.starts_with("mlp") || name.starts_with("softmax");
}

// The same structure, strings, integers and flags, and floating-point numbers within a relative
// 1e-6 (the last bits of sums taken in another order).
bool tolerant_match(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  if (a.is_number_float() || b.is_number_float()) {
    if (!a.is_number() || !b.is_number()) return false;
    const double x = a.get<double>(), y = b.get<double>();
    return x == y || std::abs(x - y) <= 1e-6 * std::max({std::abs(x), std::abs(y), 1e-12});
  }
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object()) {
    for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
      if (ia.key() != ib.key() || !tolerant_match(ia.value(), ib.value())) return false;
    }
    return true;
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!tolerant_match(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

}  // namespace

TEST_CASE("golden reports: deterministic runs reproduce their recorded reports byte for byte") {
  const fs::path golden = fs::path(HOGWILD_SOURCE_DIR) / "tests" / "golden";
  const char* update = std::getenv("HOGWILD_UPDATE_GOLDEN");
  const bool rewrite = update != nullptr && std::string(update) == "1";
  for (const Case& c : kCases) {
    SUBCASE(c.name.c_str()) {
      const std::string actual = report_of(c);
      const fs::path file = golden / (c.name + ".json");
      if (rewrite) {
        std::ofstream(file, std::ios::binary) << actual;
      } else {
        REQUIRE_MESSAGE(fs::exists(file),
                        (file.string() + " is missing (HOGWILD_UPDATE_GOLDEN=1)"));
        const std::string expected = slurp(file);
        const bool tolerant = dense_model(c.name) && !recorded_vector_width();
        if (tolerant ? !tolerant_match(nlohmann::ordered_json::parse(expected),
                                       nlohmann::ordered_json::parse(actual))
                     : expected != actual) {
          std::ofstream(path(c.name + ".actual.json"), std::ios::binary) << actual;
          FAIL_CHECK(c.name << ": the report differs from " << file.string() << "; diff it with "
                            << path(c.name + ".actual.json"));
        }
      }
    }
  }
}
