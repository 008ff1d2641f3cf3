#pragma once

#include <filesystem>
#include <string>

namespace hogwild {

/// Reads an input file whole, `-` being standard input, and decompresses it when its first bytes
/// say gzip, bzip2 or xz (whatever its name): the compressed bytes stream through a small buffer,
/// so only the decompressed text is held, and concatenated streams are read one after the other,
/// as gzip, bzip2 and xz do. The readers of every format read through it. Throws SystemError when
/// the file cannot be read and InputError ("PATH: expected a complete gzip stream, found it
/// truncated after N compressed bytes", "PATH: expected valid bzip2 data, found corrupt data
/// (...)") when it does not decompress.
std::string read_text(const std::filesystem::path& path);

}  // namespace hogwild
