// Reading input files whole, plain or compressed, from a path or standard input. One loop drives
// the three decoders (zlib, libbz2, liblzma) over blocks of compressed bytes.

#include "data/input.h"

#include <bzlib.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/std.h>
#include <lzma.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <vector>

#include "hogwild/detail/huge_pages.h"
#include "hogwild/error.h"
#include "io/enum_names.h"

namespace hogwild::detail {
namespace {

constexpr std::size_t kBlock = std::size_t{1} << 16;

// Where compressed bytes come from: the next block, empty at the end.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::string_view next() = 0;
  // Bytes the source holds in all, when known (a regular file); 0 otherwise.
  virtual std::size_t size() const { return 0; }
};

// A file, or standard input for `-`, a block at a time.
class FileSource final : public ByteSource {
 public:
  explicit FileSource(const std::filesystem::path& path)
      : name_(input_name(path)), buffer_(kBlock) {
    if (path == "-") {
      file_ = stdin;
      return;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      throw SystemError(fmt::format("{}: cannot read: is a directory", name_));
    }
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) {
      throw SystemError(fmt::format("{}: cannot open: {}", name_, std::strerror(errno)));
    }
  }
  ~FileSource() override {
    if (file_ != stdin) std::fclose(file_);
  }
  std::size_t size() const override {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(name_, ec);
    return file_ == stdin || ec ? 0 : static_cast<std::size_t>(bytes);
  }
  FileSource(const FileSource&) = delete;
  FileSource& operator=(const FileSource&) = delete;
  // Continues at byte `offset` of a regular file.
  void seek(std::uint64_t offset) {
    if (fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0) {
      throw SystemError(fmt::format("{}: cannot read: {}", name_, std::strerror(errno)));
    }
  }
  std::string_view next() override {
    const std::size_t n = std::fread(buffer_.data(), 1, buffer_.size(), file_);
    if (n == 0 && std::ferror(file_)) {
      throw SystemError(fmt::format("{}: cannot read: {}", name_, std::strerror(errno)));
    }
    return {buffer_.data(), n};
  }

 private:
  std::string name_;
  std::vector<char> buffer_;
  std::FILE* file_ = nullptr;
};

// Bytes already in memory: one block.
class MemorySource final : public ByteSource {
 public:
  explicit MemorySource(std::string_view bytes) : rest_(bytes) {}
  std::string_view next() override { return std::exchange(rest_, {}); }

 private:
  std::string_view rest_;
};

// What one decoding step ended with.
enum class Step { kProgress, kStreamEnd, kError };

// A decoder: takes bytes from the front of `in` and writes to the front of `out`, advancing both.
class Decoder {
 public:
  virtual ~Decoder() = default;
  // `finish`: no input will come after `in`.
  virtual Step step(std::string_view& in, std::span<char>& out, bool finish) = 0;
  // Starts the next of concatenated streams.
  virtual void restart() {}
  // What went wrong, after kError.
  std::string message;
};

class GzipDecoder final : public Decoder {
 public:
  GzipDecoder() {
    if (inflateInit2(&s_, 15 + 16) != Z_OK) throw std::bad_alloc();
  }
  ~GzipDecoder() override { inflateEnd(&s_); }
  GzipDecoder(const GzipDecoder&) = delete;
  GzipDecoder& operator=(const GzipDecoder&) = delete;
  Step step(std::string_view& in, std::span<char>& out, bool) override {
    s_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    s_.avail_in = static_cast<uInt>(std::min<std::size_t>(in.size(), UINT_MAX));
    s_.next_out = reinterpret_cast<Bytef*>(out.data());
    s_.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&s_, Z_NO_FLUSH);
    in.remove_prefix(reinterpret_cast<const char*>(s_.next_in) - in.data());
    out = out.subspan(reinterpret_cast<char*>(s_.next_out) - out.data());
    if (rc == Z_STREAM_END) return Step::kStreamEnd;
    if (rc == Z_OK || rc == Z_BUF_ERROR) return Step::kProgress;
    message = s_.msg ? s_.msg : fmt::format("zlib error {}", rc);
    return Step::kError;
  }
  void restart() override { inflateReset(&s_); }

 private:
  z_stream s_{};
};

class Bzip2Decoder final : public Decoder {
 public:
  Bzip2Decoder() { init(); }
  ~Bzip2Decoder() override { BZ2_bzDecompressEnd(&s_); }
  Bzip2Decoder(const Bzip2Decoder&) = delete;
  Bzip2Decoder& operator=(const Bzip2Decoder&) = delete;
  Step step(std::string_view& in, std::span<char>& out, bool) override {
    s_.next_in = const_cast<char*>(in.data());
    s_.avail_in = static_cast<unsigned>(std::min<std::size_t>(in.size(), UINT_MAX));
    s_.next_out = out.data();
    s_.avail_out = static_cast<unsigned>(out.size());
    const int rc = BZ2_bzDecompress(&s_);
    in.remove_prefix(static_cast<std::size_t>(s_.next_in - in.data()));
    out = out.subspan(static_cast<std::size_t>(s_.next_out - out.data()));
    if (rc == BZ_STREAM_END) return Step::kStreamEnd;
    if (rc == BZ_OK) return Step::kProgress;
    message = rc == BZ_DATA_ERROR_MAGIC ? "not a bzip2 stream"
              : rc == BZ_DATA_ERROR     ? "data integrity error"
              : rc == BZ_MEM_ERROR      ? "out of memory"
                                        : fmt::format("libbz2 error {}", rc);
    return Step::kError;
  }
  void restart() override {
    BZ2_bzDecompressEnd(&s_);
    init();
  }

 private:
  void init() {
    s_ = bz_stream{};
    if (BZ2_bzDecompressInit(&s_, 0, 0) != BZ_OK) throw std::bad_alloc();
  }
  bz_stream s_{};
};

// Concatenated xz streams are one for liblzma (LZMA_CONCATENATED): it ends them at `finish`.
class XzDecoder final : public Decoder {
 public:
  XzDecoder() {
    if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) {
      throw std::bad_alloc();
    }
  }
  ~XzDecoder() override { lzma_end(&s_); }
  XzDecoder(const XzDecoder&) = delete;
  XzDecoder& operator=(const XzDecoder&) = delete;
  Step step(std::string_view& in, std::span<char>& out, bool finish) override {
    s_.next_in = reinterpret_cast<const std::uint8_t*>(in.data());
    s_.avail_in = in.size();
    s_.next_out = reinterpret_cast<std::uint8_t*>(out.data());
    s_.avail_out = out.size();
    const lzma_ret rc = lzma_code(&s_, finish ? LZMA_FINISH : LZMA_RUN);
    in.remove_prefix(in.size() - s_.avail_in);
    out = out.subspan(out.size() - s_.avail_out);
    if (rc == LZMA_STREAM_END) return Step::kStreamEnd;
    if (rc == LZMA_OK || rc == LZMA_BUF_ERROR) return Step::kProgress;
    message = rc == LZMA_DATA_ERROR      ? "compressed data is corrupt"
              : rc == LZMA_FORMAT_ERROR  ? "not an xz stream"
              : rc == LZMA_OPTIONS_ERROR ? "unsupported options"
              : rc == LZMA_MEM_ERROR     ? "out of memory"
                                         : fmt::format("liblzma error {}", static_cast<int>(rc));
    return Step::kError;
  }

 private:
  lzma_stream s_ = LZMA_STREAM_INIT;
};

std::unique_ptr<Decoder> make_decoder(Compression compression) {
  switch (compression) {
    case Compression::kGzip:
      return std::make_unique<GzipDecoder>();
    case Compression::kBzip2:
      return std::make_unique<Bzip2Decoder>();
    case Compression::kXz:
      return std::make_unique<XzDecoder>();
    case Compression::kNone:
      break;
  }
  return nullptr;
}

// Everything `source` holds after its first block `first`, decompressed as `first` announces.
std::string read_all(ByteSource& source, std::string_view first, std::string_view name) {
  const Compression compression = compression_of(first);
  std::string text;
  if (compression == Compression::kNone) {
    // One allocation of the file's size, as a plain read makes.
    detail::reserve_on_huge_pages(text, source.size());
    for (std::string_view block = first; !block.empty(); block = source.next()) text += block;
    return text;
  }
  const auto decoder = make_decoder(compression);
  std::vector<char> buffer(kBlock);
  std::string_view in = first;
  std::uint64_t read = first.size();  // compressed bytes read so far
  bool end = false;                   // the source has no more
  bool open = true;                   // inside a stream
  for (;;) {
    if (in.empty() && !end) {
      in = source.next();
      end = in.empty();
      read += in.size();
    }
    if (!open) {
      if (in.empty()) return text;  // the last stream ended with the input
      decoder->restart();
      open = true;
    }
    const std::size_t available = in.size();
    std::span<char> out(buffer);
    const Step step = decoder->step(in, out, end);
    const std::size_t produced = buffer.size() - out.size();
    if (text.size() + produced > text.capacity()) {
      // Doubling, as append would, onto huge pages: each growth copies the text into fresh
      // memory, whose small pages would fault one by one.
      detail::reserve_on_huge_pages(text, std::max(2 * text.capacity(), text.size() + produced));
    }
    text.append(buffer.data(), produced);
    if (step == Step::kError) {
      throw InputError(fmt::format("{}: expected valid {} data, found corrupt data ({} at byte {})",
                                   name, compression_name(compression), decoder->message,
                                   read - in.size()));
    }
    if (step == Step::kStreamEnd) {
      open = false;
    } else if (end && available == 0 && produced == 0) {
      throw InputError(
          fmt::format("{}: expected a complete {} stream, found it truncated after {} compressed "
                      "bytes",
                      name, compression_name(compression), read));
    }
  }
}

// The first line start at or after byte `at` of a regular file of `size` bytes: 0, or one past
// the first newline at or after at - 1 (the file's size when none follows).
std::uint64_t line_start_from(FileSource& file, std::uint64_t at, std::uint64_t size) {
  if (at == 0) return 0;
  std::uint64_t position = at - 1;
  file.seek(position);
  for (std::string_view block = file.next(); !block.empty(); block = file.next()) {
    if (const auto newline = block.find('\n'); newline != std::string_view::npos) {
      return position + newline + 1;
    }
    position += block.size();
  }
  return size;
}

}  // namespace

std::optional<TextPart> read_text_part(const std::filesystem::path& path, int index, int count) {
  if (path == "-") return std::nullopt;
  FileSource file(path);
  if (compression_of(file.next()) != Compression::kNone) return std::nullopt;
  const std::uint64_t size = file.size();
  const auto parts = static_cast<std::uint64_t>(count);
  const auto boundary = [&](int k) {  // size * k / count, without overflow
    const auto at = static_cast<std::uint64_t>(k);
    return size / parts * at + size % parts * at / parts;
  };
  TextPart part;
  part.offset = line_start_from(file, boundary(index), size);
  const std::uint64_t end =
      index + 1 == count ? size : line_start_from(file, boundary(index + 1), size);
  detail::resize_on_huge_pages(part.text,
                               static_cast<std::size_t>(std::max(end, part.offset) - part.offset));
  file.seek(part.offset);
  for (std::size_t filled = 0; filled < part.text.size();) {
    const std::string_view block = file.next();
    if (block.empty()) {
      throw SystemError(
          fmt::format("{}: cannot read: the file shrank while it was read", input_name(path)));
    }
    const std::size_t take = std::min(block.size(), part.text.size() - filled);
    std::copy_n(block.data(), take, part.text.data() + filled);
    filled += take;
  }
  return part;
}

std::size_t lines_before(const std::filesystem::path& path, std::uint64_t bytes) {
  FileSource file(path);
  std::size_t lines = 0;
  for (std::string_view block = file.next(); bytes > 0 && !block.empty(); block = file.next()) {
    block = block.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(bytes, block.size())));
    lines += static_cast<std::size_t>(std::count(block.begin(), block.end(), '\n'));
    bytes -= block.size();
  }
  return lines;
}

Compression compression_of(std::string_view head) {
  const auto starts = [&](std::string_view magic) { return head.substr(0, magic.size()) == magic; };
  if (starts("\x1f\x8b")) return Compression::kGzip;
  if (starts("BZh") && head.size() >= 4 && head[3] >= '1' && head[3] <= '9') {
    return Compression::kBzip2;
  }
  if (starts(std::string_view("\xfd"
                              "7zXZ\0",
                              6)))
    return Compression::kXz;
  return Compression::kNone;
}

std::string_view compression_name(Compression compression) {
  static constexpr EnumNames<Compression, 4> kNames{{{"gzip", Compression::kGzip},
                                                     {"bzip2", Compression::kBzip2},
                                                     {"xz", Compression::kXz},
                                                     {"plain", Compression::kNone}}};
  return enum_name(kNames, compression);
}

std::string input_name(const std::filesystem::path& path) {
  return path == "-" ? "standard input" : path.string();
}

std::string decompress(std::string_view bytes, std::string_view name) {
  MemorySource source(bytes);
  return read_all(source, source.next(), name);
}

std::optional<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  if (path == "-") return std::nullopt;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat info {};
  void* data = MAP_FAILED;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    // Populated up front: one pass of the kernel over the page cache instead of a fault per page.
    data = ::mmap(nullptr, static_cast<std::size_t>(info.st_size), PROT_READ,
                  MAP_PRIVATE | MAP_POPULATE, fd, 0);
  }
  ::close(fd);  // the mapping keeps the file
  if (data == MAP_FAILED) return std::nullopt;
  return MappedFile(static_cast<const char*>(data), static_cast<std::size_t>(info.st_size));
}

MappedFile::MappedFile(MappedFile&& other) noexcept : data_(other.data_), size_(other.size_) {
  other.data_ = nullptr;
  other.size_ = 0;
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

}  // namespace hogwild::detail

namespace hogwild {

std::string read_text(const std::filesystem::path& path) {
  detail::FileSource source(path);
  return detail::read_all(source, source.next(), detail::input_name(path));
}

std::string quote(std::string_view token) {
  std::string shown;
  for (const char c : token.substr(0, 40)) {
    const auto u = static_cast<unsigned char>(c);
    shown += (u >= 0x20 && u < 0x7f) ? std::string(1, c) : fmt::format("\\x{:02x}", u);
  }
  if (token.size() > 40) shown += "...";
  return "'" + shown + "'";
}

}  // namespace hogwild
