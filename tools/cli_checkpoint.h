#pragma once

// Checkpoints and interruption on the command line: `hogwild train --checkpoint FILE` /
// `--resume FILE` and SIGINT/SIGTERM handling (exit 130 after a clean stop).

#include <CLI/CLI.hpp>
#include <atomic>
#include <string>

#include "cli_paths.h"
#include "exit_codes.h"
#include "hogwild/checkpoint.h"
#include "hogwild/dataset.h"
#include "hogwild/trainer.h"

namespace hogwild_cli {

/// While alive, SIGINT and SIGTERM set a flag the trainer polls (Callbacks::stop); a second
/// signal exits at once with code 130. A thread of its own takes the signals, which every
/// thread started meanwhile blocks. The previous handlers and mask come back on destruction.
class StopOnSignal {
 public:
  /// Installs the handlers and clears the flag.
  StopOnSignal();
  /// Restores the previous handlers.
  ~StopOnSignal();
  /// One owner of the process's handlers at a time.
  StopOnSignal(const StopOnSignal&) = delete;
  /// One owner of the process's handlers at a time.
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  /// The flag to pass as Callbacks::stop.
  const std::atomic<bool>* flag() const;
  /// The signal's name once one arrived ("SIGINT", "SIGTERM"), else "".
  std::string name() const;
};

/// Prints the one line on stderr that says where an interrupted run stopped and why: the
/// process's signal, else another process's stop where several train (`peers`), else a stop
/// request; the last completed epoch and what the --checkpoint file (if any) holds.
void report_interrupted(const StopOnSignal& stop, bool peers, int last_epoch, int resumed_from,
                        const std::string& checkpoint);

/// Loads the --resume checkpoint and checks that it continues the run `expected` describes
/// (hogwild::check_resumes, the options the table marks free on resume excepted), on the
/// training data named `data` in messages. Throws InputError("PATH: expected ..., found ...")
/// naming what differs.
hogwild::Checkpoint load_for_resume(const std::string& path, const hogwild::Checkpoint& expected,
                                    const std::string& data);

}  // namespace hogwild_cli
