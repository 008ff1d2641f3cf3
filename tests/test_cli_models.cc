// The command line of the model trainer: gen ratings, train --format idx|ratings|libsvm with
// --model softmax|mlp|mf, reports, and the errors of its options.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_support.h"
#include "idx_support.h"

namespace fs = std::filesystem;
using Result = hogwild::test::CliResult;
using hogwild::test::run;
using hogwild::test::slurp;
using hogwild::test::work_dir;

namespace {

std::string path(const std::string& name) { return (work_dir() / name).string(); }

// Gzip IDX images and labels under the standard names, in the scratch directory.
void write_idx(const std::string& prefix, std::size_t n, std::uint64_t seed) {
  hogwild::test::write_idx(work_dir(), prefix, n, seed);
}

}  // namespace

TEST_CASE("gen ratings then train mf reaches the noise level, with rmse in the report") {
  const auto g =
      run("gen ratings --users 300 --items 200 --rank 3 --density 0.25 --noise 0.3 "
          "--seed 4 --out " +
          path("r.txt") + " --test-out " + path("r_test.txt") + " --test-fraction 0.1");
  INFO(g.err);
  REQUIRE(g.code == 0);
  const auto r =
      run("train --format ratings --train " + path("r.txt") + " --test " + path("r_test.txt") +
          " --rank 3 --threads 2 --json " + path("mf.json") + " --csv " + path("mf.csv"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("test_rmse") != std::string::npos);
  const auto json = nlohmann::json::parse(slurp(path("mf.json")));
  CHECK(json["config"]["model"] == "mf");
  // The defaults run until the plateau schedule ends the run: converged, not cut short by a
  // number of epochs (cut at 15 epochs the RMSE was 0.326-0.331, by interleaving).
  CHECK(json["stopped"] == "plateau");
  CHECK(json["final"]["test_rmse"].get<double>() < 0.33);
  CHECK(slurp(path("mf.csv")).rfind("epoch,seconds,elapsed,step,train_loss", 0) == 0);
  const auto bad = run("gen ratings --density 0.9 --out " + path("x.txt"));
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--density: expected a fraction in (0, 0.5]") != std::string::npos);
  const auto no_test = run("gen ratings --out " + path("x.txt") + " --test-fraction 0.1");
  CHECK(no_test.code == 2);
  CHECK(no_test.err.find("--test-out") != std::string::npos);
  // A split that leaves one side empty is refused before anything is written.
  for (const std::string split : {"--users 10 --items 10 --test-fraction 0.99",
                                  "--users 1 --items 2 --test-fraction 0.001"}) {
    CAPTURE(split);
    const auto empty = run("gen ratings " + split + " --out " + path("e.txt") + " --test-out " +
                           path("e_test.txt"));
    CHECK(empty.code == 2);
    CHECK(empty.err.find("--test-fraction: expected a fraction that leaves ratings in both") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(path("e.txt")));
  }
  // All-zero factors are a fixed point: the run could never train.
  const auto zero = run("train --format ratings --train " + path("r.txt") + " --init-scale 0");
  CHECK(zero.code == 2);
  CHECK(zero.err.find("--init-scale: expected a finite deviation > 0, found 0") !=
        std::string::npos);
}

TEST_CASE("train --format idx finds the labels, trains softmax and mlp, reports accuracy") {
  write_idx("train", 800, 1);
  write_idx("t10k", 200, 2);
  for (const std::string model : {"softmax --step 0.2", "mlp --hidden 16,8 --step 0.02"}) {
    CAPTURE(model);
    const auto r = run("train --format idx --train " + path("train-images-idx3-ubyte.gz") +
                       " --test " + path("t10k-images-idx3-ubyte.gz") + " --model " + model +
                       " --epochs 4 --threads 2 --optimizer momentum --compare-serial "
                       "--json " +
                       path("idx.json"));
    INFO(r.err);
    REQUIRE(r.code == 0);
    const auto json = nlohmann::json::parse(slurp(path("idx.json")));
    CHECK(json["final"]["test_accuracy"].get<double>() > 0.95);
    CHECK(json["dataset"]["features"] == 16);
    CHECK(json["classes"].size() == 4);
    CHECK(r.out.find("speed-up over serial") != std::string::npos);
    CHECK(json["serial_baseline"]["final"]["test_accuracy"].get<double>() > 0.95);
  }
  const auto missing = run("train --format idx --train " + path("r.txt"));
  CHECK(missing.code == 2);
  CHECK(missing.err.find("expected a labels file beside the images") != std::string::npos);
}

TEST_CASE("model options are checked, and every model trains through the one train command") {
  write_idx("small", 100, 3);
  const std::string images = " --train " + path("small-images-idx3-ubyte.gz");
  auto expect = [&](const std::string& args, const char* text) {
    const auto r = run("train" + args);
    CAPTURE(args);
    CHECK(r.code == 2);
    CHECK(r.err.find(text) != std::string::npos);
  };
  expect(" --format idx" + images + " --optimizer lbfgs", "--optimizer: expected one of sgd");
  expect(" --format idx" + images + " --model mlp --hidden 256,x", "--hidden: expected");
  expect(" --format idx" + images + " --model mf", "mf needs --format ratings");
  expect(" --format csv" + images, "--format: expected one of libsvm, idx, ratings");
  expect(" --format idx" + images + " --beta1 1", "--beta1: expected a factor in [0, 1)");
  expect(" --format idx" + images + " --step-schedule sometimes", "--step-schedule: expected");
  expect(" --format idx" + images + " --batch 0",
         "--batch: expected a minibatch size in [1, 65536]");
  expect(" --format idx" + images + " --rank 4", "--rank: expected only with --model mf");
  // Options of another format or without the file they describe: refused, not ignored.
  expect(" --format idx" + images + " --zero-based yes",
         "--zero-based: expected only with --format libsvm, found --format idx");
  expect(" --format idx" + images + " --test-labels " + path("small-labels-idx1-ubyte.gz"),
         "--test-labels: expected only with --test (the images they label), found no --test");
  // Softmax and mlp on dense features replicate the model per worker with 2 threads: the header
  // and the report say so, and --replicate off keeps the parameters shared.
  const auto replicated =
      run("train --format idx" + images + " --model mlp --hidden 8 --threads 2 --epochs 1 --json " +
          path("replicated.json"));
  INFO(replicated.err);
  REQUIRE(replicated.code == 0);
  CHECK(replicated.out.find("replicas: merged every 64 samples (auto), each worker with its own "
                            "optimiser state") != std::string::npos);
  CHECK(nlohmann::json::parse(slurp(path("replicated.json")))["config"]["replicate"] == 64);
  const auto shared = run("train --format idx" + images +
                          " --model softmax --threads 2 --epochs 1 --replicate off");
  CHECK(shared.code == 0);
  CHECK(shared.out.find("replicas: off") != std::string::npos);
  // Options one model's shape or another model family takes are refused, not ignored, and a
  // model the data cannot train is refused before anything is printed.
  std::ofstream(path("tiny.svm")) << "1 1:1\n-1 2:1\n1 1:0.5\n-1 2:0.5\n";
  const std::string tiny = " --train " + path("tiny.svm");
  expect(tiny + " --optimizer adam", "--optimizer: expected sgd for the linear models");
  expect(tiny + " --hidden 8 --model softmax", "--hidden: expected only with --model mlp");
  expect(tiny + " --model softmax --replicate 4",
         "--replicate: expected off or auto for softmax on LIBSVM data");
  expect(" --format idx" + images + " --model mlp --replicate 64 --simulate 2",
         "--replicate: expected off or auto for softmax and mlp with --delay, --simulate");
  expect(tiny + " --model mlp", "mlp needs dense features: --format idx");
  CHECK(run("train" + tiny + " --model mlp").out.empty());
  const auto linear = run("train --train " + path("tiny.svm") + " --model logistic --epochs 2");
  INFO(linear.err);
  CHECK(linear.code == 0);
  const auto softmax = run("train --train " + path("tiny.svm") + " --model softmax --epochs 2");
  INFO(softmax.err);
  CHECK(softmax.code == 0);
  CHECK(softmax.out.find("model: softmax") != std::string::npos);
}

TEST_CASE(
    "model trainer: --order blocks shuffles the storage and is kept in report and checkpoint") {
  write_idx("order", 600, 5);
  const std::string images = " --format idx --train " + path("order-images-idx3-ubyte.gz") +
                             " --model softmax --policy serial --order blocks:16";
  const auto first = run("train" + images + " --epochs 1 --checkpoint " + path("order.ckpt") +
                         " --json " + path("order.json"));
  INFO(first.err);
  REQUIRE(first.code == 0);
  const auto json = nlohmann::json::parse(slurp(path("order.json")));
  CHECK(json["config"]["order"] == "blocks:16");
  CHECK(json["samples"] == 600);
  // Resuming in another order is refused; in the same one it continues.
  const auto rows = run("train" + images.substr(0, images.find(" --order")) +
                        " --epochs 2 --resume " + path("order.ckpt"));
  CHECK(rows.code == 2);
  CHECK(rows.err.find("--order") != std::string::npos);
  const auto resumed = run("train" + images + " --epochs 2 --resume " + path("order.ckpt"));
  INFO(resumed.err);
  CHECK(resumed.code == 0);
}

TEST_CASE("model trainer: --schedule, the speed model, sharding, the curve and their errors") {
  write_idx("sched", 600, 5);
  const std::string images = " --format idx --train " + path("sched-images-idx3-ubyte.gz");
  const auto r = run("train" + images +
                     " --model softmax --threads 2 --epochs 2 --schedule time:100us "
                     "--worker-speed 1,0.5 --sharding dynamic --evals-per-epoch 4 "
                     "--batch-reduce mean --max-batch 512 --json " +
                     path("sched.json"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("minibatches: time:100us") != std::string::npos);
  CHECK(r.out.find("batch size: mean") != std::string::npos);
  const auto json = nlohmann::json::parse(slurp(path("sched.json")));
  CHECK(json["config"]["schedule"] == "time:100us");
  CHECK(json["config"]["sharding"] == "dynamic");
  CHECK(json["config"]["max_batch"] == 512);
  CHECK(json["config"]["worker_speed"].size() == 2);
  CHECK(json["batch_size"]["per_worker"].size() == 2);
  CHECK(json.contains("window_micros"));
  CHECK(json["curve"].size() == 9);
  std::uint64_t samples = 0;
  for (const auto& w : json["batch_size"]["per_worker"])
    samples += w["samples"].get<std::uint64_t>();
  CHECK(samples == 1200);

  const auto fixed =
      run("train" + images + " --model mlp --hidden 8 --threads 2 --epochs 1 " +
          "--schedule fixed:8 --batch-reduce sum --step 0.01 --json " + path("fixed.json"));
  INFO(fixed.err);
  REQUIRE(fixed.code == 0);
  const auto f = nlohmann::json::parse(slurp(path("fixed.json")));
  CHECK(f["config"]["batch"] == 8);
  CHECK(f["config"]["batch_reduce"] == "sum");
  CHECK(f["batch_size"]["max"] == 8);
  CHECK(f["batch_size"]["p50"] == 8);

  auto expect = [&](const std::string& args, const char* text) {
    const auto e = run("train" + images + args);
    CAPTURE(args);
    CHECK(e.code == 2);
    CHECK(e.err.find(text) != std::string::npos);
  };
  expect(" --schedule sometimes",
         "--schedule: expected fixed:B or time:DURATION (e.g. time:200us), found 'sometimes'");
  expect(" --schedule time:5", "--schedule time:DURATION: expected a positive duration");
  expect(" --batch 8 --schedule fixed:8",
         "--batch: expected either --batch or --schedule, found both");
  expect(" --batch-reduce max", "--batch-reduce: expected mean or sum, found 'max'");
  expect(" --sharding random", "--sharding: expected static or dynamic, found 'random'");
  expect(" --threads 2 --worker-speed 1",
         "--worker-speed: expected 2 speeds, one per worker, found 1");
  expect(" --worker-speed 1,2",
         "--worker-speed: expected comma-separated relative speeds in (0, 1], found '2'");
  expect(" --straggler exp:1us", "--straggler: expected shifted-exp:SHIFT:MEAN");
  expect(" --pause 2:1ms", "--pause: expected P:DURATION");
  expect(" --evals-per-epoch 0", "--evals-per-epoch: expected a count in [1, 1000], found 0");
  expect(" --schedule time:1ms --max-batch 0",
         "--max-batch: expected a sample count in [1, 1048576], found 0");
  expect(" --simulate 2 --schedule time:1ms", "--schedule: expected fixed:B with --simulate");
  expect(" --simulate 2 --worker-speed 1,0.5", "--simulate: expected no speed model");
}
