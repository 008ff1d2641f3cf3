#pragma once

#include <fmt/format.h>
#include <fmt/std.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "hogwild/error.h"

namespace hogwild::detail {

/// Writes a file through `write(std::ostream&)`, replacing it; throws SystemError with the
/// errno text when it cannot be opened or written.
template <class Write>
void write_file(const std::filesystem::path& path, Write&& write) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw SystemError(
        fmt::format("{}: cannot open for writing: {}", path.string(), std::strerror(errno)));
  }
  write(out);
  out.flush();
  if (!out) {
    throw SystemError(fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  }
}

}  // namespace hogwild::detail
