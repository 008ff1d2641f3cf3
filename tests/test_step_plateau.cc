// --step-schedule plateau: the rule one epoch at a time; runs whose recorded steps and stopping
// epoch are re-derived here from their own recorded losses, serial and at several thread
// counts; a serial run that is the constant-step run until its first cut; a resumed run that
// ends where the uninterrupted one does; bad values refused.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "engine/step_plateau.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/optimizer.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;
using Outcome = detail::StepPlateau::Outcome;

namespace {

// The factor on the initial step in each epoch (epoch 1 first) and the epoch a run stops at,
// from the losses of its records (epoch 0 first): the rule, written out again here.
struct Derived {
  std::vector<double> scales;
  int stop = -1;  // -1: the rule does not end the run within these records
};

Derived derive(const std::vector<EpochRecord>& epochs, int patience, double factor,
               double threshold) {
  Derived d;
  double scale = 1;
  double best = epochs[0].train.loss;
  int without = 0;
  for (std::size_t e = 1; e < epochs.size(); ++e) {
    d.scales.push_back(scale);
    const double loss = epochs[e].train.loss;
    without = loss > best * (1 - threshold) ? without + 1 : 0;  // losses are >= 0
    best = std::min(best, loss);
    if (without < patience) continue;
    without = 0;
    if (scale * factor < 0.01) {
      d.stop = static_cast<int>(e);
      break;
    }
    scale *= factor;
  }
  return d;
}

TrainConfig plateau_run(ModelSpec model, int epochs, double step) {
  TrainConfig config;
  config.model = std::move(model);
  config.policy = Policy::kSerial;
  config.epochs = epochs;
  config.optimizer.step = step;
  config.optimizer.schedule = Schedule::kPlateau;
  config.optimizer.plateau_patience = 1;
  config.optimizer.plateau_threshold = 1e-2;
  return config;
}

// Checks a run's recorded steps and its end against the rule applied to its own losses.
void check_follows_rule(const Report& report, const TrainConfig& config) {
  const auto& o = config.optimizer;
  const Derived d =
      derive(report.epochs, o.plateau_patience, o.plateau_factor, o.plateau_threshold);
  REQUIRE(d.scales.size() == report.epochs.size() - 1);
  for (std::size_t e = 1; e < report.epochs.size(); ++e) {
    CAPTURE(e);
    CHECK(report.epochs[e].step == doctest::Approx(*o.step * d.scales[e - 1]).epsilon(1e-12));
  }
  if (d.stop >= 0) {
    CHECK(report.stopped == StopReason::kPlateau);
    CHECK(report.epochs.back().epoch == d.stop);
  } else {
    CHECK(report.stopped == StopReason::kEpochs);
    CHECK(report.epochs.back().epoch == config.epochs);
  }
}

Ratings sparse_ratings() {
  RatingsGeneratorConfig g;
  g.users = 300;
  g.items = 200;
  g.rank = 3;
  g.density = 0.1;
  g.noise = 0.5;
  g.seed = 12;
  return generate_ratings(g).train;
}

}  // namespace

TEST_CASE("the plateau rule: patience epochs without a relative improvement cut the step") {
  detail::StepPlateau p(2, 0.2, 0.01, 1.0);
  CHECK(p.scale() == 1);
  CHECK(p.observe(0.9) == Outcome::kHold);    // improved
  CHECK(p.observe(0.895) == Outcome::kHold);  // not by 1% of 0.9: one epoch
  CHECK(p.observe(0.899) == Outcome::kCut);   // two: a plateau
  CHECK(p.scale() == doctest::Approx(0.2));
  CHECK(p.state().wait == 0);
  CHECK(p.observe(0.85) == Outcome::kHold);  // 5% below the best of 0.895
  CHECK(p.observe(0.86) == Outcome::kHold);
  CHECK(p.observe(0.86) == Outcome::kCut);
  CHECK(p.scale() == doctest::Approx(0.04));
  CHECK(p.observe(0.83) == Outcome::kHold);  // 2.4% below the best of 0.85
  CHECK(p.observe(0.83) == Outcome::kHold);
  CHECK(p.observe(0.83) == Outcome::kEnd);  // 0.04 x 0.2 is below the floor of 1/100
  CHECK(p.scale() == doctest::Approx(0.04));

  // A factor of 1/10 cuts twice: 1/10, then 1/100 (the floor itself), then ends.
  detail::StepPlateau tenth(1, 0.1, 0.0, 1.0);
  CHECK(tenth.observe(1.0) == Outcome::kHold);  // with tol 0, equal is no worse: no plateau
  CHECK(tenth.observe(1.5) == Outcome::kCut);
  CHECK(tenth.observe(1.5) == Outcome::kCut);
  CHECK(tenth.scale() == doctest::Approx(0.01));
  CHECK(tenth.observe(2.0) == Outcome::kEnd);

  // Restored, it continues where the state says.
  detail::StepPlateau restored(2, 0.2, 0.01, 5.0);
  restored.restore({0.2, 0.5, 1});
  CHECK(restored.observe(0.6) == Outcome::kCut);
  CHECK(restored.scale() == doctest::Approx(0.04));
}

TEST_CASE("a serial run's steps and end follow the rule on its own losses") {
  const auto problem = test::sparse_problem(2000, 300, 10, 21);
  for (const double factor : {0.2, 0.5}) {
    CAPTURE(factor);
    auto config = plateau_run(LinearModel{}, 300, 0.5);
    config.optimizer.plateau_factor = factor;
    const auto report = train(config, problem.train, nullptr);
    check_follows_rule(report, config);
    REQUIRE(report.stopped == StopReason::kPlateau);  // this problem does reach the floor
    const Derived d = derive(report.epochs, 1, factor, config.optimizer.plateau_threshold);
    // Until the first cut the run is the constant-step run, bit for bit.
    auto constant = config;
    constant.optimizer.schedule = Schedule::kConstant;
    constant.epochs = report.epochs.back().epoch;
    const auto same = train(constant, problem.train, nullptr);
    std::size_t first_cut = 1;
    while (first_cut < d.scales.size() && d.scales[first_cut] == 1) ++first_cut;
    REQUIRE(first_cut < report.epochs.size());
    for (std::size_t e = 0; e <= first_cut; ++e) {
      CAPTURE(e);
      CHECK(report.epochs[e].train.loss == same.epochs[e].train.loss);
    }
    // After it, the smaller step moves the run elsewhere.
    CHECK(report.epochs.back().train.loss != same.epochs.back().train.loss);
  }
}

TEST_CASE("threaded factorisations follow the rule on their own losses at every thread count") {
  const Ratings ratings = sparse_ratings();
  for (const int threads : {1, 2, 4}) {
    CAPTURE(threads);
    auto config = plateau_run(FactorisationModel{3}, 120, 0.05);
    config.policy = Policy::kRacy;
    config.threads = threads;
    config.optimizer.plateau_patience = 2;
    const auto report = train(config, ratings, nullptr);
    check_follows_rule(report, config);
    CHECK(report.epochs.back().step < *config.optimizer.step);  // it did meet a plateau
  }
}

TEST_CASE("a plateau run resumed from its checkpoint ends where the uninterrupted run does") {
  const Ratings ratings = sparse_ratings();
  const auto config = plateau_run(FactorisationModel{3}, 150, 0.05);
  const auto whole = train(config, ratings, nullptr);
  const Derived d = derive(whole.epochs, 1, 0.2, config.optimizer.plateau_threshold);
  REQUIRE(d.stop > 0);
  // Resume after the first epoch at a cut step, with the cut's state in the checkpoint.
  std::size_t resume_at = 1;
  while (d.scales[resume_at] == 1) ++resume_at;
  ++resume_at;
  REQUIRE(resume_at < d.scales.size());
  const auto file = std::filesystem::temp_directory_path() / "hogwild_test_plateau.ckpt";
  Checkpoint run = checkpoint_for(config, ratings);
  Callbacks callbacks;
  callbacks.on_epoch_state = [&](const TrainState& state) {
    if (state.epoch != static_cast<int>(resume_at)) return;
    record_state(run, state);
    save_checkpoint(file, run);
  };
  CHECK(train(config, ratings, nullptr, callbacks).weights == whole.weights);
  const Checkpoint loaded = load_checkpoint(file);
  CHECK(loaded.plateau.scale < 1);
  CHECK(loaded.plateau.scale == doctest::Approx(d.scales[resume_at]));  // the next epoch's
  const TrainState state = resume_state(loaded);
  const auto resumed = train(config, ratings, nullptr, {}, &state);
  CHECK(resumed.stopped == StopReason::kPlateau);
  REQUIRE(resumed.epochs.back().epoch == whole.epochs.back().epoch);
  for (std::size_t e = 1; e < resumed.epochs.size(); ++e) {
    CAPTURE(e);
    CHECK(resumed.epochs[e].step == whole.epochs[resume_at + e].step);
    CHECK(resumed.epochs[e].train.loss == whole.epochs[resume_at + e].train.loss);
  }
  CHECK(resumed.weights == whole.weights);
  // Resumed from the epoch where the plateau ended it, the run ends there: no epoch trained.
  run = checkpoint_for(config, ratings);
  callbacks.on_epoch_state = [&](const TrainState& state) {
    if (state.epoch == whole.epochs.back().epoch) record_state(run, state);
  };
  (void)train(config, ratings, nullptr, callbacks);
  const Checkpoint last = parse_checkpoint(serialize_checkpoint(run), "last.ckpt");
  CHECK(last.plateau.ended);
  const TrainState at_end = resume_state(last);
  const auto again = train(config, ratings, nullptr, {}, &at_end);
  CHECK(again.stopped == StopReason::kPlateau);
  CHECK(again.epochs.size() == 1);
  CHECK(again.weights == whole.weights);
  std::filesystem::remove(file);
}

TEST_CASE("the plateau schedule's bad values are refused") {
  OptimizerConfig o;
  o.plateau_patience = 0;
  CHECK_THROWS_WITH_AS(o.validate(), "--plateau-patience: expected a count of epochs >= 1, found 0",
                       InputError);
  o.plateau_patience = 2;
  for (const double factor : {0.0, 1.0, -0.5}) {
    o.plateau_factor = factor;
    CHECK_THROWS_AS(o.validate(), InputError);
  }
  o.plateau_factor = 0.5;
  CHECK_NOTHROW(o.validate());
  for (const double threshold : {-0.1, 1.0}) {
    o.plateau_threshold = threshold;
    CHECK_THROWS_WITH_AS(o.validate(),
                         doctest::Contains("--plateau-threshold: expected a fraction"), InputError);
  }
  CHECK(parse_schedule("plateau") == Schedule::kPlateau);
}
