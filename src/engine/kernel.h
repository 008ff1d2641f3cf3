#pragma once

// What the training driver asks of a model family's training code: a kernel. The driver owns
// epochs, row order, segments, sharding, stop and interruption, evaluation points, divergence
// and checkpoint state; a kernel owns the parameters, the workers' state and the update loop.

#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/sampling.h"
#include "hogwild/trainer.h"

namespace hogwild::detail {

/// A model family's training loop, driven one range of rows at a time: one virtual call per
/// range (per claimed chunk, per stop-polling stretch, or per simulation round), never per
/// sample. Methods taking a worker run on that worker's thread; the others on the caller's
/// thread while no worker runs.
class Kernel {
 public:
  virtual ~Kernel() = default;

  /// Prepares epoch `epoch` (1-based): its step size and whatever derives from it.
  virtual void begin_epoch(int epoch) = 0;
  /// Positions a virtual worker takes per simulation round: a sample or a minibatch.
  virtual std::size_t round_positions() const = 0;
  /// Worker `worker` trains on positions [first, last) of `rows`, a sequence of `len`
  /// positions (its slice of the epoch, or the whole epoch under dynamic sharding).
  virtual void run_range(int worker, const std::uint32_t* rows, std::size_t first, std::size_t last,
                         std::size_t len) = 0;
  /// Simulation: the worker's share of the segment is done while other workers go on.
  virtual void part_done(int worker) = 0;
  /// End of a segment on the worker's thread: open minibatches become updates and replicas
  /// are merged; at the end of the epoch (`epoch_end`) delayed updates are flushed.
  virtual void end_segment(int worker, bool epoch_end) = 0;
  /// Virtual time with --write-latency: lands every update in flight due at or before
  /// `now_ns` (all of them with the largest time), in landing order.
  virtual void land_until(std::int64_t /*now_ns*/) {}
  /// True once a worker found the run diverged: the others stop early.
  virtual bool failed() const { return false; }
  /// End of epoch `epoch` (1-based), every worker done and its updates landed.
  virtual void end_epoch(int /*epoch*/) {}
  /// Evaluates the parameters on the training data and, with `with_test`, the test data.
  virtual EpochRecord evaluate(bool with_test) = 0;
  /// The step size recorded for `epoch` (`initial`: the record of the model before training).
  virtual double step_of(int epoch, bool initial) const = 0;
  /// Multiplies the schedule's steps by `scale` from the next epoch on (the plateau schedule's
  /// cuts); 1 until called.
  virtual void scale_step(double scale) = 0;
  /// Updates applied so far, all workers.
  virtual std::uint64_t applied() const = 0;
  /// Updates worker `worker` has applied so far; read on its thread, or while no worker runs.
  virtual std::uint64_t applied_by(int worker) const = 0;
  /// Each worker's applied count as published for the others: after every update when
  /// staleness is measured or bounded (--bounded-staleness) and there are several workers.
  virtual std::span<const AppliedCounter> published_counts() const = 0;
  /// Adds what a checkpoint keeps beyond the driver's counters: parameters, optimiser state,
  /// per-worker update counts (views valid until the next worker runs).
  virtual void fill_state(TrainState& state) const = 0;
};

}  // namespace hogwild::detail
