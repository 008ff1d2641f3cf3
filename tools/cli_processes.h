#pragma once

// `hogwild train` across processes: started by mpirun, every process trains its part of the
// model's epochs, rank 0 alone prints and writes files, and an error any process meets before
// training stops them all with its message printed once.

#include <cstddef>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "exit_codes.h"
#include "hogwild/checkpoint.h"
#include "hogwild/exchange.h"
#include "hogwild/libsvm.h"
#include "train_options.h"

namespace hogwild_cli {

/// Another process met an error before training; it printed the message.
class PeerFailed : public std::runtime_error {
 public:
  PeerFailed() : std::runtime_error("another process failed") {}
};

/// The processes a `hogwild train` runs on: one, or those mpirun started.
class Processes {
 public:
  /// Initialises MPI when a launcher started this process (built with HOGWILD_MPI).
  Processes();
  /// Finalises MPI.
  ~Processes();
  /// One per process.
  Processes(const Processes&) = delete;
  /// One per process.
  Processes& operator=(const Processes&) = delete;

  /// This process's rank (0 without MPI).
  int rank() const { return rank_; }
  /// Number of processes (1 without MPI).
  int ranks() const { return ranks_; }
  /// True on the process that prints, reports and checkpoints.
  bool root() const { return rank_ == 0; }
  /// True when an MPI launcher started this process.
  bool mpi() const { return mpi_; }
  /// Makes the parameter exchange from --sync and --sync-every (InputError when this build or
  /// launch cannot train across processes).
  void connect(const TrainArgs& args);
  /// The exchange training uses, or nullptr for one process.
  hogwild::Exchange* exchange() const { return exchange_.get(); }
  /// Collective, before training: throws PeerFailed when another process met an error, or
  /// when the processes' models would differ in size (`parameters`: rank 0 says so).
  void ready(std::size_t parameters);
  /// Collective for an error met before ready(): true when this process should print it (the
  /// lowest rank that failed).
  bool prints_failure();
  /// Collective at the end of a run: waits until every process got there.
  void finish() const;
  /// After ready(), an error only this process met: ends every process with `code`.
  [[noreturn]] void abort(int code) const;
  /// True once ready() passed.
  bool agreed() const { return agreed_; }
  /// Reads this process's part of a LIBSVM training file (every process its own bytes, as
  /// hogwild::read_libsvm_part does), then agrees with the others on what the model sees: the
  /// index base, the dimension and, for classifiers, the label classes, which every part must
  /// hold. Collective; an error any process met stops all of them (PeerFailed elsewhere).
  hogwild::Dataset read_training_part(const std::filesystem::path& path,
                                      const hogwild::LibsvmReadOptions& options, bool classifier);
  /// Collective, after read_training_part: the whole file's fingerprint (what a checkpoint
  /// records), the same on every process and on any process count: each process's part's,
  /// combined in rank order (hogwild::combine_fingerprints).
  hogwild::DataFingerprint whole_fingerprint(const hogwild::Dataset& part) const;
  /// After read_training_part: examples of the whole file.
  std::size_t whole_rows() const { return whole_rows_; }
  /// After read_training_part: nonzeros of the whole file.
  std::size_t whole_nnz() const { return whole_nnz_; }

 private:
  int rank_ = 0;
  int ranks_ = 1;
  bool agreed_ = false;
  bool mpi_ = false;
  std::size_t whole_rows_ = 0;
  std::size_t whole_nnz_ = 0;
  std::unique_ptr<hogwild::Exchange> exchange_;
};

}  // namespace hogwild_cli
