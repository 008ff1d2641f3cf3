#pragma once

// Running the command-line tool from tests. Each test binary defines HOGWILD_CLI (the path of
// the built `hogwild`) and gets a scratch directory of its own.

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "sanitized.h"

namespace hogwild::test {

/// Exit code and captured output of one command.
struct CliResult {
  int code;         ///< exit status, -1 when killed by a signal
  std::string out;  ///< standard output
  std::string err;  ///< standard error
};

/// A scratch directory for this test binary and process, created on first use.
inline const std::filesystem::path& work_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() /
             ("hogwild_" + std::string(program_invocation_short_name) + "_" +
              std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

/// The whole content of a file ("" when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs `hogwild ARGS` through the shell, its standard input read from `input` (none by
/// default), after the shell commands `before` (a `ulimit`, say); captures its exit code and
/// output.
inline CliResult run(const std::string& args, const std::string& input = "/dev/null",
                     const std::string& before = "") {
  const auto out = work_dir() / "stdout.txt";
  const auto err = work_dir() / "stderr.txt";
  const std::string command = before + std::string(HOGWILD_CLI) + " " + args + " >" + out.string() +
                              " 2>" + err.string() + " <" + input;
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

}  // namespace hogwild::test
