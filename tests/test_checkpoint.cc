// Checkpoints: the on-disk format (round trip, corruption, truncation, wrong magic or version),
// the atomic write, resuming both trainers to the same bit-exact result as an uninterrupted
// serial run, stopping a run on request (a worker waiting out an injected pause included),
// predicting with a saved model against the trainer's own evaluation, and the fingerprint of the
// training data that resuming compares.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "engine/rng.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/libsvm.h"
#include "hogwild/predict.h"
#include "hogwild/report.h"
#include "hogwild/trainer.h"

using namespace hogwild;
namespace fs = std::filesystem;

namespace {

Checkpoint sample_checkpoint() {
  Checkpoint c;
  c.model = "softmax";
  c.format = "libsvm";
  c.config = R"({"model":"softmax","step":0.1,"seed":7})";
  c.epoch = 3;
  c.features = 4;
  c.classes = 3;
  c.labels = {-1, 0.5, 2};
  c.zero_based = true;
  c.initial_loss = 1.0986;
  c.elapsed = 0.25;
  c.samples = 1200;
  c.worker_updates = {75, 76};
  c.worker_draws = {{1, 0xffffffffffffffffu, 3, 4, 5}, {6, 7, 8, 9, 0}};
  c.virtual_ns = 123456789;
  c.patience = PatienceState{0.3125, 2};
  for (std::size_t i = 0; i < 15; ++i) c.weights.push_back(0.125f * static_cast<float>(i) - 1);
  c.optimizer_state.push_back(std::vector<float>(15, 0.5f));
  c.optimizer_state.push_back(std::vector<float>(15, 1e-30f));
  return c;
}

void check_same(const Checkpoint& a, const Checkpoint& b) {
  CHECK(a.model == b.model);
  CHECK(a.format == b.format);
  CHECK(a.config == b.config);
  CHECK(a.epoch == b.epoch);
  CHECK(a.features == b.features);
  CHECK(a.classes == b.classes);
  CHECK(a.hidden == b.hidden);
  CHECK(a.users == b.users);
  CHECK(a.items == b.items);
  CHECK(a.rank == b.rank);
  CHECK(a.mean == b.mean);
  CHECK(a.zero_based == b.zero_based);
  CHECK(a.intercept == b.intercept);
  CHECK(a.labels == b.labels);
  CHECK(a.initial_loss == b.initial_loss);
  CHECK(a.elapsed == b.elapsed);
  CHECK(a.samples == b.samples);
  CHECK(a.worker_updates == b.worker_updates);
  CHECK(a.worker_draws == b.worker_draws);
  CHECK(a.virtual_ns == b.virtual_ns);
  CHECK(a.weights == b.weights);
  CHECK(a.optimizer_state == b.optimizer_state);
  CHECK(a.plateau.scale == b.plateau.scale);
  CHECK(a.plateau.best == b.plateau.best);
  CHECK(a.plateau.wait == b.plateau.wait);
  CHECK(a.plateau.ended == b.plateau.ended);
  REQUIRE(a.patience.has_value() == b.patience.has_value());
  if (a.patience) {
    CHECK(a.patience->best == b.patience->best);
    CHECK(a.patience->wait == b.patience->wait);
  }
}

// Runs parse_checkpoint and returns its InputError message ("" when it parsed).
std::string rejection(const std::string& bytes) {
  try {
    parse_checkpoint(bytes, "c.ckpt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

fs::path scratch_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() /
                   ("hogwild_checkpoint_test_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A copy of a trainer's state that outlives the callback.
struct SavedState {
  TrainState state;
  std::vector<float> weights;
  std::vector<std::vector<float>> buffers;

  void take(const TrainState& s) {
    state = s;
    weights.assign(s.weights.begin(), s.weights.end());
    buffers.clear();
    for (const auto& b : s.optimizer_state) buffers.emplace_back(b.begin(), b.end());
    state.weights = weights;
    state.optimizer_state.clear();
    for (const auto& b : buffers) state.optimizer_state.emplace_back(b);
  }
};

SparseProblem sparse_problem() {
  SparseGeneratorConfig g;
  g.rows = 3000;
  g.test_rows = 500;
  g.features = 500;
  g.nnz_per_row = 12;
  g.seed = 11;
  return generate_sparse(g);
}

// Three Gaussian classes with labels 3, 5, 9 in 6 dimensions.
DenseDataset blobs(std::size_t rows, std::uint64_t seed) {
  DenseDataset d;
  d.cols = 6;
  detail::Rng rng(seed);
  for (std::size_t i = 0; i < rows; ++i) {
    const auto cls = static_cast<std::int32_t>(rng.below(3));
    for (std::size_t j = 0; j < d.cols; ++j) {
      const double centre = j == static_cast<std::size_t>(cls) ? 2.0 : 0.0;
      d.features.push_back(static_cast<float>(centre + 0.8 * rng.normal()));
    }
    d.labels.push_back(cls == 0 ? 3 : cls == 1 ? 5 : 9);
  }
  return d;
}

}  // namespace

TEST_CASE("--patience resumes its count of epochs without improvement where the run stopped") {
  const auto problem = sparse_problem();
  TrainConfig config;
  config.policy = Policy::kSerial;
  config.threads = 1;
  config.epochs = 20;
  config.optimizer.step = 0.5;
  config.seed = 5;
  config.patience = 2;
  config.tol = 0.01;
  std::vector<SavedState> states(static_cast<std::size_t>(config.epochs) + 1);
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& s) {
    states[static_cast<std::size_t>(s.epoch)].take(s);
  };
  const auto whole = hogwild::train(config, problem.train, &problem.test, callbacks);
  REQUIRE(whole.stopped == StopReason::kConverged);
  const int last = whole.epochs.back().epoch;
  REQUIRE(last >= 3);
  // The epoch before the last ended without improvement too: its state counts one.
  const SavedState& before = states[static_cast<std::size_t>(last - 1)];
  REQUIRE(before.state.patience.has_value());
  CHECK(before.state.patience->wait == 1);

  // Through the checkpoint's on-disk form, as `hogwild train --resume` reads it.
  Checkpoint file = checkpoint_for(config, problem.train, &problem.test);
  record_state(file, before.state);
  const Checkpoint read = parse_checkpoint(serialize_checkpoint(file), "p.ckpt");
  const TrainState resume = resume_state(read);
  const auto resumed = hogwild::train(config, problem.train, &problem.test, {}, &resume);
  CHECK(resumed.stopped == StopReason::kConverged);
  CHECK(resumed.epochs.back().epoch == last);
  CHECK(resumed.weights == whole.weights);

  // Resumed from the epoch where --patience ended it, the run ends there: no epoch trained.
  const SavedState& last_state = states[static_cast<std::size_t>(last)];
  const auto again = hogwild::train(config, problem.train, &problem.test, {}, &last_state.state);
  CHECK(again.stopped == StopReason::kConverged);
  CHECK(again.epochs.size() == 1);
  CHECK(again.weights == whole.weights);

  // Without the count (a checkpoint written before it was kept) the run counts again from the
  // epoch it resumes, and stops later.
  TrainState uncounted = resume;
  uncounted.patience.reset();
  const auto later = hogwild::train(config, problem.train, &problem.test, {}, &uncounted);
  CHECK(later.epochs.back().epoch > last);
}

TEST_CASE("checkpoint round trip keeps every field and every bit of the arrays") {
  const Checkpoint c = sample_checkpoint();
  const std::string bytes = serialize_checkpoint(c);
  CHECK(bytes.substr(0, 8) == "HOGWCKPT");
  check_same(parse_checkpoint(bytes, "c.ckpt"), c);

  Checkpoint mf;
  mf.model = "mf";
  mf.format = "ratings";
  mf.config = "{}";
  mf.users = 3;
  mf.items = 2;
  mf.rank = 2;
  mf.mean = 3.25;
  mf.weights.assign(10, -0.0f);
  check_same(parse_checkpoint(serialize_checkpoint(mf), "mf.ckpt"), mf);
  mf.plateau = {0.04, 0.1234567890123, 1};  // --step-schedule plateau after two cuts
  check_same(parse_checkpoint(serialize_checkpoint(mf), "mf.ckpt"), mf);
  mf.plateau = {0.008, 0.1234567890123, 0, true};  // the plateau that ended the run
  check_same(parse_checkpoint(serialize_checkpoint(mf), "mf.ckpt"), mf);
  for (const PlateauState bad :
       {PlateauState{0, 0.1, 0}, PlateauState{1.5, 0.1, 0}, PlateauState{0.2, 0.1, -1}}) {
    mf.plateau = bad;
    CHECK(rejection(serialize_checkpoint(mf)).find("c.ckpt: expected a plateau state") == 0);
  }
  mf.plateau = {};
  mf.patience = PatienceState{0.5, -1};
  CHECK(rejection(serialize_checkpoint(mf)).find("c.ckpt: expected a patience state") == 0);
  mf.patience = PatienceState{std::nan(""), 0};  // JSON writes it as null
  CHECK(rejection(serialize_checkpoint(mf)).find("c.ckpt: ") == 0);
  mf.patience.reset();
  mf.virtual_ns = -1;
  CHECK(rejection(serialize_checkpoint(mf)).find("'virtual_ns' holding -1") != std::string::npos);
  mf.virtual_ns = 0;

  const auto dir = scratch_dir("roundtrip");
  save_checkpoint(dir / "a.ckpt", c);
  check_same(load_checkpoint(dir / "a.ckpt"), c);
  save_checkpoint(dir / "a.ckpt", mf);  // replaces it
  check_same(load_checkpoint(dir / "a.ckpt"), mf);
  // The temporary files are gone: the directory holds the checkpoint alone.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  CHECK(files == 1);
  fs::remove_all(dir);
}

TEST_CASE("a checkpoint saved through a link replaces its target, and a FIFO is refused and kept") {
  const Checkpoint c = sample_checkpoint();
  const auto dir = scratch_dir("links");
  fs::create_symlink("target.ckpt", dir / "link.ckpt");  // a target not written yet
  for (int save = 0; save < 2; ++save) {
    save_checkpoint(dir / "link.ckpt", c);
    CHECK(fs::is_symlink(dir / "link.ckpt"));
    check_same(load_checkpoint(dir / "target.ckpt"), c);
  }

  // Renaming over a FIFO (or a device) would replace it with a regular file.
  const auto fifo = dir / "fifo.ckpt";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string message;
  try {
    save_checkpoint(fifo, c);
  } catch (const hogwild::SystemError& e) {
    message = e.what();
  }
  CHECK(message == fifo.string() + ": cannot write a checkpoint over it: expected a regular file");
  CHECK(fs::is_fifo(fifo));
  std::size_t files = 0;  // no temporary file left behind
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir)) ++files;
  CHECK(files == 3);
  fs::remove_all(dir);
}

TEST_CASE("every flipped byte of a checkpoint is rejected with one line naming the file") {
  const std::string bytes = serialize_checkpoint(sample_checkpoint());
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (const unsigned char flip : {0x01, 0x80}) {
      std::string bad = bytes;
      bad[i] = static_cast<char>(static_cast<unsigned char>(bad[i]) ^ flip);
      const std::string message = rejection(bad);
      CAPTURE(i);
      REQUIRE(message.rfind("c.ckpt: expected ", 0) == 0);
      CHECK(message.find('\n') == std::string::npos);
    }
  }
  std::string body_flip = bytes;
  body_flip[bytes.size() - 3] ^= 0x10;
  CHECK(rejection(body_flip).find("the checkpoint is corrupt") != std::string::npos);
}

TEST_CASE("truncated, empty, foreign and future-version checkpoints are rejected") {
  const std::string bytes = serialize_checkpoint(sample_checkpoint());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    REQUIRE(rejection(bytes.substr(0, n)).rfind("c.ckpt: expected ", 0) == 0);
  }
  CHECK(rejection(bytes.substr(0, bytes.size() - 1)).find("truncated") != std::string::npos);
  CHECK(rejection(bytes + "x").find("too long") != std::string::npos);
  CHECK(rejection("") ==
        "c.ckpt: expected a hogwild checkpoint (magic 'HOGWCKPT'), found an empty file");
  CHECK(rejection("PK\x03\x04zipfile") ==
        "c.ckpt: expected a hogwild checkpoint (magic 'HOGWCKPT'), found 'PK\\x03\\x04zipf'");
  std::string future = bytes;
  future[8] = 2;
  CHECK(rejection(future) == "c.ckpt: expected checkpoint format version 1, found 2");
  const auto dir = scratch_dir("missing");
  CHECK_THROWS_AS(load_checkpoint(dir / "none.ckpt"), SystemError);
  fs::remove_all(dir);
}

TEST_CASE("checkpoints whose contents do not make a model are rejected") {
  auto c = sample_checkpoint();
  c.weights.pop_back();
  CHECK(rejection(serialize_checkpoint(c)) ==
        "c.ckpt: expected 15 parameters for this softmax model, found 14");
  c = sample_checkpoint();
  c.weights[2] = std::nanf("");
  CHECK(rejection(serialize_checkpoint(c)) ==
        "c.ckpt: expected finite parameters, found NaN or Inf");
  c = sample_checkpoint();
  c.optimizer_state[1].resize(3);
  CHECK(rejection(serialize_checkpoint(c)) ==
        "c.ckpt: expected optimiser state of 15 values, found 3");
  c = sample_checkpoint();
  c.labels.pop_back();
  CHECK(rejection(serialize_checkpoint(c)) ==
        "c.ckpt: expected 3 label values for this softmax model, found 2");
  c = sample_checkpoint();
  c.model = "forest";
  CHECK(rejection(serialize_checkpoint(c)).find("expected a model of known shape") !=
        std::string::npos);
}

TEST_CASE("linear trainer: resuming after epoch k gives the uninterrupted serial run's weights") {
  const auto problem = sparse_problem();
  for (const double l2 : {0.0, 1e-4}) {
    CAPTURE(l2);
    TrainConfig config;
    config.policy = Policy::kSerial;
    config.threads = 1;
    config.epochs = 6;
    config.optimizer.step = 0.5;
    config.l2 = l2;
    config.seed = 5;
    SavedState at3;
    Callbacks callbacks;
    callbacks.on_epoch_state = [&](const TrainState& s) {
      if (s.epoch == 3) at3.take(s);
    };
    const auto whole = hogwild::train(config, problem.train, &problem.test, callbacks);
    REQUIRE(at3.state.epoch == 3);
    REQUIRE(at3.weights.size() == whole.weights.size());
    CHECK(at3.weights != whole.weights);

    const auto resumed = hogwild::train(config, problem.train, &problem.test, {}, &at3.state);
    CHECK(resumed.resumed_from == 3);
    REQUIRE(resumed.epochs.size() == 4);  // epochs 3 (the resumed model) to 6
    CHECK(resumed.epochs.front().epoch == 3);
    CHECK(resumed.epochs.front().train.loss == whole.epochs[3].train.loss);
    CHECK(resumed.weights == whole.weights);  // bit for bit
    CHECK(resumed.epochs.back().train.loss == whole.epochs.back().train.loss);
    CHECK(resumed.epochs.back().test->accuracy == whole.epochs.back().test->accuracy);
    CHECK(resumed.samples == whole.samples);
  }
}

TEST_CASE("linear trainer: a stop request ends the run early and it resumes to the same end") {
  const auto problem = sparse_problem();
  TrainConfig config;
  config.policy = Policy::kSerial;
  config.threads = 1;
  config.epochs = 5;
  const auto whole = hogwild::train(config, problem.train, nullptr);

  std::atomic<bool> stop{false};
  SavedState last;
  Callbacks callbacks;
  callbacks.stop = &stop;
  callbacks.on_epoch_state = [&](const TrainState& s) {
    last.take(s);
    if (s.epoch == 2) stop = true;  // as a signal arriving during epoch 3 would
  };
  const auto partial = hogwild::train(config, problem.train, nullptr, callbacks);
  CHECK(partial.interrupted);
  REQUIRE(partial.epochs.size() == 3);  // 0, 1, 2: epoch 3 never completed
  CHECK(partial.epochs.back().epoch == 2);
  CHECK(last.state.epoch == 2);
  const auto resumed = hogwild::train(config, problem.train, nullptr, {}, &last.state);
  CHECK_FALSE(resumed.interrupted);
  CHECK(resumed.weights == whole.weights);

  // A stop already requested before training: no epoch runs.
  const auto none = hogwild::train(config, problem.train, nullptr, callbacks);
  CHECK(none.interrupted);
  CHECK(none.epochs.size() == 1);

  // Racy threads and dynamic sharding stop as well.
  config.policy = Policy::kRacy;
  config.threads = 2;
  for (const bool dynamic : {false, true}) {
    config.dynamic_sharding = dynamic;
    stop = false;
    Callbacks c2;
    c2.stop = &stop;
    c2.on_epoch = [&](const EpochRecord& r) {
      if (r.epoch == 1) stop = true;
    };
    const auto r = hogwild::train(config, problem.train, nullptr, c2);
    CHECK(r.interrupted);
    CHECK(r.epochs.back().epoch == 1);
  }
}

TEST_CASE("a stop request ends the speed model's hour-long waits, in both trainers") {
  // Every sample stalls for an hour on the steady clock, before it (--pause) or after it
  // (--straggler). The request comes from another thread once the run has started: most likely
  // while a worker waits, or (on a loaded machine) before its first sample. Either way the run
  // ends interrupted with no epoch done, as a run without a speed model would; a wait that did
  // not look at the request would hold it for hours, until ctest's timeout.
  const auto problem = sparse_problem();
  Dataset three_classes = problem.train;
  for (std::size_t i = 0; i < three_classes.rows(); i += 3) three_classes.labels[i] = 4;
  for (const bool softmax : {false, true}) {
    for (const bool straggler : {false, true}) {
      for (const int threads : {1, 2}) {
        for (const bool dynamic : {false, true}) {
          CAPTURE(softmax);
          CAPTURE(straggler);
          CAPTURE(threads);
          CAPTURE(dynamic);
          TrainConfig config;
          if (softmax) config.model = hogwild::SoftmaxModel{};
          config.threads = threads;
          config.dynamic_sharding = dynamic;
          config.epochs = 2;
          config.optimizer.step = 0.1;  // no calibration trials before the run
          if (straggler) {
            config.speed.parse_straggler("shifted-exp:3600s:3600s");
          } else {
            config.speed.parse_pause("1:3600s");
          }
          std::atomic<bool> stop{false};
          std::jthread requester;  // joined before `stop` goes
          Callbacks callbacks;
          callbacks.stop = &stop;
          callbacks.on_start = [&](const Report&) {
            requester = std::jthread([&stop] {
              std::this_thread::sleep_for(std::chrono::milliseconds(20));
              stop = true;
            });
          };
          const auto report =
              hogwild::train(config, softmax ? three_classes : problem.train, nullptr, callbacks);
          CHECK(report.interrupted);
          CHECK(report.stopped == StopReason::kInterrupted);
          REQUIRE(report.epochs.size() == 1);  // the initial model's record only
          CHECK(report.epochs.front().epoch == 0);
          CHECK(report.samples == 0);
        }
      }
    }
  }
}

TEST_CASE("linear trainer: resume state of the wrong size is rejected") {
  const auto problem = sparse_problem();
  TrainConfig config;
  config.policy = Policy::kSerial;
  config.epochs = 2;
  std::vector<float> weights(7, 0.0f);
  TrainState state;
  state.epoch = 1;
  state.weights = weights;
  CHECK_THROWS_WITH_AS(hogwild::train(config, problem.train, nullptr, {}, &state),
                       doctest::Contains("expected a model of 500 weights"), InputError);
  std::vector<float> right(500, 0.0f);
  state.weights = right;
  state.epoch = 3;
  CHECK_THROWS_WITH_AS(hogwild::train(config, problem.train, nullptr, {}, &state),
                       "--epochs: expected at least the 3 epochs already done, found 2",
                       InputError);
}

TEST_CASE("model trainer: softmax with Adam resumes to the uninterrupted serial run's weights") {
  const auto problem = sparse_problem();
  Dataset train_data = problem.train;
  // Three classes so the softmax has a real class mapping.
  for (std::size_t i = 0; i < train_data.rows(); i += 3) train_data.labels[i] = 4;
  TrainConfig config;
  config.model = hogwild::SoftmaxModel{};
  config.policy = Policy::kSerial;
  config.threads = 1;
  config.epochs = 5;
  config.seed = 9;
  config.optimizer.kind = OptimizerKind::kAdam;
  config.optimizer.step = 0.01;
  SavedState at2;
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& s) {
    if (s.epoch == 2) at2.take(s);
  };
  const auto whole = hogwild::train(config, train_data, nullptr, callbacks);
  REQUIRE(at2.state.epoch == 2);
  REQUIRE(at2.buffers.size() == 2);  // Adam's moments
  CHECK(at2.state.worker_updates.size() == 1);
  const auto resumed = hogwild::train(config, train_data, nullptr, {}, &at2.state);
  CHECK(resumed.resumed_from == 2);
  CHECK(resumed.weights == whole.weights);
  CHECK(resumed.epochs.back().train.loss == whole.epochs.back().train.loss);

  // Without the optimiser state, or with the wrong amount, resuming is refused.
  TrainState no_state = at2.state;
  no_state.optimizer_state.clear();
  CHECK_THROWS_WITH_AS(hogwild::train(config, train_data, nullptr, {}, &no_state),
                       "--optimizer: expected 2 optimiser state buffers to resume adam, found 0",
                       InputError);
}

TEST_CASE("the library's checkpoint cycle: record, save, load, check, resume exactly") {
  const auto problem = sparse_problem();
  TrainConfig config;
  config.model = hogwild::SoftmaxModel{};
  config.policy = Policy::kSerial;
  config.epochs = 4;
  config.optimizer.kind = OptimizerKind::kMomentum;
  config.optimizer.step = 0.05;
  const fs::path file = fs::temp_directory_path() / "hogwild_test_cycle.ckpt";
  Checkpoint run = checkpoint_for(config, problem.train);
  CHECK(run.model == "softmax");
  CHECK(run.format == "libsvm");
  CHECK(run.features == problem.train.num_features);
  CHECK(run.classes == 2);
  CHECK(run.labels == std::vector<double>{-1, 1});  // class index -> label value
  CHECK(run.config == config_to_json(config.resolved(), -1));
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& state) {
    if (state.epoch != 2) return;
    record_state(run, state);
    save_checkpoint(file, run);
  };
  const auto whole = hogwild::train(config, problem.train, nullptr, callbacks);
  const Checkpoint loaded = load_checkpoint(file);
  CHECK(loaded.epoch == 2);
  CHECK(loaded.optimizer_state.size() == 1);  // the momentum buffer
  Checkpoint expected = run;                  // the run about to start describes itself
  expected.epoch = 0;
  CHECK_NOTHROW(check_resumes(loaded, expected, "cycle.ckpt"));
  const TrainState state = resume_state(loaded);
  const auto resumed = hogwild::train(config, problem.train, nullptr, {}, &state);
  CHECK(resumed.resumed_from == 2);
  CHECK(resumed.weights == whole.weights);

  // A difference in the configuration is named, unless the rules free its key; a difference
  // in the data's shape is named whatever the rules.
  TrainConfig longer = config;
  longer.epochs = 9;
  expected.config = config_to_json(longer.resolved(), -1);
  CHECK_THROWS_WITH_AS(check_resumes(loaded, expected, "cycle.ckpt"),
                       "cycle.ckpt: expected epochs 9 as in this run, found 4 in the checkpoint",
                       InputError);
  const ResumeRules rules{
      .free_key = [](std::string_view key) { return key == "epochs"; },
      .name_of_key = [](std::string_view key) { return "--" + std::string(key); }};
  CHECK_NOTHROW(check_resumes(loaded, expected, "cycle.ckpt", rules));
  longer.optimizer.step = 0.5;
  expected.config = config_to_json(longer.resolved(), -1);
  CHECK_THROWS_WITH_AS(
      check_resumes(loaded, expected, "cycle.ckpt", rules),
      "cycle.ckpt: expected --step 0.5 as in this run, found 0.05 in the checkpoint", InputError);
  // Values read as their options do: --step auto (two keys), --replicate auto and off.
  TrainConfig automatic = longer;
  automatic.optimizer.auto_step = true;
  Checkpoint found_auto = loaded;
  found_auto.config = config_to_json(automatic.resolved(), -1);
  CHECK_THROWS_WITH_AS(check_resumes(found_auto, expected, "cycle.ckpt", rules),
                       "cycle.ckpt: expected --step 0.5 as in this run, found --step auto (it "
                       "chose 0.5) in the checkpoint",
                       InputError);
  CHECK_THROWS_WITH_AS(
      check_resumes(expected, found_auto, "cycle.ckpt", rules),
      "cycle.ckpt: expected --step auto as in this run, found --step 0.5 in the checkpoint",
      InputError);
  // (A softmax run's report keeps the replicas it resolved; a linear one's the option.)
  auto with_replicate = [](const std::string& config, int replicate) {
    auto json = nlohmann::json::parse(config);
    json["replicate"] = replicate;
    return json.dump();
  };
  found_auto.config = with_replicate(expected.config, 0);
  const std::string given = expected.config;
  expected.config = with_replicate(given, TrainConfig::kReplicateAuto);
  CHECK_THROWS_WITH_AS(
      check_resumes(found_auto, expected, "cycle.ckpt", rules),
      "cycle.ckpt: expected --replicate auto as in this run, found off in the checkpoint",
      InputError);
  expected.config = config_to_json(config.resolved(), -1);
  expected.classes = 3;
  CHECK_THROWS_WITH_AS(
      check_resumes(loaded, expected, "cycle.ckpt", rules),
      "cycle.ckpt: expected classes 3 (as in the training data and options), found 2", InputError);
  fs::remove(file);
}

TEST_CASE("checkpoint_for describes the model train() builds, for every model and format") {
  const auto problem = sparse_problem();
  TrainConfig config;
  config.policy = Policy::kSerial;
  config.epochs = 1;
  for (const ModelSpec& model :
       {ModelSpec{LinearModel{LossKind::kHinge}}, ModelSpec{SoftmaxModel{}}}) {
    config.model = model;
    const Checkpoint c = checkpoint_for(config, problem.train, &problem.test);
    CHECK(c.labels == std::vector<double>{-1, 1});
    CHECK(checkpoint_parameters(c) ==
          hogwild::train(config, problem.train, nullptr).data.parameters);
  }
  const auto images = blobs(200, 3);
  config.model = MlpModel{{6, 5}};
  const Checkpoint mlp = checkpoint_for(config, images);
  CHECK(mlp.hidden == std::vector<std::uint64_t>{6, 5});
  CHECK(checkpoint_parameters(mlp) == hogwild::train(config, images, nullptr).data.parameters);

  RatingsGeneratorConfig g;
  g.users = 40;
  g.items = 30;
  g.density = 0.2;
  g.test_fraction = 0.3;
  const auto ratings = generate_ratings(g);
  config.model = FactorisationModel{4, 0.1};
  const Checkpoint mf = checkpoint_for(config, ratings.train, &ratings.test);
  double sum = 0;
  for (const float v : ratings.train.values) sum += v;
  CHECK(mf.mean == doctest::Approx(sum / static_cast<double>(ratings.train.size())).epsilon(1e-6));
  CHECK(mf.users == std::max(ratings.train.num_users, ratings.test.num_users));
  CHECK(checkpoint_parameters(mf) ==
        hogwild::train(config, ratings.train, &ratings.test).data.parameters);
  Ratings none;
  CHECK_THROWS_AS(checkpoint_for(config, none), InputError);
}

TEST_CASE("model trainer: MLP with momentum and factorisation resume exactly, and stop") {
  const auto train = blobs(900, 21);
  const auto test = blobs(300, 22);
  TrainConfig config;
  config.model = hogwild::MlpModel{};
  std::get<hogwild::MlpModel>(config.model).hidden = {8};
  config.policy = Policy::kSerial;
  config.threads = 1;
  config.epochs = 4;
  config.optimizer.kind = OptimizerKind::kMomentum;
  SavedState at1;
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& s) {
    if (s.epoch == 1) at1.take(s);
  };
  const auto whole = hogwild::train(config, train, &test, callbacks);
  const auto resumed = hogwild::train(config, train, &test, {}, &at1.state);
  CHECK(resumed.weights == whole.weights);
  CHECK(*resumed.epochs.back().test->accuracy == *whole.epochs.back().test->accuracy);

  std::atomic<bool> stop{false};
  Callbacks stopping;
  stopping.stop = &stop;
  stopping.on_epoch = [&](const EpochRecord& r) {
    if (r.epoch == 2) stop = true;
  };
  config.policy = Policy::kRacy;
  config.threads = 2;
  const auto partial = hogwild::train(config, train, &test, stopping);
  CHECK(partial.interrupted);
  CHECK(partial.epochs.back().epoch == 2);

  RatingsGeneratorConfig g;
  g.users = 120;
  g.items = 80;
  g.rank = 3;
  g.density = 0.2;
  const auto ratings = generate_ratings(g);
  TrainConfig mf;
  mf.model = hogwild::FactorisationModel{};
  std::get<hogwild::FactorisationModel>(mf.model).rank = 3;
  mf.policy = Policy::kSerial;
  mf.threads = 1;
  mf.epochs = 3;
  mf.optimizer.kind = OptimizerKind::kAdagrad;
  SavedState mf_at2;
  Callbacks mf_callbacks;
  mf_callbacks.on_epoch_state = [&](const TrainState& s) {
    if (s.epoch == 2) mf_at2.take(s);
  };
  const auto mf_whole = hogwild::train(mf, ratings.train, nullptr, mf_callbacks);
  const auto mf_resumed = hogwild::train(mf, ratings.train, nullptr, {}, &mf_at2.state);
  CHECK(mf_resumed.weights == mf_whole.weights);
}

// Trains `config` uninterrupted and resumed after epoch `at`; checks that the resumed run ends
// where the uninterrupted one does (weights, losses, virtual time), and returns whether a run
// resumed without the workers' draws would end elsewhere.
template <class Data>
bool resumes_to_the_same_end(const TrainConfig& config, const Data& train, int at) {
  SavedState saved;
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& s) {
    if (s.epoch == at) saved.take(s);
  };
  const auto whole = hogwild::train(config, train, nullptr, callbacks);
  REQUIRE(saved.state.epoch == at);
  CHECK(saved.state.worker_draws.size() == static_cast<std::size_t>(config.workers()));
  // Through the checkpoint's on-disk form, as `hogwild train --resume` reads it.
  Checkpoint checkpoint = checkpoint_for(config, train);
  record_state(checkpoint, saved.state);
  const Checkpoint loaded = parse_checkpoint(serialize_checkpoint(checkpoint), "c.ckpt");
  CHECK(loaded.worker_draws == saved.state.worker_draws);
  CHECK(loaded.virtual_ns == saved.state.virtual_ns);
  const TrainState state = resume_state(loaded);
  const auto resumed = hogwild::train(config, train, nullptr, {}, &state);
  REQUIRE(resumed.epochs.size() == whole.epochs.size() - static_cast<std::size_t>(at));
  CHECK(resumed.weights == whole.weights);
  for (std::size_t e = 0; e < resumed.epochs.size(); ++e) {
    const auto& expected = whole.epochs[e + static_cast<std::size_t>(at)];
    CHECK(resumed.epochs[e].train.loss == expected.train.loss);
    CHECK(resumed.epochs[e].virtual_seconds == expected.virtual_seconds);
  }
  // Words of another shape (a state not written by this run's workers) are refused.
  TrainState longer = state;
  longer.worker_draws[0].push_back(7);
  CHECK_THROWS_WITH_AS(hogwild::train(config, train, nullptr, {}, &longer),
                       doctest::Contains("the checkpoint's worker_draws: expected"), InputError);
  TrainState seeded = state;
  seeded.worker_draws.clear();
  seeded.virtual_ns = 0;
  const auto from_seeds = hogwild::train(config, train, nullptr, {}, &seeded);
  return from_seeds.weights != whole.weights ||
         from_seeds.epochs.back().virtual_seconds != whole.epochs.back().virtual_seconds;
}

TEST_CASE("injected delays, the speed model and virtual time resume where the run stopped") {
  const auto problem = sparse_problem();
  const auto blob_train = blobs(600, 31);
  DelaySpec trace;
  trace.kind = DelaySpec::Kind::kTrace;
  trace.trace = {0, 3, 1, 4, 1, 5};
  trace.bound = 5;
  trace.text = "trace:inline";
  struct Setting {
    const char* name;
    bool mlp;
    int simulate;
    const char* delay;  // a --delay spec, or "trace" for the one above
    bool virtual_time;
    const char* straggler;
    const char* pause;
    const char* schedule;
  };
  const Setting settings[] = {
      {"serial, geometric delays", false, 0, "geometric:0.3:8", false, "", "", "fixed:1"},
      {"3 simulated, a delay trace", false, 3, "trace", false, "", "", "fixed:1"},
      {"4 simulated, global delays", false, 4, "uniform:3", false, "", "", "fixed:4"},
      {"4 in virtual time, stragglers", false, 4, "none", true, "shifted-exp:1us:4us", "",
       "fixed:1"},
      {"mlp, 3 in virtual time, delays, pauses, time windows", true, 3, "uniform:2", true, "",
       "0.1:3us", "time:20us"},
  };
  for (const auto& setting : settings) {
    const std::string name = setting.name;
    CAPTURE(name);
    TrainConfig config;
    config.seed = 5;
    config.epochs = 4;
    config.optimizer.step = 0.5;
    config.policy = setting.simulate > 0 ? Policy::kRacy : Policy::kSerial;
    config.threads = 1;
    config.simulate = setting.simulate;
    config.delay =
        std::string_view(setting.delay) == "trace" ? trace : DelaySpec::parse(setting.delay);
    config.global_delay = setting.simulate == 4 && !setting.virtual_time;
    config.virtual_time = setting.virtual_time;
    if (*setting.straggler) config.speed.parse_straggler(setting.straggler);
    if (*setting.pause) config.speed.parse_pause(setting.pause);
    config.schedule = ScheduleSpec::parse(setting.schedule);
    if (setting.mlp) {
      config.model = hogwild::MlpModel{};
      std::get<hogwild::MlpModel>(config.model).hidden = {8};
      config.optimizer.kind = OptimizerKind::kSgd;
      config.optimizer.step = 0.1;
      CHECK(resumes_to_the_same_end(config, blob_train, 2));
    } else {
      CHECK(resumes_to_the_same_end(config, problem.train, 2));
    }
  }
}

TEST_CASE("predict with a checkpoint reproduces the trainer's own test evaluation") {
  const auto problem = sparse_problem();
  {
    TrainConfig config;
    config.policy = Policy::kSerial;
    config.epochs = 3;
    const auto report = hogwild::train(config, problem.train, &problem.test);
    Checkpoint c;
    c.model = "logistic";
    c.format = "libsvm";
    c.features = problem.train.num_features;
    c.labels.assign(report.labels.begin(), report.labels.end());
    c.weights = report.weights;
    const auto p = predict(parse_checkpoint(serialize_checkpoint(c), "m"), problem.test);
    REQUIRE(p.values.size() == problem.test.rows());
    CHECK(*p.accuracy ==
          doctest::Approx(report.epochs.back().test->accuracy.value()).epsilon(1e-12));
    CHECK(*p.loss == doctest::Approx(report.epochs.back().test->loss).epsilon(1e-9));
    // Each prediction against the margin computed here from the weights: the probability of
    // the positive label is sigmoid(w . x), the label its side of 0.5; their accuracy is the
    // trainer's.
    std::size_t correct = 0;
    for (std::size_t i = 0; i < problem.test.rows(); ++i) {
      const auto row = problem.test.row(i);
      double m = 0;
      for (std::size_t k = 0; k < row.indices.size(); ++k) {
        if (row.indices[k] < c.weights.size())
          m += double{c.weights[row.indices[k]]} * row.values[k];
      }
      CHECK(p.scores[i] == doctest::Approx(1 / (1 + std::exp(-m))).epsilon(1e-5));
      CHECK(p.margins[i] == doctest::Approx(m).epsilon(1e-5));
      CHECK(p.values[i] == (m > 0 ? c.labels[1] : c.labels[0]));
      correct += p.values[i] == problem.test.labels[i];
    }
    CHECK(static_cast<double>(correct) / static_cast<double>(problem.test.rows()) ==
          doctest::Approx(report.epochs.back().test->accuracy.value()).epsilon(1e-12));
  }
  {
    const auto train = blobs(900, 31);
    const auto test = blobs(300, 32);
    TrainConfig config;
    config.model = hogwild::MlpModel{};
    std::get<hogwild::MlpModel>(config.model).hidden = {10, 6};
    config.threads = 1;
    config.policy = Policy::kSerial;
    config.epochs = 3;
    const auto report = hogwild::train(config, train, &test);
    Checkpoint c;
    c.model = "mlp";
    c.format = "idx";
    c.features = 6;
    c.classes = 3;
    c.hidden = {10, 6};
    c.labels = {3, 5, 9};
    c.weights = report.weights;
    const auto p = predict(c, test);
    CHECK(*p.accuracy == doctest::Approx(*report.epochs.back().test->accuracy));
    // The predicted label is the class of the largest score.
    REQUIRE(p.class_scores.size() == 3 * test.rows());
    for (std::size_t i = 0; i < test.rows(); ++i) {
      const double* s = p.class_scores.data() + 3 * i;
      CHECK(p.values[i] == c.labels[static_cast<std::size_t>(std::max_element(s, s + 3) - s)]);
    }
    CHECK(*p.loss == doctest::Approx(report.epochs.back().test->loss).epsilon(1e-5));
    DenseDataset wide = test;
    wide.cols = 3;
    CHECK_THROWS_WITH_AS(predict(c, wide),
                         "data: expected 6 features per example (as the model), found 3",
                         InputError);
    config.model = hogwild::SoftmaxModel{};
    const auto softmax = hogwild::train(config, train, &test);
    c.model = "softmax";
    c.hidden.clear();
    c.weights = softmax.weights;
    CHECK(*predict(c, test).accuracy == doctest::Approx(*softmax.epochs.back().test->accuracy));
    // A label outside the training classes: IDX labels have a file of their own, which the
    // message names, in predict and in training alike.
    DenseDataset relabelled = test;
    relabelled.source = "t10k-images";
    relabelled.labels_source = "t10k-labels";
    relabelled.labels[1] = 200;
    CHECK_THROWS_WITH_AS(
        predict(c, relabelled),
        "t10k-labels: expected labels among the 3 training classes, found 200 in example 2",
        InputError);
    CHECK_THROWS_WITH_AS(
        hogwild::train(config, train, &relabelled),
        "t10k-labels: expected labels among the 3 training classes, found 200 in example 2",
        InputError);
  }
  {
    RatingsGeneratorConfig g;
    g.users = 150;
    g.items = 90;
    g.rank = 3;
    g.density = 0.2;
    g.test_fraction = 0.1;
    const auto ratings = generate_ratings(g);
    TrainConfig config;
    config.model = hogwild::FactorisationModel{};
    std::get<hogwild::FactorisationModel>(config.model).rank = 3;
    config.epochs = 3;
    config.threads = 1;
    config.policy = Policy::kSerial;
    const auto report = hogwild::train(config, ratings.train, &ratings.test);
    Checkpoint c;
    c.model = "mf";
    c.format = "ratings";
    c.users = report.data.users;
    c.items = report.data.items;
    c.rank = 3;
    double sum = 0;
    for (const float v : ratings.train.values) sum += v;
    c.mean = static_cast<float>(sum / static_cast<double>(ratings.train.size()));
    c.weights = report.weights;
    const auto p = predict(c, ratings.test);
    CHECK(*p.rmse == doctest::Approx(*report.epochs.back().test->rmse).epsilon(1e-9));
    Ratings unseen;
    unseen.append(100000, 3, 1.0f);
    CHECK(predict(c, unseen).values[0] == doctest::Approx(static_cast<float>(c.mean)));
  }
}

TEST_CASE("an intercept model's checkpoint records it and predict appends the constant feature") {
  const auto problem = sparse_problem();
  // The reference: the same weights as a plain model, given rows with the constant feature
  // appended by hand at index `features`.
  Dataset with_bias;
  for (std::size_t i = 0; i < problem.test.rows(); ++i) {
    const auto row = problem.test.row(i);
    std::vector<std::uint32_t> indices(row.indices.begin(), row.indices.end());
    std::vector<float> values(row.values.begin(), row.values.end());
    indices.push_back(static_cast<std::uint32_t>(problem.train.num_features));
    values.push_back(1.0f);
    with_bias.append(indices, values, problem.test.labels[i]);
  }
  Checkpoint plain;
  plain.model = "logistic";
  plain.format = "libsvm";
  plain.config = "{}";
  plain.features = problem.train.num_features + 1;
  plain.labels = {-1, 1};
  hogwild::detail::Rng rng(5);
  for (std::size_t j = 0; j < plain.features; ++j) {
    plain.weights.push_back(static_cast<float>(0.3 * rng.normal()));
  }
  Checkpoint intercept = plain;
  intercept.intercept = true;
  const Checkpoint read = parse_checkpoint(serialize_checkpoint(intercept), "i.ckpt");
  CHECK(read.intercept);
  CHECK_FALSE(parse_checkpoint(serialize_checkpoint(plain), "p.ckpt").intercept);
  const auto expected = predict(plain, with_bias);
  const auto found = predict(read, problem.test);
  CHECK(found.margins == expected.margins);
  CHECK(found.values == expected.values);
  CHECK(*found.loss == *expected.loss);
  // Rows that carry the constant already keep one: what lies at the bias's index or beyond is
  // beyond the model's input, ignored as a plain model ignores what lies beyond its dimension.
  const auto carried = predict(read, with_bias);
  CHECK(carried.margins == expected.margins);
  // Only a linear model has one.
  auto softmax = sample_checkpoint();
  softmax.intercept = true;
  CHECK(rejection(serialize_checkpoint(softmax))
            .find("expected an intercept only in a linear "
                  "model") != std::string::npos);
}

namespace {

// CRC-32 (the IEEE polynomial, reflected, as zlib computes it) bit by bit: a reference that
// shares no code with the library's.
std::uint32_t crc32_bitwise(const std::string& bytes) {
  std::uint32_t crc = 0xffffffffu;
  for (const char ch : bytes) {
    crc ^= static_cast<unsigned char>(ch);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

template <class T>
void append_bytes(std::string& out, const T& value) {
  char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  out.append(raw, sizeof(T));
}

}  // namespace

TEST_CASE("the training data's fingerprint: a CRC-32 of the examples, row after row") {
  Dataset d;
  const std::uint32_t i0[] = {0, 3};
  const float v0[] = {0.5f, -2};
  const std::uint32_t i1[] = {1};
  const float v1[] = {4};
  d.append(i0, v0, 1);
  d.append(i1, v1, -1);
  std::string bytes;  // label, u64 count, indices, values: each row in turn
  append_bytes(bytes, 1.0f);
  append_bytes(bytes, std::uint64_t{2});
  for (const auto i : i0) append_bytes(bytes, i);
  for (const auto v : v0) append_bytes(bytes, v);
  append_bytes(bytes, -1.0f);
  append_bytes(bytes, std::uint64_t{1});
  append_bytes(bytes, i1[0]);
  append_bytes(bytes, v1[0]);
  const DataFingerprint f = data_fingerprint(d);
  CHECK(f.rows == 2);
  CHECK(f.entries == 3);
  CHECK(f.bytes == bytes.size());
  CHECK(f.crc == crc32_bitwise(bytes));
  CHECK(data_fingerprint(Dataset{}).crc == 0);  // no bytes: zlib's initial value

  // One value, one label, one index, or a nonzero moved to the next row: another fingerprint.
  Dataset value = d, label = d, index = d, moved = d;
  value.values[2] = 4.0001f;
  label.labels[0] = -1;
  index.indices[1] = 2;
  moved.row_offsets[1] = 1;
  for (const Dataset* other : {&value, &label, &index, &moved}) {
    CHECK(data_fingerprint(*other) != f);
  }
  CHECK(data_fingerprint(moved).entries == f.entries);

  DenseDataset images;
  images.cols = 3;
  images.bytes = {0, 255, 7, 1, 2, 3};
  images.labels = {4, 9};
  const DataFingerprint fi = data_fingerprint(images);
  CHECK(fi.rows == 2);
  CHECK(fi.entries == 6);
  std::string dense;
  append_bytes(dense, std::int32_t{4});
  dense += std::string("\x00\xff\x07", 3);
  append_bytes(dense, std::int32_t{9});
  dense += std::string("\x01\x02\x03", 3);
  CHECK(fi.crc == crc32_bitwise(dense));
  DenseDataset pixel = images, image_label = images;
  pixel.bytes[4] = 200;
  image_label.labels[1] = 8;
  CHECK(data_fingerprint(pixel) != fi);
  CHECK(data_fingerprint(image_label) != fi);
  DenseDataset floats;  // the same numbers stored as floats are another dataset's bytes
  floats.cols = 3;
  floats.features = {0, 1, 7.0f / 255, 1.0f / 255, 2.0f / 255, 3.0f / 255};
  floats.labels = images.labels;
  CHECK(data_fingerprint(floats).crc != fi.crc);

  Ratings r;
  r.append(0, 1, 4.5f);
  r.append(2, 0, 3);
  const DataFingerprint fr = data_fingerprint(r);
  CHECK(fr.rows == 2);
  CHECK(fr.entries == 2);
  std::string triples;
  for (std::size_t k = 0; k < r.size(); ++k) {
    append_bytes(triples, r.users[k]);
    append_bytes(triples, r.items[k]);
    append_bytes(triples, r.values[k]);
  }
  CHECK(fr.crc == crc32_bitwise(triples));
  Ratings user = r, item = r, rating = r;
  user.users[1] = 1;
  item.items[0] = 2;
  rating.values[0] = 4;
  for (const Ratings* other : {&user, &item, &rating}) CHECK(data_fingerprint(*other) != fr);
}

TEST_CASE("a file's fingerprint: equal when loaded twice, and its parts combine to it") {
  const auto problem = sparse_problem();
  const auto dir = scratch_dir("fingerprint");
  const fs::path file = dir / "train.svm";
  write_libsvm(problem.train, file);
  const Dataset first = read_libsvm(file, {.threads = 1});
  const Dataset again = read_libsvm(file, {.threads = 2});
  const DataFingerprint whole = data_fingerprint(first);
  CHECK(whole.rows == problem.train.rows());
  CHECK(whole.entries == problem.train.nnz());
  CHECK(data_fingerprint(again) == whole);
  // What processes that each read a part agree on (Processes::whole_fingerprint): the parts'
  // fingerprints in order combine to the whole file's, at any number of parts.
  for (const int parts : {2, 3, 7}) {
    DataFingerprint combined = data_fingerprint(read_libsvm_part(file, {0, parts}));
    for (int p = 1; p < parts; ++p) {
      combined =
          combine_fingerprints(combined, data_fingerprint(read_libsvm_part(file, {p, parts})));
    }
    CHECK(combined == whole);
  }
  // The same rows in another order are other data (a shuffled copy of the file).
  Dataset shuffled = first;
  shuffle_rows(shuffled, 5);
  CHECK(data_fingerprint(shuffled) != whole);
  fs::remove_all(dir);
}

TEST_CASE("resuming compares the training data's fingerprint where both sides record it") {
  const auto problem = sparse_problem();
  TrainConfig config;
  config.policy = Policy::kSerial;
  config.epochs = 1;
  Checkpoint run = checkpoint_for(config, problem.train);
  CHECK(!run.training_data);  // checkpoint_for, which every train() call uses, leaves it out
  run.training_data = data_fingerprint(problem.train);
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& state) { record_state(run, state); };
  hogwild::train(config, problem.train, nullptr, callbacks);
  const Checkpoint saved = parse_checkpoint(serialize_checkpoint(run), "c.ckpt");
  REQUIRE(saved.training_data);
  CHECK(*saved.training_data == *run.training_data);

  Checkpoint expected = checkpoint_for(config, problem.train);
  expected.training_data = data_fingerprint(problem.train);
  CHECK_NOTHROW(check_resumes(saved, expected, "c.ckpt"));
  // Data of the same shape with one value changed.
  Dataset other = problem.train;
  other.values[other.nnz() / 2] += 1;
  expected.training_data = data_fingerprint(other);
  const auto message = [&](const DataFingerprint& f) {
    return fmt::format("{} rows, {} nonzeros, CRC-32 {:08x}", f.rows, f.entries, f.crc);
  };
  CHECK_THROWS_WITH_AS(
      check_resumes(saved, expected, "c.ckpt", {.data_name = "other.svm"}),
      fmt::format("c.ckpt: expected the training data the checkpoint was written on ({}), found "
                  "{} in other.svm",
                  message(*saved.training_data), message(*expected.training_data))
          .c_str(),
      InputError);

  // A checkpoint without the fingerprint (written before it was recorded, or by a caller that
  // does not compute it) resumes unchecked, and its file reads as before: no key at all.
  Checkpoint old = run;
  old.training_data.reset();
  const std::string old_bytes = serialize_checkpoint(old);
  CHECK(old_bytes.find("training_data") == std::string::npos);
  const Checkpoint old_loaded = parse_checkpoint(old_bytes, "old.ckpt");
  CHECK(!old_loaded.training_data);
  CHECK_NOTHROW(check_resumes(old_loaded, expected, "old.ckpt"));
  const TrainState state = resume_state(old_loaded);
  config.epochs = 2;
  CHECK(hogwild::train(config, problem.train, nullptr, {}, &state).resumed_from == 1);
}
