#pragma once

// Input files as the readers see them: a path or `-` for standard input, plain or compressed
// with gzip, bzip2 or xz, told apart by their first bytes (not by their names).

#include <filesystem>
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

}  // namespace hogwild::detail
