#include "engine/driver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <queue>
#include <span>
#include <string>

#include "engine/data_parts.h"
#include "engine/minibatch.h"
#include "engine/rng.h"
#include "engine/staleness_bound.h"
#include "engine/step_plateau.h"
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
  // Across processes the epoch splits into ranks x workers slices, this process's workers
  // taking slices rank x workers onwards.
  EpochPlan(const DriverConfig& config, std::span<const std::uint32_t> order, int rank = 0,
            int ranks = 1)
      : config_(config), order_(order), rank_(rank), ranks_(ranks) {}

  // Worker w's slice of the epoch's order.
  std::span<const std::uint32_t> slice(int worker) const {
    const std::size_t n = order_.size();
    const auto workers = static_cast<std::size_t>(config_.workers);
    const std::size_t all = workers * static_cast<std::size_t>(ranks_);
    const std::size_t global =
        static_cast<std::size_t>(rank_) * workers + static_cast<std::size_t>(worker);
    const std::size_t begin = n * global / all;
    const std::size_t end = n * (global + 1) / all;
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
  int rank_;
  int ranks_;
};

// An epoch record as numbers, for a broadcast between processes: an absent optional is a
// presence flag of 0.
void pack_evaluation(const std::optional<Evaluation>& e, std::vector<double>& out) {
  out.push_back(e ? 1.0 : 0.0);
  const Evaluation v = e.value_or(Evaluation{});
  for (const auto& field : {v.objective, v.accuracy, v.rmse}) {
    out.push_back(field ? 1.0 : 0.0);
    out.push_back(field.value_or(0.0));
  }
  out.push_back(v.loss);
}

std::optional<Evaluation> unpack_evaluation(std::span<const double>& in) {
  const bool present = in[0] != 0;
  Evaluation v;
  std::optional<double>* fields[] = {&v.objective, &v.accuracy, &v.rmse};
  for (std::size_t f = 0; f < 3; ++f) {
    if (in[1 + 2 * f] != 0) *fields[f] = in[2 + 2 * f];
  }
  v.loss = in[7];
  in = in.subspan(8);
  return present ? std::optional(v) : std::nullopt;
}

std::vector<double> pack_record(const EpochRecord& r) {
  std::vector<double> out{
      static_cast<double>(r.epoch),   r.seconds, r.elapsed, r.step, r.virtual_seconds ? 1.0 : 0.0,
      r.virtual_seconds.value_or(0.0)};
  pack_evaluation(r.train, out);
  pack_evaluation(r.test, out);
  pack_evaluation(r.validation, out);
  return out;
}

EpochRecord unpack_record(std::span<const double> in) {
  EpochRecord r;
  r.epoch = static_cast<int>(in[0]);
  r.seconds = in[1];
  r.elapsed = in[2];
  r.step = in[3];
  if (in[4] != 0) r.virtual_seconds = in[5];
  in = in.subspan(6);
  r.train = *unpack_evaluation(in);
  r.test = unpack_evaluation(in);
  r.validation = unpack_evaluation(in);
  return r;
}

class Driver {
 public:
  Driver(const DriverConfig& config, Kernel& kernel, const DriverHooks& hooks)
      : config_(config),
        kernel_(kernel),
        hooks_(hooks),
        part_(hooks.exchange != nullptr && hooks.data_part),
        // Parts of the data: each process shuffles its own rows, in an order of its own.
        order_seed_(part_ ? derive_seed(config.seed, 0x9a47000u + static_cast<std::uint64_t>(
                                                                      hooks.exchange->rank()))
                          : config.seed) {
    if (config.staleness_bound >= 0) {
      const auto workers = static_cast<std::size_t>(config.workers);
      result_.bound_waits.assign(workers, 0);
      result_.bound_wait_seconds.assign(workers, 0.0);
      if (!config.simulate) bound_.emplace(kernel.published_counts(), config.staleness_bound);
    }
    if (hooks.exchange != nullptr &&
        (config.simulate || config.dynamic_sharding || config.staleness_bound >= 0)) {
      throw InputError(
          "--sync: expected threads with static sharding and no --bounded-staleness across "
          "processes, found --simulate, --sharding dynamic or --bounded-staleness");
    }
  }

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
      // Virtual time goes on from the checkpoint's epoch end, where every worker's clock stood
      // at the start of the next epoch.
      if (config_.virtual_time) {
        for (WorkerClock* clock : hooks_.clocks) clock->wait_until(resume->virtual_ns);
      }
    }
    result_.resumed_from = first_epoch - 1;
    epoch_samples_ = total_rows();
    // A resumed run starts its records with the model it resumed from.
    EpochRecord initial =
        hooks_.initial_evaluation && !resume ? *hooks_.initial_evaluation : evaluated();
    initial.epoch = first_epoch - 1;
    initial.elapsed = result_.elapsed;
    if (config_.virtual_time) initial.virtual_seconds = virtual_seconds();
    initial_loss_ = resume ? resume->initial_loss : initial.train.loss;
    best_loss_ = stopping_loss(initial);
    // --patience goes on counting where the checkpoint's epoch left it (before it was kept,
    // a resumed run counted from the epoch it resumed and could stop later than the
    // uninterrupted run).
    if (resume && resume->patience) {
      best_loss_ = resume->patience->best;
      epochs_without_improvement_ = resume->patience->wait;
      // A run resumed from the epoch where --patience ended it ends there too.
      converged_ = config_.patience > 0 && epochs_without_improvement_ >= config_.patience;
    }
    if (config_.plateau) {
      plateau_.emplace(config_.plateau_patience, config_.plateau_factor, config_.plateau_threshold,
                       best_loss_);
      if (resume) plateau_->restore(resume->plateau);
      kernel_.scale_step(plateau_->scale());
      // A run resumed from the epoch where its plateau ended it ends there too.
      plateau_end_ = resume && resume->plateau.ended;
    }
    initial.step = kernel_.step_of(initial.epoch, true);
    if (!record(initial)) return std::move(result_);
    if (converged_ || plateau_end_) {
      result_.converged = converged_;
      result_.plateau_end = plateau_end_;
      return std::move(result_);
    }

    std::vector<std::uint32_t> order(config_.rows);
    std::iota(order.begin(), order.end(), 0u);
    // Each epoch shuffles the order the previous one left, so a resumed run replays the
    // shuffles of the epochs already done: its epochs then see the orders an uninterrupted run
    // sees. Block order does not depend on earlier epochs.
    if (config_.block_rows == 0) {
      for (int epoch = 1; epoch < first_epoch; ++epoch) shuffle_epoch(order, order_seed_, epoch);
    }
    for (int epoch = first_epoch; epoch <= config_.epochs; ++epoch) {
      if (config_.block_rows > 0) {
        block_order(order, config_.block_rows, order_seed_, epoch);
      } else {
        shuffle_epoch(order, order_seed_, epoch);
      }
      // All of the data on every process: the epoch splits across every process's workers.
      const Exchange* slicing = part_ ? nullptr : hooks_.exchange;
      const EpochPlan plan(config_, order, slicing ? slicing->rank() : 0,
                           slicing ? slicing->ranks() : 1);
      if (!run_epoch_or_diverge(epoch, plan)) {
        // The unfinished epoch is not recorded: the last completed one is what a checkpoint
        // holds and what a resumed run continues from.
        result_.interrupted = true;
        break;
      }
      if (!result_.divergence.empty()) break;
      if (converged_) {
        result_.converged = true;
        break;
      }
      if (plateau_end_) {
        result_.plateau_end = true;
        break;
      }
    }
    return std::move(result_);
  }

 private:
  // The evaluations of the parameters at an epoch's end: training, test and held-out data.
  EpochRecord evaluated() {
    EpochRecord record;
    if (evaluates()) {
      record = kernel_.evaluate(root());
      if (hooks_.held_out) {
        TrainState state;
        kernel_.fill_state(state);
        record.validation = hooks_.held_out(state.weights);
      }
    }
    return shared(summed(record));
  }

  // Across processes only rank 0 evaluates (the parameters are equal on every process after a
  // segment's final merge) and every process takes its record, so all decide alike; with parts
  // of the data every process evaluates its part, rank 0 alone the test data.
  bool root() const { return hooks_.exchange == nullptr || hooks_.exchange->rank() == 0; }
  bool evaluates() const { return root() || part_; }

  // Examples in an epoch, over every process.
  std::size_t total_rows() const {
    if (!part_) return config_.rows;
    std::vector<double> rows{static_cast<double>(config_.rows)};
    hooks_.exchange->sum(rows);
    return static_cast<std::size_t>(rows[0]);
  }

  // With parts of the data: the evaluations of the whole, each part's weighed by its examples.
  EpochRecord summed(EpochRecord record) const {
    if (!part_) return record;
    record.train = summed(record.train, config_.loss_rows);
    if (hooks_.held_out) record.validation = summed(*record.validation, hooks_.held_out_rows);
    return record;
  }
  Evaluation summed(const Evaluation& e, std::size_t rows) const {
    const auto n = static_cast<double>(rows);
    const double rmse = e.rmse.value_or(0.0);
    std::vector<double> sums{n, n * e.loss, n * e.objective.value_or(0.0),
                             n * e.accuracy.value_or(0.0), n * rmse * rmse};
    hooks_.exchange->sum(sums);
    const double all = std::max(sums[0], 1.0);
    Evaluation whole = e;
    whole.loss = sums[1] / all;
    if (e.objective) whole.objective = sums[2] / all;
    if (e.accuracy) whole.accuracy = sums[3] / all;
    if (e.rmse) whole.rmse = std::sqrt(sums[4] / all);
    return whole;
  }
  EpochRecord shared(const EpochRecord& record) const {
    if (hooks_.exchange == nullptr) return record;
    std::vector<double> packed = pack_record(record);
    hooks_.exchange->broadcast(packed);
    return unpack_record(packed);
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
    count_without_improvement(loss, config_.tol, best_loss_, epochs_without_improvement_);
    return epochs_without_improvement_ >= config_.patience;
  }

  // --step-schedule plateau: the epoch's loss may cut the step for the next epoch or, with the
  // step at its floor, end the run.
  void observe_plateau(double loss) {
    switch (plateau_->observe(loss)) {
      case StepPlateau::Outcome::kHold:
        break;
      case StepPlateau::Outcome::kCut:
        kernel_.scale_step(plateau_->scale());
        break;
      case StepPlateau::Outcome::kEnd:
        plateau_end_ = true;
        break;
    }
  }

  // The run's worker threads, started at the first segment that needs them and kept to its end.
  WorkerPool& pool() {
    if (!pool_) pool_.emplace(config_.workers);
    return *pool_;
  }

  bool stop_requested() const {
    return (hooks_.stop != nullptr && hooks_.stop->load(std::memory_order_relaxed)) ||
           (hooks_.exchange != nullptr && hooks_.exchange->stop_seen());
  }

  // After a segment: whether the run stops, agreed by every process when there are several.
  bool segment_stops() {
    const bool stop = stop_requested();
    return hooks_.exchange != nullptr ? hooks_.exchange->end_segment(stop) : stop;
  }

  // run_epoch, where a kernel that finds a minibatch's loss not finite ends the run as a
  // diverged epoch does, its report holding the epochs before it. Across processes the others
  // would wait for this one at their next merge: the error ends the process, as before.
  bool run_epoch_or_diverge(int epoch, const EpochPlan& plan) {
    try {
      return run_epoch(epoch, plan);
    } catch (const DivergenceError& e) {
      if (e.report() != nullptr || hooks_.exchange != nullptr) throw;
      result_.divergence = e.what();
      return true;
    }
  }

  // Trains one epoch in --evals-per-epoch segments; false when the stop flag cut it short.
  bool run_epoch(int epoch, const EpochPlan& plan) {
    kernel_.begin_epoch(epoch);
    double seconds = 0;
    const int segments = config_.evals_per_epoch;
    bool stopped = false;
    for (int segment = 0; segment < segments; ++segment) {
      const bool last_segment = segment + 1 == segments;
      const auto start = Clock::now();
      if (config_.virtual_time) {
        simulate_in_virtual_time(plan, segment, last_segment);
      } else if (config_.simulate) {
        simulate_segment(plan, segment, last_segment);
      } else if (config_.dynamic_sharding) {
        share_segment(plan, segment, last_segment);
      } else {
        slice_segment(plan, segment, last_segment);
      }
      stopped = segment_stops();  // across processes the final merge is training time
      seconds += std::chrono::duration<double>(Clock::now() - start).count();
      if (stopped) break;
      if (!last_segment) {
        // A point of the loss curve within the epoch; evaluation time is not training time.
        const EpochRecord probe =
            shared(summed(evaluates() ? kernel_.evaluate(false) : EpochRecord{}));
        result_.curve.push_back(
            {result_.elapsed + seconds, kernel_.applied(), probe.train.loss,
             config_.virtual_time ? std::optional(virtual_seconds()) : std::nullopt});
      }
    }
    result_.elapsed += seconds;
    if (stopped) return false;
    result_.samples += epoch_samples_;
    kernel_.end_epoch(epoch);
    EpochRecord done = evaluated();
    done.epoch = epoch;
    done.seconds = seconds;
    done.elapsed = result_.elapsed;
    done.step = kernel_.step_of(epoch, false);
    if (config_.virtual_time) done.virtual_seconds = virtual_seconds();
    if (!record(done)) return true;
    if (plateau_) observe_plateau(stopping_loss(done));
    converged_ = converged(stopping_loss(done));
    if (hooks_.on_epoch_state) {
      TrainState state;
      state.epoch = epoch;
      state.initial_loss = initial_loss_;
      if (plateau_) state.plateau = plateau_->state();
      if (config_.patience > 0)
        state.patience = PatienceState{best_loss_, epochs_without_improvement_};
      state.elapsed = result_.elapsed;
      state.samples = result_.samples;
      if (config_.virtual_time) state.virtual_ns = latest_clock_ns();
      kernel_.fill_state(state);
      hooks_.on_epoch_state(state);
    }
    return true;
  }

  // Keeps an epoch's record and its point of the curve, ends a diverged run (no checkpoint, no
  // callback of that epoch), tells the caller. Returns whether the run goes on.
  bool record(const EpochRecord& epoch) {
    result_.epochs.push_back(epoch);
    result_.curve.push_back(
        {epoch.elapsed, kernel_.applied(), epoch.train.loss, epoch.virtual_seconds});
    result_.divergence = divergence_of(epoch);
    if (!result_.divergence.empty()) return false;
    if (hooks_.on_epoch) hooks_.on_epoch(epoch);
    return true;
  }

  // Why the epoch's loss diverged, or "".
  std::string divergence_of(const EpochRecord& epoch) const {
    const double loss = epoch.train.loss;
    const double bound = config_.divergence_factor * std::max(initial_loss_, 1e-12);
    if (std::isfinite(loss) && !(loss > bound)) return "";
    const std::string what =
        std::isfinite(loss)
            ? fmt::format("grew to {:.6g}, beyond {}x its initial {:.6g}", loss,
                          config_.divergence_factor, initial_loss_)
            : fmt::format("became {} (it was {:.6g} at the start)", loss, initial_loss_);
    return fmt::format(
        "epoch {}: training loss {}; the run diverged: try a smaller --step (this epoch used "
        "{:.6g})",
        epoch.epoch, what, epoch.step);
  }

  // Static sharding: each worker trains its slice's share of the segment, in stretches
  // between which it looks at the stop flag.
  void slice_segment(const EpochPlan& plan, int segment, bool last_segment) {
    reset_bound();
    Exchange* exchange = hooks_.exchange;
    if (exchange != nullptr) {
      std::uint64_t positions = 0;
      for (int worker = 0; worker < config_.workers; ++worker) {
        const std::size_t len = plan.slice(worker).size();
        positions += plan.part(len, segment + 1) - plan.part(len, segment);
      }
      exchange->begin_segment(positions);
    }
    // Across processes a worker's stretches end where its process's merges fall due.
    const std::size_t stretch_cap = exchange != nullptr
                                        ? static_cast<std::size_t>(std::clamp<std::uint64_t>(
                                              exchange->merge_every(), 1, kStopStretch))
                                        : kStopStretch;
    pool().run([&](int worker) {
      const auto slice = plan.slice(worker);
      const std::size_t end = plan.part(slice.size(), segment + 1);
      for (std::size_t first = plan.part(slice.size(), segment); first < end;) {
        if (stop_requested() || kernel_.failed()) break;
        const std::size_t last =
            std::min({end, first + bounded_stretch(worker), first + stretch_cap});
        if (last == first) break;  // stopped while waiting for the slowest worker
        kernel_.run_range(worker, slice.data(), first, last, slice.size());
        if (exchange != nullptr) exchange->after_range(last - first);
        first = last;
      }
      // Its last, partly filled, minibatch is written before the others stop counting it.
      kernel_.end_segment(worker, last_segment);
      if (bound_) bound_->retire(worker);
    });
  }

  // Dynamic sharding: workers claim chunks of the segment from a shared cursor (one atomic
  // add per chunk), so a slow worker processes fewer samples.
  void share_segment(const EpochPlan& plan, int segment, bool last_segment) {
    const std::size_t n = plan.order().size();
    const std::size_t end = plan.part(n, segment + 1);
    std::atomic<std::size_t> cursor{plan.part(n, segment)};
    reset_bound();
    pool().run([&](int worker) {
      for (bool stopped = false; !stopped;) {
        if (stop_requested() || kernel_.failed()) break;
        std::size_t first = cursor.fetch_add(kShardChunk, std::memory_order_relaxed);
        if (first >= end) break;
        const std::size_t chunk_end = std::min(end, first + kShardChunk);
        while (first < chunk_end) {  // a claimed chunk in the stretches the bound allows
          const std::size_t last = std::min(chunk_end, first + bounded_stretch(worker));
          if ((stopped = last == first)) break;
          kernel_.run_range(worker, plan.order().data(), first, last, n);
          first = last;
        }
      }
      // Its last, partly filled, minibatch is written before the others stop counting it.
      kernel_.end_segment(worker, last_segment);
      if (bound_) bound_->retire(worker);
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

  // --bounded-staleness in threads: every worker holds the others back as the segment starts.
  void reset_bound() {
    if (bound_) bound_->reset();
  }

  // Positions the worker may take now: a stop-polling stretch, or fewer under the bound (each
  // position applies at most one update), after waiting while the worker is at the bound; 0
  // when the run stopped while it waited.
  std::size_t bounded_stretch(int worker) {
    if (!bound_) return kStopStretch;
    const auto k = static_cast<std::size_t>(worker);
    const std::uint64_t allowed = bound_->allowance(
        worker, kernel_.applied_by(worker), result_.bound_waits[k], result_.bound_wait_seconds[k],
        [&] { return stop_requested() || kernel_.failed(); });
    return static_cast<std::size_t>(std::min<std::uint64_t>(allowed, kStopStretch));
  }

  // Virtual time: the latest worker's clock, in nanoseconds and in seconds.
  std::int64_t latest_clock_ns() const {
    std::int64_t latest = 0;
    for (WorkerClock* clock : hooks_.clocks) latest = std::max(latest, clock->now_ns());
    return latest;
  }
  double virtual_seconds() const { return static_cast<double>(latest_clock_ns()) * 1e-9; }

  // Simulation in virtual time: a discrete-event loop on this thread. The worker whose clock
  // is earliest (the lower worker on a tie) takes its next position (of its slice, or the
  // epoch's next under dynamic sharding), which moves its clock by the sample's cost and what
  // the speed model adds; the order of reads and writes, and so the staleness, follows from
  // the clocks. Workers start each segment together, at the
  // latest clock. Under --write-latency an update lands on the parameters after the steps
  // that start before its landing time. Under --bounded-staleness a worker S updates ahead of the
  // slowest unfinished worker is set aside until that worker applies an update, and resumes at that
  // worker's time: the wait is virtual time.
  void simulate_in_virtual_time(const EpochPlan& plan, int segment, bool last_segment) {
    const auto& clocks = hooks_.clocks;
    const auto workers = static_cast<std::size_t>(config_.workers);
    const std::int64_t start = latest_clock_ns();
    using Event = std::pair<std::int64_t, int>;  // (time, worker)
    std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
    // Static sharding: each worker's share of its slice. Dynamic: the whole order, one sample
    // at a time to the worker whose clock is earliest (threads claim chunks to amortise the
    // shared cursor; here it costs nothing, and chunks would leave workers idle when a segment
    // has fewer chunks than workers).
    const bool dynamic = config_.dynamic_sharding;
    const std::size_t n = plan.order().size();
    std::size_t cursor = plan.part(n, segment);
    const std::size_t last = plan.part(n, segment + 1);
    std::vector<std::size_t> next(workers), end(workers);
    // Each worker's sequence of positions: its slice, or the whole order (dynamic).
    std::vector<std::span<const std::uint32_t>> rows(workers, plan.order());
    const auto claim = [&](std::size_t w) {
      next[w] = cursor;
      end[w] = cursor = std::min(last, cursor + 1);
      return next[w] < end[w];
    };
    std::vector<bool> active(workers, false);
    for (int k = 0; k < config_.workers; ++k) {
      const auto w = static_cast<std::size_t>(k);
      clocks[w]->wait_until(start);
      if (!dynamic) rows[w] = plan.slice(k);
      const std::size_t len = rows[w].size();
      next[w] = plan.part(len, segment);
      end[w] = plan.part(len, segment + 1);
      if (dynamic ? claim(w) : next[w] < end[w]) {
        active[w] = true;
        events.emplace(clocks[w]->now_ns(), k);
      }
    }
    SimulatedBound bound(*this, active);
    std::uint64_t steps = 0;
    while (!events.empty()) {
      if (++steps % kStopStretch == 0 && (stop_requested() || kernel_.failed())) break;
      const auto [at_ns, k] = events.top();
      const auto w = static_cast<std::size_t>(k);
      events.pop();
      // Updates in flight land before a step that starts at or after their landing time.
      if (config_.in_flight) kernel_.land_until(at_ns);
      if (bound.holds_back(k)) continue;
      kernel_.run_range(k, rows[w].data(), next[w], next[w] + 1, rows[w].size());
      if (++next[w] == end[w] && !(dynamic && claim(w))) {
        kernel_.part_done(k);
        active[w] = false;
      } else {
        events.emplace(clocks[w]->now_ns(), k);
      }
      bound.after_step(k, clocks[w]->now_ns(), events);
    }
    for (int k = 0; k < config_.workers; ++k) kernel_.end_segment(k, last_segment);
    // The segment's evaluation sees every update sent in it.
    if (config_.in_flight) kernel_.land_until(std::numeric_limits<std::int64_t>::max());
  }

  // --bounded-staleness in simulation: the workers set aside and the fewest updates an
  // unfinished worker has applied.
  class SimulatedBound {
   public:
    SimulatedBound(Driver& driver, const std::vector<bool>& active)
        : driver_(driver), active_(active), on_(driver.config_.staleness_bound >= 0) {
      if (on_) slowest_ = slowest();
    }
    // True when worker k is at the bound: it waits, off the event queue, from its clock now.
    bool holds_back(int k) {
      if (!on_) return false;
      before_ = driver_.kernel_.applied_by(k);
      if (before_ <= slowest_ + bound()) return false;
      waiting_.push_back({k, driver_.hooks_.clocks[static_cast<std::size_t>(k)]->now_ns()});
      return true;
    }
    // After worker k's step, which ended at virtual time `now`: when it was the last of the
    // slowest workers and has applied an update (or finished), the waiting workers the bound
    // no longer holds back resume at `now`.
    template <class Queue>
    void after_step(int k, std::int64_t now, Queue& events) {
      if (!on_ || before_ != slowest_) return;
      const bool finished = !active_[static_cast<std::size_t>(k)];
      if (!finished && driver_.kernel_.applied_by(k) == before_) return;
      if (--at_slowest_ > 0) return;
      slowest_ = slowest();
      std::erase_if(waiting_, [&](const Waiting& wait) {
        if (driver_.kernel_.applied_by(wait.worker) > slowest_ + bound()) return false;
        const auto w = static_cast<std::size_t>(wait.worker);
        WorkerClock* clock = driver_.hooks_.clocks[w];
        clock->wait_until(now);
        driver_.result_.bound_waits[w] += 1;
        driver_.result_.bound_wait_seconds[w] += static_cast<double>(now - wait.since) * 1e-9;
        events.emplace(clock->now_ns(), wait.worker);
        return true;
      });
    }

   private:
    struct Waiting {
      int worker;
      std::int64_t since;
    };
    std::uint64_t bound() const {
      return static_cast<std::uint64_t>(driver_.config_.staleness_bound);
    }
    // The fewest updates of an unfinished worker (no limit once all have finished), and how
    // many unfinished workers have that few.
    std::uint64_t slowest() {
      std::uint64_t fewest = std::numeric_limits<std::uint64_t>::max() - bound() - 1;
      at_slowest_ = 0;
      for (std::size_t w = 0; w < active_.size(); ++w) {
        if (!active_[w]) continue;
        const std::uint64_t applied = driver_.kernel_.applied_by(static_cast<int>(w));
        if (applied < fewest) {
          fewest = applied;
          at_slowest_ = 0;
        }
        if (applied == fewest) ++at_slowest_;
      }
      return fewest;
    }

    Driver& driver_;
    const std::vector<bool>& active_;
    bool on_;
    std::uint64_t slowest_ = 0;
    std::size_t at_slowest_ = 0;  // unfinished workers with `slowest_` updates
    std::uint64_t before_ = 0;    // the stepping worker's updates before its step
    std::vector<Waiting> waiting_;
  };

  const DriverConfig& config_;
  Kernel& kernel_;
  const DriverHooks& hooks_;
  const bool part_;                 // this process holds its part of the data
  const std::uint64_t order_seed_;  // the seed of the epochs' orders
  std::size_t epoch_samples_ = 0;   // samples of an epoch, every process's
  DriverResult result_;
  double initial_loss_ = 0;
  double best_loss_ = 0;                 // the lowest training loss so far (patience)
  int epochs_without_improvement_ = 0;   // in a row, up to the last epoch
  bool converged_ = false;               // --patience saw enough epochs without improvement
  std::optional<StepPlateau> plateau_;   // --step-schedule plateau
  bool plateau_end_ = false;             // a plateau found the step at its floor
  std::optional<StalenessBound> bound_;  // --bounded-staleness in threads
  std::optional<WorkerPool> pool_;       // the workers' threads, from the first segment on
};

}  // namespace

DriverResult drive(const DriverConfig& config, Kernel& kernel, const DriverHooks& hooks,
                   const TrainState* resume) {
  return Driver(config, kernel, hooks).run(resume);
}

void drive_into(Report& report, const DriverConfig& config, Kernel& kernel,
                const Callbacks& callbacks, const TrainState* resume,
                std::span<const WorkerStats* const> workers, ParamStore& store, Policy policy) {
  if (callbacks.on_start) callbacks.on_start(report);
  DriverHooks hooks{callbacks.on_epoch,
                    callbacks.on_epoch_state,
                    callbacks.stop,
                    callbacks.held_out,
                    {},
                    callbacks.exchange,
                    callbacks.held_out_rows,
                    callbacks.data_part,
                    callbacks.initial_evaluation};
  if (hooks.exchange != nullptr) hooks.exchange->attach(store.values(), policy);
  if (config.virtual_time) {
    for (int k = 0; k < config.workers; ++k) hooks.clocks.push_back(callbacks.clock(k).get());
  }
  DriverResult result = drive(config, kernel, hooks, resume);
  report.epochs = std::move(result.epochs);
  report.curve = std::move(result.curve);
  report.samples = result.samples;
  report.interrupted = result.interrupted;
  report.stopped = !result.divergence.empty() ? StopReason::kDiverged
                   : result.interrupted       ? StopReason::kInterrupted
                   : result.converged         ? StopReason::kConverged
                   : result.plateau_end       ? StopReason::kPlateau
                                              : StopReason::kEpochs;
  report.resumed_from = result.resumed_from;
  report.train_seconds = result.elapsed;
  report.samples_per_second =
      result.elapsed > 0 ? static_cast<double>(report.samples) / result.elapsed : 0.0;
  if (config.keep_weights) report.weights = store.snapshot();
  if (hooks.exchange != nullptr) report.exchange = hooks.exchange->summary();
  if (hooks.exchange != nullptr && hooks.data_part) {
    // The report speaks of the whole data, not of this process's part.
    if (report.dataset) report.dataset = whole_of_parts(*report.dataset, *hooks.exchange);
    std::vector<double> rows{static_cast<double>(report.data.rows)};
    hooks.exchange->sum(rows);
    report.data.rows = static_cast<std::size_t>(rows[0]);
  }
  summarise_workers(workers, config.rows, report);
  for (std::size_t k = 0; k < result.bound_waits.size(); ++k) {
    report.workers[k].bound_waits = result.bound_waits[k];
    report.workers[k].bound_wait_seconds = result.bound_wait_seconds[k];
  }
  if (!result.divergence.empty()) {
    throw DivergenceError(result.divergence, std::make_shared<const Report>(report));
  }
}

}  // namespace hogwild::detail
