#include "engine/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <span>

#include "engine/minibatch.h"
#include "engine/rng.h"
#include "engine/workers.h"
#include "hogwild/error.h"

namespace hogwild::detail {

namespace {

using Clock = std::chrono::steady_clock;

// Workers look at the stop flag between stretches of this many positions, never per sample.
constexpr std::size_t kStopStretch = 4096;

// One epoch's row order and the split of it into workers' slices and segments.
class EpochPlan {
 public:
  EpochPlan(const DriverConfig& config, std::span<const std::uint32_t> order)
      : config_(config), order_(order) {}

  // Worker w's slice of the epoch's order.
  std::span<const std::uint32_t> slice(int worker) const {
    const std::size_t n = order_.size();
    const auto workers = static_cast<std::size_t>(config_.workers);
    const std::size_t begin = n * static_cast<std::size_t>(worker) / workers;
    const std::size_t end = n * static_cast<std::size_t>(worker + 1) / workers;
    return order_.subspan(begin, end - begin);
  }
  // Start of segment k of a sequence of `len` positions.
  std::size_t part(std::size_t len, int k) const {
    return segment_start(len, k, config_.evals_per_epoch);
  }
  std::span<const std::uint32_t> order() const { return order_; }

 private:
  const DriverConfig& config_;
  std::span<const std::uint32_t> order_;
};

class Driver {
 public:
  Driver(const DriverConfig& config, Kernel& kernel, const DriverHooks& hooks)
      : config_(config), kernel_(kernel), hooks_(hooks) {}

  DriverResult run(const TrainState* resume) {
    const int first_epoch = resume ? resume->epoch + 1 : 1;
    if (resume && (resume->epoch < 0 || resume->epoch > config_.epochs)) {
      throw InputError(
          fmt::format("--epochs: expected at least the {} epochs already done, found {}",
                      resume->epoch, config_.epochs));
    }
    if (resume) {
      result_.elapsed = resume->elapsed;
      result_.samples = resume->samples;
    }
    result_.resumed_from = first_epoch - 1;
    // A resumed run starts its records with the model it resumed from.
    EpochRecord initial = evaluated();
    initial.epoch = first_epoch - 1;
    initial.elapsed = result_.elapsed;
    initial.step = kernel_.step_of(initial.epoch, true);
    initial_loss_ = resume ? resume->initial_loss : initial.train.loss;
    best_loss_ = stopping_loss(initial);
    record(initial);

    std::vector<std::uint32_t> order(config_.rows);
    std::iota(order.begin(), order.end(), 0u);
    // Each epoch shuffles the order the previous one left, so a resumed run replays the
    // shuffles of the epochs already done: its epochs then see the orders an uninterrupted run
    // sees. Block order does not depend on earlier epochs.
    if (config_.block_rows == 0) {
      for (int epoch = 1; epoch < first_epoch; ++epoch) shuffle_epoch(order, config_.seed, epoch);
    }
    for (int epoch = first_epoch; epoch <= config_.epochs; ++epoch) {
      if (config_.block_rows > 0) {
        block_order(order, config_.block_rows, config_.seed, epoch);
      } else {
        shuffle_epoch(order, config_.seed, epoch);
      }
      if (!run_epoch(epoch, EpochPlan(config_, order))) {
        // The unfinished epoch is not recorded: the last completed one is what a checkpoint
        // holds and what a resumed run continues from.
        result_.interrupted = true;
        break;
      }
      if (converged(stopping_loss(result_.epochs.back()))) {
        result_.converged = true;
        break;
      }
    }
    return std::move(result_);
  }

 private:
  // The evaluations of the parameters at an epoch's end: training, test and held-out data.
  EpochRecord evaluated() {
    EpochRecord record = kernel_.evaluate(true);
    if (hooks_.held_out) {
      TrainState state;
      kernel_.fill_state(state);
      record.validation = hooks_.held_out(state.weights);
    }
    return record;
  }

  // The loss --patience watches: the held-out loss when examples are held out, else the
  // training loss.
  static double stopping_loss(const EpochRecord& record) {
    return record.validation ? record.validation->loss : record.train.loss;
  }

  // --patience N: converged once N epochs in a row end with a loss that is not --tol below the
  // best loss before them, the initial model's included.
  bool converged(double loss) {
    if (config_.patience <= 0) return false;
    epochs_without_improvement_ =
        loss > best_loss_ - config_.tol ? epochs_without_improvement_ + 1 : 0;
    best_loss_ = std::min(best_loss_, loss);
    return epochs_without_improvement_ >= config_.patience;
  }

  bool stop_requested() const {
    return hooks_.stop != nullptr && hooks_.stop->load(std::memory_order_relaxed);
  }

  // Trains one epoch in --evals-per-epoch segments; false when the stop flag cut it short.
  bool run_epoch(int epoch, const EpochPlan& plan) {
    kernel_.begin_epoch(epoch);
    double seconds = 0;
    const int segments = config_.evals_per_epoch;
    for (int segment = 0; segment < segments; ++segment) {
      const bool last_segment = segment + 1 == segments;
      const auto start = Clock::now();
      if (config_.simulate) {
        simulate_segment(plan, segment, last_segment);
      } else if (config_.dynamic_sharding) {
        share_segment(plan, segment, last_segment);
      } else {
        slice_segment(plan, segment, last_segment);
      }
      seconds += std::chrono::duration<double>(Clock::now() - start).count();
      if (stop_requested()) break;
      if (!last_segment) {
        // A point of the loss curve within the epoch; evaluation time is not training time.
        const EpochRecord probe = kernel_.evaluate(false);
        result_.curve.push_back({result_.elapsed + seconds, kernel_.applied(), probe.train.loss});
      }
    }
    result_.elapsed += seconds;
    if (stop_requested()) return false;
    result_.samples += config_.rows;
    EpochRecord done = evaluated();
    done.epoch = epoch;
    done.seconds = seconds;
    done.elapsed = result_.elapsed;
    done.step = kernel_.step_of(epoch, false);
    record(done);
    if (hooks_.on_epoch_state) {
      TrainState state;
      state.epoch = epoch;
      state.initial_loss = initial_loss_;
      state.elapsed = result_.elapsed;
      state.samples = result_.samples;
      kernel_.fill_state(state);
      hooks_.on_epoch_state(state);
    }
    return true;
  }

  // Keeps an epoch's record and its point of the curve, stops a diverged run, tells the caller.
  void record(const EpochRecord& epoch) {
    result_.epochs.push_back(epoch);
    result_.curve.push_back({epoch.elapsed, kernel_.applied(), epoch.train.loss});
    check_divergence(epoch);
    if (hooks_.on_epoch) hooks_.on_epoch(epoch);
  }

  void check_divergence(const EpochRecord& epoch) const {
    const double loss = epoch.train.loss;
    const double bound = config_.divergence_factor * std::max(initial_loss_, 1e-12);
    if (std::isfinite(loss) && !(loss > bound)) return;
    const std::string what =
        std::isfinite(loss)
            ? fmt::format("grew to {:.6g}, beyond {}x its initial {:.6g}", loss,
                          config_.divergence_factor, initial_loss_)
            : fmt::format("became {} (it was {:.6g} at the start)", loss, initial_loss_);
    throw DivergenceError(fmt::format(
        "epoch {}: training loss {}; the run diverged: try a smaller --step (this epoch used "
        "{:.6g})",
        epoch.epoch, what, epoch.step));
  }

  // Static sharding: each worker trains its slice's share of the segment, in stretches
  // between which it looks at the stop flag.
  void slice_segment(const EpochPlan& plan, int segment, bool last_segment) {
    run_workers(config_.workers, [&](int worker) {
      const auto slice = plan.slice(worker);
      const std::size_t end = plan.part(slice.size(), segment + 1);
      for (std::size_t first = plan.part(slice.size(), segment); first < end;) {
        if (stop_requested() || kernel_.failed()) break;
        const std::size_t last = std::min(end, first + kStopStretch);
        kernel_.run_range(worker, slice.data(), first, last, slice.size());
        first = last;
      }
      kernel_.end_segment(worker, last_segment);
    });
  }

  // Dynamic sharding: workers claim chunks of the segment from a shared cursor (one atomic
  // add per chunk), so a slow worker processes fewer samples.
  void share_segment(const EpochPlan& plan, int segment, bool last_segment) {
    const std::size_t n = plan.order().size();
    const std::size_t end = plan.part(n, segment + 1);
    std::atomic<std::size_t> cursor{plan.part(n, segment)};
    run_workers(config_.workers, [&](int worker) {
      for (;;) {
        if (stop_requested() || kernel_.failed()) break;
        const std::size_t first = cursor.fetch_add(kShardChunk, std::memory_order_relaxed);
        if (first >= end) break;
        kernel_.run_range(worker, plan.order().data(), first, std::min(end, first + kShardChunk),
                          n);
      }
      kernel_.end_segment(worker, last_segment);
    });
  }

  // Simulation: virtual workers in lockstep on this thread, one round of the kernel's
  // positions each per turn: deterministic.
  void simulate_segment(const EpochPlan& plan, int segment, bool last_segment) {
    const std::size_t round = kernel_.round_positions();
    std::size_t rounds = 0;
    for (int k = 0; k < config_.workers; ++k) {
      const std::size_t len = plan.slice(k).size();
      const std::size_t share = plan.part(len, segment + 1) - plan.part(len, segment);
      rounds = std::max(rounds, (share + round - 1) / round);
    }
    const std::size_t poll_every = std::max<std::size_t>(1, kStopStretch / round);
    for (std::size_t r = 0; r < rounds; ++r) {
      if (r % poll_every == 0 && stop_requested()) break;
      for (int k = 0; k < config_.workers; ++k) {
        const auto slice = plan.slice(k);
        const std::size_t first = plan.part(slice.size(), segment) + r * round;
        const std::size_t end = plan.part(slice.size(), segment + 1);
        if (first >= end) continue;
        const std::size_t last = std::min(end, first + round);
        kernel_.run_range(k, slice.data(), first, last, slice.size());
        if (last == end) kernel_.part_done(k);
      }
    }
    for (int k = 0; k < config_.workers; ++k) kernel_.end_segment(k, last_segment);
  }

  const DriverConfig& config_;
  Kernel& kernel_;
  const DriverHooks& hooks_;
  DriverResult result_;
  double initial_loss_ = 0;
  double best_loss_ = 0;                // the lowest training loss so far (patience)
  int epochs_without_improvement_ = 0;  // in a row, up to the last epoch
};

}  // namespace

DriverResult drive(const DriverConfig& config, Kernel& kernel, const DriverHooks& hooks,
                   const TrainState* resume) {
  return Driver(config, kernel, hooks).run(resume);
}

void drive_into(Report& report, const DriverConfig& config, Kernel& kernel,
                const Callbacks& callbacks, const TrainState* resume,
                std::span<const WorkerStats* const> workers, const ParamStore& store) {
  const DriverHooks hooks{callbacks.on_epoch, callbacks.on_epoch_state, callbacks.stop,
                          callbacks.held_out};
  DriverResult result = drive(config, kernel, hooks, resume);
  report.epochs = std::move(result.epochs);
  report.curve = std::move(result.curve);
  report.samples = result.samples;
  report.interrupted = result.interrupted;
  report.stopped = result.interrupted ? StopReason::kInterrupted
                   : result.converged ? StopReason::kConverged
                                      : StopReason::kEpochs;
  report.resumed_from = result.resumed_from;
  report.train_seconds = result.elapsed;
  report.samples_per_second =
      result.elapsed > 0 ? static_cast<double>(report.samples) / result.elapsed : 0.0;
  report.weights = store.snapshot();
  summarise_workers(workers, config.rows, report);
}

}  // namespace hogwild::detail
