#pragma once

// Training one model across processes on MPI (Open MPI): the session that initialises MPI and
// the exchange that shares the parameters. Built with HOGWILD_MPI (target hogwild::mpi).

#include <cstdint>
#include <memory>
#include <string_view>

#include "hogwild/exchange.h"

namespace hogwild {

/// How processes share the parameters.
enum class SyncMode {
  /// One-sided, Hogwild-style: the parameters live in an MPI window spread over the processes;
  /// a merge adds what the process changed since its last merge with MPI_Get_accumulate(SUM)
  /// (and reads every value back in the same call: MPI_NO_OP for unchanged blocks), under one
  /// passive-target epoch: no lock per update, no barrier within a segment.
  kRma,
  /// Synchronous model averaging: every process's merge is an MPI_Allreduce of the parameters,
  /// the average replacing them (what Horovod-style trainers do).
  kAllreduce,
};

/// Parses "rma" or "allreduce"; throws InputError("--sync: expected ..., found ...").
SyncMode parse_sync_mode(std::string_view name);
/// The command-line name of a mode.
std::string_view to_string(SyncMode mode);

/// MPI for the life of the object: MPI_Init_thread (MPI_THREAD_SERIALIZED: a process's merges
/// run on its workers' threads one at a time) and MPI_Finalize.
class MpiSession {
 public:
  /// Initialises MPI; throws SystemError when it cannot.
  MpiSession(int* argc, char*** argv);
  /// Finalises MPI.
  ~MpiSession();
  /// One session per process.
  MpiSession(const MpiSession&) = delete;
  /// One session per process.
  MpiSession& operator=(const MpiSession&) = delete;

  /// This process's rank in MPI_COMM_WORLD.
  int rank() const { return rank_; }
  /// Number of processes in MPI_COMM_WORLD.
  int ranks() const { return ranks_; }
  /// Collective: the lowest rank whose `failed` is true, or -1 when none failed.
  int first_failure(bool failed) const;
  /// True when an MPI launcher (mpirun, srun) started this process.
  static bool launched();

 private:
  int rank_ = 0;
  int ranks_ = 1;
};

/// Shares the parameters of a run across the session's processes: merges every `merge_every`
/// samples of a process, `mode` deciding how. `bound` >= 0 (rma only) bounds the staleness
/// across processes (stale synchronous parallel): a process does not start its merge
/// c + bound + 1 before every process has made merge c; -1 = no bound.
std::unique_ptr<Exchange> make_mpi_exchange(const MpiSession& session, SyncMode mode,
                                            std::uint64_t merge_every, int bound = -1);

}  // namespace hogwild
