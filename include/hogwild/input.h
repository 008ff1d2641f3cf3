#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace hogwild {

/// Reads an input file whole, `-` being standard input, and decompresses it when its first bytes
/// say gzip, bzip2 or xz (whatever its name): the compressed bytes stream through a small buffer,
/// so only the decompressed text is held, and concatenated streams are read one after the other,
/// as gzip, bzip2 and xz do. The readers of every format read through it. Throws SystemError when
/// the file cannot be read and InputError ("PATH: expected a complete gzip stream, found it
/// truncated after N compressed bytes", "PATH: expected valid bzip2 data, found corrupt data
/// (...)") when it does not decompress.
std::string read_text(const std::filesystem::path& path);

/// A token of an input quoted for a message, `'token'`: its first 40 bytes, anything
/// unprintable as `\xNN` (a NUL byte would end the message where it is shown), "..." after a
/// longer one, so binary garbage neither floods the terminal nor cuts the message short.
std::string quote(std::string_view token);

}  // namespace hogwild
