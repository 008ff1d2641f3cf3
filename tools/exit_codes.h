#pragma once

// The exit codes of every command, as `hogwild --help` lists them: scripts tell a failed run
// from bad input, an interruption and a sweep with failed runs by them.

namespace hogwild_cli {

/// Memory ran out (an allocation failed).
inline constexpr int kExitOutOfMemory = 1;
/// Bad usage, bad input data, or an output that cannot be written.
inline constexpr int kExitBadInput = 2;
/// Training diverged.
inline constexpr int kExitDiverged = 3;
/// A sweep ran every run and at least one of them failed.
inline constexpr int kExitRunsFailed = 4;
/// A run stopped by SIGINT or SIGTERM after a clean save.
inline constexpr int kExitInterrupted = 130;

}  // namespace hogwild_cli
