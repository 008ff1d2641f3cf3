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

/// Reads a whole file; throws SystemError with the errno text when it cannot.
inline std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw SystemError(fmt::format("{}: cannot read: is a directory", path.string()));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw SystemError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  }
  std::string text;
  in.seekg(0, std::ios::end);
  const auto size = in.tellg();
  if (size > 0) {
    text.resize(static_cast<std::size_t>(size));
    in.seekg(0);
    in.read(text.data(), size);
  }
  if (in.bad() || (size > 0 && in.gcount() != size)) {
    throw SystemError(fmt::format("{}: cannot read: {}", path.string(), std::strerror(errno)));
  }
  return text;
}

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
