#include "cli_paths.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "hogwild/error.h"

namespace hogwild_cli {
namespace {

namespace fs = std::filesystem;

// What a file that is not a regular one is, for a message.
std::string_view kind_of(const fs::file_status& status) {
  switch (status.type()) {
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

[[noreturn]] void cannot_write(const std::string& path, std::string_view why) {
  throw hogwild::SystemError(fmt::format("{}: cannot write: {}", path, why));
}

// Whether `a` and `b` name one file: the same file where both exist, else the same path once
// links, "." and ".." are resolved. A device or a FIFO takes whatever is written to it, so it
// is no file to lose.
bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) {
    return fs::is_regular_file(a, ec) && fs::equivalent(a, b, ec);
  }
  // Absolute first: a relative path with no existing prefix would stay relative.
  const fs::path left = fs::weakly_canonical(fs::absolute(a, ec), ec);
  if (ec) return false;
  const fs::path right = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && left == right;
}

}  // namespace

void check_readable(const std::string& path) {
  if (path.empty() || path == "-") return;
  const auto refuse = [&](int error) {
    throw hogwild::SystemError(fmt::format("{}: cannot open: {}", path, std::strerror(error)));
  };
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) refuse(errno);
  ::close(fd);
  std::error_code ec;
  if (fs::is_directory(path, ec)) refuse(EISDIR);
}

void check_writable(const std::string& path, Written how) {
  if (path.empty()) return;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (fs::is_directory(status)) cannot_write(path, "is a directory");
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // Renaming a file over a device would replace the device; opening a FIFO would wait.
    if (how == Written::kRenamed) {
      cannot_write(path, fmt::format("expected a regular file, found {}", kind_of(status)));
    }
    if (::access(path.c_str(), W_OK) != 0) cannot_write(path, std::strerror(errno));
    return;
  }
  if (fs::exists(status)) {
    // No O_TRUNC: a file that exists (a checkpoint to resume from) keeps its content.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) cannot_write(path, std::strerror(errno));
    ::close(fd);
    return;
  }
  // A file of its own in the same folder, not the path itself: the path appears only once it is
  // written whole (whoever waits for a checkpoint never sees an empty one, nor one before the
  // run handles SIGINT).
  const auto folder = fs::path(path).parent_path();
  std::string probe = ((folder.empty() ? "." : folder) / ".hogwild-write-check-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) cannot_write(path, std::strerror(errno));
  ::close(fd);
  fs::remove(probe, ec);
}

void check_outputs_apart(std::span<const NamedFile> inputs, std::span<const NamedFile> outputs) {
  const auto named = [](const NamedFile& f) { return !f.path.empty() && f.path != "-"; };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedFile& out = outputs[i];
    if (!named(out)) continue;
    for (const NamedFile& in : inputs) {
      if (named(in) && same_file(out.path, in.path)) {
        throw hogwild::InputError(fmt::format(
            "{}: expected a file other than the {} file, found {} (it would be overwritten)",
            out.option, in.option, out.path));
      }
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (named(outputs[j]) && same_file(out.path, outputs[j].path)) {
        throw hogwild::InputError(
            fmt::format("{}: expected a file other than the {} file, found {} (one would be lost)",
                        out.option, outputs[j].option, out.path));
      }
    }
  }
}

void check_one_standard_input(std::span<const NamedFile> inputs) {
  const NamedFile* first = nullptr;
  for (const NamedFile& in : inputs) {
    if (in.path != "-") continue;
    if (first != nullptr) {
      throw hogwild::InputError(
          fmt::format("{}: expected standard input (-) for one file, found it for {} too",
                      in.option, first->option));
    }
    first = &in;
  }
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw hogwild::SystemError(
        fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  out << text;
  out.flush();
  if (!out) cannot_write(path, std::strerror(errno));
}

void flush_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    const int saved = errno;
    std::clearerr(stdout);
    throw hogwild::SystemError(fmt::format("standard output: cannot write: {}",
                                           saved != 0 ? std::strerror(saved) : "write error"));
  }
}

}  // namespace hogwild_cli
