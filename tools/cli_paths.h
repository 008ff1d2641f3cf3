#pragma once

// The files a command reads and writes, checked before any work starts: a long run must not
// find at its end that its report cannot be written, nor overwrite its own input, and what it
// printed must have reached standard output.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <span>
#include <string>
#include <string_view>

namespace hogwild_cli {

/// CLI11 check of an option that names a file: an empty value ("--checkpoint $UNSET") is refused
/// rather than read as "no file", which would turn the output off without a word.
inline CLI::Validator file_path() {
  return CLI::Validator(
      [](const std::string& value) {
        return value.empty() ? std::string("expected a file path, found an empty string")
                             : std::string();
      },
      "PATH", "file path");
}

/// CLI11 check of an option that names a file (or, as `kind` says, a directory) to write:
/// besides an empty value, "-" is refused, which names standard input for the inputs and would
/// otherwise create a file called "-".
inline CLI::Validator output_path(std::string kind = "file") {
  return CLI::Validator(
      [kind](const std::string& value) {
        if (value == "-") {
          return fmt::format(
              "expected a {0} to write, found '-' (which names standard input; ./- is a {0} "
              "called -)",
              kind);
        }
        return file_path()(value);
      },
      "PATH", "output path");
}

/// How an output file is written.
enum class Written {
  kInPlace,  ///< opened and truncated (reports, predictions): a device or a FIFO may take it
  kRenamed,  ///< a temporary file renamed over it (checkpoints): it must be a regular file
};

/// Checks, before any work, that `path` can be written (created, or opened for writing when it
/// exists, whose content is kept); SystemError "PATH: cannot write: ..." otherwise. An empty
/// path (the output was not asked for) passes. A FIFO is not opened (that would wait for a
/// reader); a file written by renaming must be a regular file (or a link to one, which stays).
void check_writable(const std::string& path, Written how = Written::kInPlace);

/// Checks, before any work, that `path` can be opened for reading; SystemError "PATH: cannot
/// open: ..." (the readers' own words) otherwise. An empty path (not given) and "-" (standard
/// input) pass; a FIFO is not waited on.
void check_readable(const std::string& path);

/// A file named by an option: `--json` and its value.
struct NamedFile {
  std::string_view option;  ///< the option, as the user wrote it
  const std::string& path;  ///< its value; "" (not given) and "-" (standard input) never clash
};

/// InputError "--json: PATH is also --train: ..." when an output is one of the inputs (it would
/// be overwritten) or two outputs are one file (one would be lost). Paths are compared as files
/// (links and relative names resolved), not as strings.
void check_outputs_apart(std::span<const NamedFile> inputs, std::span<const NamedFile> outputs);

/// InputError "--test: expected standard input (-) for one file, found it for --train too":
/// the second reader would find it empty.
void check_one_standard_input(std::span<const NamedFile> inputs);

/// Writes `text` to `path`, replacing it; SystemError with the errno text when it cannot.
void write_text(const std::string& path, const std::string& text);

/// Flushes standard output; SystemError "standard output: cannot write: ..." when what the
/// command printed there did not all arrive (a full disk, a closed pipe).
void flush_stdout();

}  // namespace hogwild_cli
