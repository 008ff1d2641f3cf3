#pragma once

// Input files as the readers see them: a path or `-` for standard input, plain or compressed
// with gzip, bzip2 or xz, told apart by their first bytes (not by their names).

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "hogwild/input.h"

namespace hogwild::detail {

/// The compression a file's first bytes announce.
enum class Compression { kNone, kGzip, kBzip2, kXz };

/// Tells the compression from the first bytes of a file (all of them when it is shorter).
Compression compression_of(std::string_view head);

/// The name of a compression as messages give it: "gzip", "bzip2", "xz" ("plain" for none).
std::string_view compression_name(Compression compression);

/// How messages name an input: its path, or "standard input" for `-`.
std::string input_name(const std::filesystem::path& path);

/// Decompresses bytes already in memory as read_text does a file (plain bytes come back as they
/// are); `name` is used in messages.
std::string decompress(std::string_view bytes, std::string_view name);

/// A regular file's bytes mapped read-only, for readers that parse a whole file: parsing the
/// page cache in place instead of a copy of it loads a large LIBSVM file about a third faster.
class MappedFile {
 public:
  /// The mapping of `path`; nullopt where there is none to make (standard input, a pipe, a
  /// directory, an empty or unreadable file), for the caller to read it with read_text, which
  /// says what is wrong. Another process truncating the file while it is mapped ends this one
  /// (SIGBUS), as with any reader that maps its input.
  static std::optional<MappedFile> open(const std::filesystem::path& path);
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&&) = delete;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
  /// The file's bytes as they were mapped.
  std::string_view bytes() const { return {data_, size_}; }

 private:
  MappedFile(const char* data, std::size_t size) : data_(data), size_(size) {}
  const char* data_;
  std::size_t size_;
};

/// `parse(bytes, name)` over a whole file's plain bytes, decompressed when its first bytes say so:
/// the mapped file where it can be mapped, else what read_text reads.
template <class Parse>
auto parse_whole_file(const std::filesystem::path& path, Parse&& parse) {
  const std::string name = input_name(path);
  if (const auto mapped = MappedFile::open(path)) {
    if (compression_of(mapped->bytes()) == Compression::kNone) return parse(mapped->bytes(), name);
    const std::string plain = decompress(mapped->bytes(), name);
    return parse(std::string_view(plain), name);
  }
  const std::string text = read_text(path);
  return parse(std::string_view(text), name);
}

/// The lines of a plain file that start in one of its parts of equal bytes, and where they
/// start in the file.
struct TextPart {
  std::string text;          ///< whole lines, the last one's newline included if it has one
  std::uint64_t offset = 0;  ///< the byte of the file the text starts at
};

/// Reads part `index` of `count` of a plain file: the lines that start in bytes
/// [size * index / count, size * (index + 1) / count), which reads only those bytes and the
/// rest of the last line (the parts of 0 .. count - 1 hold every line once). nullopt for
/// standard input and for compressed files, which cannot be entered midway.
std::optional<TextPart> read_text_part(const std::filesystem::path& path, int index, int count);

/// Lines that end in the first `bytes` bytes of a file (the line number of the line at
/// `bytes`, less one), for messages about a part read on its own.
std::size_t lines_before(const std::filesystem::path& path, std::uint64_t bytes);

}  // namespace hogwild::detail
