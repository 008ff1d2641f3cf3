#pragma once

// Parameter sharing between processes: what the training driver asks of a transport (MPI in
// hogwild/mpi_exchange.h) so that one model trains across several processes, each running its
// own workers on its own part of every epoch.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hogwild/policy.h"
#include "hogwild/staleness.h"

namespace hogwild {

/// What a process's parameter sharing did, for the report.
struct ExchangeSummary {
  std::string sync;               ///< "rma" or "allreduce"
  int ranks = 1;                  ///< processes
  std::uint64_t merge_every = 0;  ///< samples of a process between its merges
  std::uint64_t merges = 0;       ///< merges this process made
  double merge_seconds = 0;       ///< time spent in them (workers of the process wait none)
  std::uint64_t bytes = 0;        ///< bytes this process sent and received in merges
  std::vector<std::uint64_t> merges_per_rank;  ///< every process's merges (rank 0 gathers)
  int bound = -1;                              ///< --sync-bound S; -1 = none
  std::uint64_t bound_waits = 0;               ///< times this process waited for the slowest
  double bound_wait_seconds = 0;               ///< and for how long
  /// Staleness across processes: for each merged update, the updates other processes added
  /// to the model between this process's read of it (its previous merge) and its write (this
  /// merge), all processes; the nanoseconds between the two.
  StalenessStats staleness;
};

/// A process's side of sharing one model's parameters with other processes. The driver calls
/// it at fixed points so that every process makes the same collective calls in the same order:
/// attach once, then per segment begin_segment, after_range from the workers, end_segment;
/// evaluations are broadcast from rank 0.
class Exchange {
 public:
  virtual ~Exchange() = default;

  /// This process's index, 0 .. ranks() - 1; rank 0 evaluates, reports and checkpoints.
  virtual int rank() const = 0;
  /// Number of processes.
  virtual int ranks() const = 0;
  /// Samples a process trains between merges (each merge adds what it changed and reads what
  /// the others added).
  virtual std::uint64_t merge_every() const = 0;
  /// Binds the process's parameters (on the caller's thread, before training): every process
  /// starts from rank 0's values. Workers write them under `policy` while merges run.
  virtual void attach(std::span<float> parameters, Policy policy) = 0;
  /// A segment starts in which this process's workers take `positions` samples in all.
  virtual void begin_segment(std::uint64_t positions) = 0;
  /// On a worker's thread after it trained `samples` samples: merges when due. Thread-safe.
  virtual void after_range(std::uint64_t samples) = 0;
  /// True once another process asked to stop during the segment (collective modes).
  virtual bool stop_seen() const = 0;
  /// After the segment's workers finished (caller's thread): the final merge, after which the
  /// parameters are equal on every process; returns whether any process asked to stop.
  virtual bool end_segment(bool stop) = 0;
  /// Makes `values` rank 0's on every process.
  virtual void broadcast(std::span<double> values) = 0;
  /// Makes `values` on every process the sum over the processes of theirs.
  virtual void sum(std::span<double> values) = 0;
  /// What this process's sharing did; rank 0's carries every rank's merge counts and staleness.
  virtual ExchangeSummary summary() = 0;
};

}  // namespace hogwild
