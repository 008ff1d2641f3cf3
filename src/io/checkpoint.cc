#include "hogwild/checkpoint.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "hogwild/error.h"
#include "hogwild/input.h"

namespace hogwild {
namespace {

constexpr std::string_view kMagic = "HOGWCKPT";
constexpr std::size_t kHeader = 24;  // magic, version, crc, body length
// The checksum covers the body length and the body: everything after the crc field.
constexpr std::size_t kChecksummed = 16;
// Arrays: parameters plus at most two optimiser buffers.
constexpr std::uint32_t kMaxArrays = 3;

template <class T>
void put(std::string& out, T value) {
  static_assert(std::is_integral_v<T>);
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    out.push_back(static_cast<char>((static_cast<std::uint64_t>(value) >> (8 * i)) & 0xff));
  }
}

void put_floats(std::string& out, const std::vector<float>& values) {
  put<std::uint64_t>(out, values.size());
  for (const float v : values) put<std::uint32_t>(out, std::bit_cast<std::uint32_t>(v));
}

std::uint32_t crc_of(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!bytes.empty()) {
    const auto chunk = static_cast<uInt>(std::min<std::size_t>(bytes.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), chunk);
    bytes.remove_prefix(chunk);
  }
  return static_cast<std::uint32_t>(crc);
}

// Reads little-endian values from a byte range, throwing InputError when it runs out.
class Reader {
 public:
  Reader(std::string_view bytes, std::string_view name) : bytes_(bytes), name_(name) {}
  template <class T>
  T get(std::string_view what) {
    need(sizeof(T), what);
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      v |= std::uint64_t{static_cast<unsigned char>(bytes_[pos_ + i])} << (8 * i);
    }
    pos_ += sizeof(T);
    return static_cast<T>(v);
  }
  std::string_view take(std::size_t n, std::string_view what) {
    need(n, what);
    const auto out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  std::vector<float> floats(std::string_view what) {
    const auto count = get<std::uint64_t>(what);
    if (count > (bytes_.size() - pos_) / 4) {
      throw InputError(
          fmt::format("{}: expected {} floats of {}, found only {} bytes left (the "
                      "file is truncated or corrupt)",
                      name_, count, what, bytes_.size() - pos_));
    }
    std::vector<float> values(static_cast<std::size_t>(count));
    for (auto& v : values) v = std::bit_cast<float>(get<std::uint32_t>(what));
    return values;
  }
  std::size_t left() const { return bytes_.size() - pos_; }

 private:
  void need(std::size_t n, std::string_view what) const {
    if (bytes_.size() - pos_ < n) {
      throw InputError(
          fmt::format("{}: expected {} more bytes for {}, found {} (the file is "
                      "truncated)",
                      name_, n, what, bytes_.size() - pos_));
    }
  }
  std::string_view bytes_;
  std::string_view name_;
  std::size_t pos_ = 0;
};

// zlib's CRC-32 of a stream of fields. Short ones (a label, a count, a row of 75 nonzeros) are
// gathered in a buffer, so that the fingerprint costs about one crc32_z call per 64 KiB and
// not one per field: rows of a few nonzeros would otherwise spend their time in the calls.
class CrcStream {
 public:
  template <class T>
  void put(const T& value) {
    add(&value, sizeof value);
  }
  template <class T>
  void put_all(std::span<const T> values) {
    add(values.data(), values.size_bytes());
  }
  DataFingerprint done(std::uint64_t rows, std::uint64_t entries) {
    flush();
    return {
        .rows = rows, .entries = entries, .bytes = bytes_, .crc = static_cast<std::uint32_t>(crc_)};
  }

 private:
  static constexpr std::size_t kCopied = 4096;  // longer fields go to crc32_z in place
  void add(const void* data, std::size_t n) {
    bytes_ += n;
    if (n < kCopied) {
      if (used_ + n > buffer_.size()) flush();
      std::memcpy(buffer_.data() + used_, data, n);
      used_ += n;
      return;
    }
    flush();
    crc_ = crc32_z(crc_, static_cast<const Bytef*>(data), n);
  }
  void flush() {
    crc_ = crc32_z(crc_, buffer_.data(), used_);
    used_ = 0;
  }
  std::array<Bytef, 1 << 16> buffer_;
  std::size_t used_ = 0;
  std::uint64_t bytes_ = 0;
  uLong crc_ = crc32_z(0L, Z_NULL, 0);
};

std::size_t checked_mul(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return 0;
  return a * b;
}

std::size_t checked_add(std::size_t a, std::size_t b) {
  if (a == 0 || b > std::numeric_limits<std::size_t>::max() - a) return 0;
  return a + b;
}

}  // namespace

std::size_t checkpoint_parameters(const Checkpoint& c) {
  const auto features = static_cast<std::size_t>(c.features);
  const auto classes = static_cast<std::size_t>(c.classes);
  if (c.model == "logistic" || c.model == "hinge" || c.model == "squared") {
    return std::max<std::size_t>(1, features);
  }
  if (c.model == "softmax") {
    if (classes < 2) return 0;
    return checked_mul(checked_add(features, 1), classes);
  }
  if (c.model == "mlp") {
    if (classes < 2 || c.hidden.empty() || features == 0) return 0;
    std::vector<std::size_t> width{features};
    for (const auto h : c.hidden) {
      if (h == 0) return 0;
      width.push_back(static_cast<std::size_t>(h));
    }
    width.push_back(classes);
    std::size_t total = 0;
    for (std::size_t l = 0; l + 1 < width.size(); ++l) {
      const std::size_t layer = checked_add(checked_mul(width[l + 1], width[l]), width[l + 1]);
      if (layer == 0) return 0;
      total = total == 0 ? layer : checked_add(total, layer);
      if (total == 0) return 0;
    }
    return total;
  }
  if (c.model == "mf") {
    if (c.rank == 0) return 0;
    return checked_mul(checked_add(static_cast<std::size_t>(c.users), c.items), c.rank);
  }
  return 0;
}

DataFingerprint data_fingerprint(const Dataset& data) {
  CrcStream crc;
  for (std::size_t i = 0; i < data.rows(); ++i) {
    const SparseRow row = data.row(i);
    crc.put(data.labels[i]);
    crc.put(static_cast<std::uint64_t>(row.indices.size()));
    crc.put_all(row.indices);
    crc.put_all(row.values);
  }
  return crc.done(data.rows(), data.nnz());
}

DataFingerprint data_fingerprint(const DenseDataset& data) {
  CrcStream crc;
  const std::size_t cols = data.cols;
  for (std::size_t i = 0; i < data.rows(); ++i) {
    crc.put(data.labels[i]);
    if (data.stored_as_bytes()) {
      crc.put_all(std::span(data.bytes).subspan(i * cols, cols));
    } else {
      crc.put_all(std::span(data.features).subspan(i * cols, cols));
    }
  }
  return crc.done(data.rows(), static_cast<std::uint64_t>(data.rows()) * cols);
}

DataFingerprint data_fingerprint(const Ratings& data) {
  CrcStream crc;
  for (std::size_t i = 0; i < data.size(); ++i) {
    crc.put(data.users[i]);
    crc.put(data.items[i]);
    crc.put(data.values[i]);
  }
  return crc.done(data.size(), data.size());
}

DataFingerprint combine_fingerprints(const DataFingerprint& first, const DataFingerprint& then) {
  return {.rows = first.rows + then.rows,
          .entries = first.entries + then.entries,
          .bytes = first.bytes + then.bytes,
          .crc = static_cast<std::uint32_t>(
              crc32_combine(first.crc, then.crc, static_cast<z_off_t>(then.bytes)))};
}

std::string serialize_checkpoint(const Checkpoint& c) {
  nlohmann::ordered_json meta{
      {"model", c.model},       {"format", c.format},   {"epoch", c.epoch},
      {"features", c.features}, {"classes", c.classes}, {"hidden", c.hidden},
      {"users", c.users},       {"items", c.items},     {"rank", c.rank},
      {"mean", c.mean},         {"labels", c.labels},   {"initial_loss", c.initial_loss},
      {"elapsed", c.elapsed},   {"samples", c.samples}, {"worker_updates", c.worker_updates}};
  meta["zero_based"] = c.zero_based;
  if (c.intercept) meta["intercept"] = true;  // absent: the files before it read the same
  if (c.plateau.scale != 1 || c.plateau.wait != 0 || c.plateau.best != 0 || c.plateau.ended) {
    meta["plateau"] = {
        {"scale", c.plateau.scale}, {"best", c.plateau.best}, {"wait", c.plateau.wait}};
    if (c.plateau.ended) meta["plateau"]["ended"] = true;  // absent: the files before it
  }
  if (c.patience) meta["patience"] = {{"best", c.patience->best}, {"wait", c.patience->wait}};
  if (const auto& data = c.training_data) {  // absent: unchecked on resume, as before it
    meta["training_data"] = {{"rows", data->rows},
                             {"entries", data->entries},
                             {"bytes", data->bytes},
                             {"crc32", data->crc}};
  }
  // Absent where no worker draws (and in checkpoints before it): resumed runs draw from seeds.
  const bool draws = std::ranges::any_of(c.worker_draws, [](const auto& w) { return !w.empty(); });
  if (draws) meta["worker_draws"] = c.worker_draws;
  if (c.virtual_ns != 0) meta["virtual_ns"] = c.virtual_ns;
  meta["config"] =
      c.config.empty() ? nlohmann::ordered_json::object() : nlohmann::ordered_json::parse(c.config);
  const std::string meta_text = meta.dump();
  std::string body;
  put<std::uint32_t>(body, static_cast<std::uint32_t>(meta_text.size()));
  body += meta_text;
  put<std::uint32_t>(body, static_cast<std::uint32_t>(1 + c.optimizer_state.size()));
  put_floats(body, c.weights);
  for (const auto& buffer : c.optimizer_state) put_floats(body, buffer);

  std::string checked;
  put<std::uint64_t>(checked, body.size());
  checked += body;
  std::string out(kMagic);
  put<std::uint32_t>(out, kCheckpointVersion);
  put<std::uint32_t>(out, crc_of(checked));
  out += checked;
  return out;
}

namespace {

// The magic, the version, the length and the checksum; throws InputError naming what is wrong.
void check_header(std::string_view bytes, std::string_view name) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    std::string shown;
    for (std::size_t i = 0; i < std::min<std::size_t>(8, bytes.size()); ++i) {
      const auto b = static_cast<unsigned char>(bytes[i]);
      shown += b >= 0x20 && b < 0x7f ? std::string(1, static_cast<char>(b))
                                     : fmt::format("\\x{:02x}", b);
    }
    throw InputError(fmt::format("{}: expected a hogwild checkpoint (magic 'HOGWCKPT'), found {}",
                                 name, bytes.empty() ? "an empty file" : "'" + shown + "'"));
  }
  Reader header(bytes, name);
  header.take(kMagic.size(), "the magic");
  const auto version = header.get<std::uint32_t>("the format version");
  if (version != kCheckpointVersion) {
    throw InputError(fmt::format("{}: expected checkpoint format version {}, found {}", name,
                                 kCheckpointVersion, version));
  }
  const auto crc = header.get<std::uint32_t>("the checksum");
  const auto length = header.get<std::uint64_t>("the length");
  if (length != bytes.size() - kHeader) {
    throw InputError(fmt::format(
        "{}: expected {} bytes after the header, found {} (the file is {})", name, length,
        bytes.size() - kHeader, length > bytes.size() - kHeader ? "truncated" : "too long"));
  }
  const std::uint32_t actual = crc_of(bytes.substr(kChecksummed));
  if (actual != crc) {
    throw InputError(fmt::format(
        "{}: expected CRC-32 {:08x} (as recorded), found {:08x}: the checkpoint is corrupt", name,
        crc, actual));
  }
}

// `value` (field `key`) as an integer of type T: a JSON integer within T's range. (nlohmann's
// get converts any number with a cast, undefined for a float beyond the type's range.)
template <class T>
T integer_of(const nlohmann::ordered_json& value, const char* key) {
  const auto fail = [&] {
    return std::invalid_argument(fmt::format("'{}' holding {}, not an integer in [{}, {}]", key,
                                             value.dump(), std::numeric_limits<T>::min(),
                                             std::numeric_limits<T>::max()));
  };
  if (value.is_number_unsigned()) {
    const auto v = value.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) throw fail();
    return static_cast<T>(v);
  }
  if (!value.is_number_integer()) throw fail();
  const auto v = value.get<std::int64_t>();
  if (v < static_cast<std::int64_t>(std::numeric_limits<T>::min()) ||
      (v > 0 &&
       static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(std::numeric_limits<T>::max()))) {
    throw fail();
  }
  return static_cast<T>(v);
}

template <class T>
T integer_at(const nlohmann::ordered_json& j, const char* key) {
  return integer_of<T>(j.at(key), key);
}

// `list` (field `key`) as a list of counts.
std::vector<std::uint64_t> counts_of(const nlohmann::ordered_json& list, const char* key) {
  if (!list.is_array()) throw std::invalid_argument(fmt::format("'{}' not a list", key));
  std::vector<std::uint64_t> counts;
  for (const auto& value : list) counts.push_back(integer_of<std::uint64_t>(value, key));
  return counts;
}

// Field `key` of `j` as a list of counts.
std::vector<std::uint64_t> counts_at(const nlohmann::ordered_json& j, const char* key) {
  return counts_of(j.at(key), key);
}

// The metadata's fields into `c`.
void parse_metadata(std::string_view meta_text, std::string_view name, Checkpoint& c) {
  try {
    const auto meta = nlohmann::ordered_json::parse(meta_text);
    c.model = meta.at("model").get<std::string>();
    c.format = meta.at("format").get<std::string>();
    c.epoch = integer_at<int>(meta, "epoch");
    c.features = integer_at<std::uint64_t>(meta, "features");
    c.classes = integer_at<std::uint64_t>(meta, "classes");
    c.hidden = counts_at(meta, "hidden");
    c.users = integer_at<std::uint64_t>(meta, "users");
    c.items = integer_at<std::uint64_t>(meta, "items");
    c.rank = integer_at<std::uint64_t>(meta, "rank");
    c.mean = meta.at("mean").get<double>();
    c.labels = meta.at("labels").get<std::vector<double>>();
    c.initial_loss = meta.at("initial_loss").get<double>();
    c.elapsed = meta.at("elapsed").get<double>();
    c.samples = integer_at<std::uint64_t>(meta, "samples");
    c.worker_updates = counts_at(meta, "worker_updates");
    c.zero_based = meta.value("zero_based", false);  // absent from the first checkpoints
    c.intercept = meta.value("intercept", false);
    if (const auto plateau = meta.find("plateau"); plateau != meta.end()) {
      c.plateau = {plateau->at("scale").get<double>(), plateau->at("best").get<double>(),
                   integer_at<int>(*plateau, "wait"), plateau->value("ended", false)};
    }
    if (const auto patience = meta.find("patience"); patience != meta.end()) {
      c.patience =
          PatienceState{patience->at("best").get<double>(), integer_at<int>(*patience, "wait")};
    }
    if (const auto data = meta.find("training_data"); data != meta.end()) {
      c.training_data = DataFingerprint{.rows = integer_at<std::uint64_t>(*data, "rows"),
                                        .entries = integer_at<std::uint64_t>(*data, "entries"),
                                        .bytes = integer_at<std::uint64_t>(*data, "bytes"),
                                        .crc = integer_at<std::uint32_t>(*data, "crc32")};
    }
    if (const auto draws = meta.find("worker_draws"); draws != meta.end()) {
      if (!draws->is_array()) throw std::invalid_argument("'worker_draws' not a list");
      for (const auto& words : *draws) c.worker_draws.push_back(counts_of(words, "worker_draws"));
    }
    if (meta.contains("virtual_ns")) {
      c.virtual_ns = integer_at<std::int64_t>(meta, "virtual_ns");
      if (c.virtual_ns < 0) {
        throw std::invalid_argument(
            fmt::format("'virtual_ns' holding {}, not a time at or after 0", c.virtual_ns));
      }
    }
    const auto& config = meta.at("config");
    if (!config.is_object()) throw std::invalid_argument("config is not an object");
    c.config = config.dump();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(
        fmt::format("{}: expected checkpoint metadata as a JSON object with the "
                    "model's fields, found an error: {}",
                    name, e.what()));
  } catch (const std::invalid_argument& e) {
    throw InputError(fmt::format(
        "{}: expected checkpoint metadata with integer counts and a config object, found {}", name,
        e.what()));
  }
}

// A consistent model, so that predicting or resuming with it cannot read out of bounds.
void check_consistent(const Checkpoint& c, std::string_view name);

}  // namespace

Checkpoint parse_checkpoint(std::string_view bytes, std::string_view name) {
  check_header(bytes, name);
  Reader in(bytes.substr(kHeader), name);
  const auto meta_size = in.get<std::uint32_t>("the metadata length");
  Checkpoint c;
  parse_metadata(in.take(meta_size, "the metadata"), name, c);
  const auto arrays = in.get<std::uint32_t>("the array count");
  if (arrays < 1 || arrays > kMaxArrays) {
    throw InputError(
        fmt::format("{}: expected 1 to {} arrays (parameters and optimiser state), found {}", name,
                    kMaxArrays, arrays));
  }
  c.weights = in.floats("the parameters");
  for (std::uint32_t a = 1; a < arrays; ++a)
    c.optimizer_state.push_back(in.floats("optimiser state"));
  if (in.left() != 0) {
    throw InputError(fmt::format("{}: expected the end of the checkpoint, found {} more bytes",
                                 name, in.left()));
  }
  check_consistent(c, name);
  return c;
}

namespace {

void check_consistent(const Checkpoint& c, std::string_view name) {
  const std::size_t params = checkpoint_parameters(c);
  if (params == 0) {
    throw InputError(fmt::format(
        "{}: expected a model of known shape (logistic, hinge, squared, softmax, mlp or mf with "
        "nonzero sizes), found model '{}'",
        name, c.model));
  }
  if (c.intercept && c.model != "logistic" && c.model != "hinge" && c.model != "squared") {
    throw InputError(fmt::format(
        "{}: expected an intercept only in a linear model (logistic, hinge, squared), found one "
        "in a {} model",
        name, c.model));
  }
  if (c.weights.size() != params) {
    throw InputError(fmt::format("{}: expected {} parameters for this {} model, found {}", name,
                                 params, c.model, c.weights.size()));
  }
  for (const auto& buffer : c.optimizer_state) {
    if (buffer.size() != params) {
      throw InputError(fmt::format("{}: expected optimiser state of {} values, found {}", name,
                                   params, buffer.size()));
    }
  }
  const auto finite = [](const std::vector<float>& v) {
    for (const float x : v) {
      if (!std::isfinite(x)) return false;
    }
    return true;
  };
  if (!finite(c.weights)) {
    throw InputError(fmt::format("{}: expected finite parameters, found NaN or Inf", name));
  }
  for (const auto& buffer : c.optimizer_state) {
    if (!finite(buffer)) {
      throw InputError(fmt::format("{}: expected finite optimiser state, found NaN or Inf", name));
    }
  }
  if (c.epoch < 0)
    throw InputError(fmt::format("{}: expected an epoch >= 0, found {}", name, c.epoch));
  const bool binary = c.model == "logistic" || c.model == "hinge";
  const bool multiclass = c.model == "softmax" || c.model == "mlp";
  if ((binary && c.labels.size() != 2) || (multiclass && c.labels.size() != c.classes) ||
      (!binary && !multiclass && !c.labels.empty())) {
    throw InputError(fmt::format("{}: expected {} label values for this {} model, found {}", name,
                                 binary       ? 2
                                 : multiclass ? c.classes
                                              : 0,
                                 c.model, c.labels.size()));
  }
  for (const double v : c.labels) {
    if (!std::isfinite(v)) throw InputError(fmt::format("{}: expected finite label values", name));
  }
  if (!std::isfinite(c.mean) || !std::isfinite(c.initial_loss) || !std::isfinite(c.elapsed)) {
    throw InputError(fmt::format("{}: expected finite mean, initial loss and elapsed time", name));
  }
  if (!(c.plateau.scale > 0 && c.plateau.scale <= 1) || !std::isfinite(c.plateau.best) ||
      c.plateau.wait < 0) {
    throw InputError(fmt::format(
        "{}: expected a plateau state with a step factor in (0, 1], a finite loss and a count "
        ">= 0, found {}, {}, {}",
        name, c.plateau.scale, c.plateau.best, c.plateau.wait));
  }
  if (c.patience && (!std::isfinite(c.patience->best) || c.patience->wait < 0)) {
    throw InputError(fmt::format(
        "{}: expected a patience state with a finite loss and a count >= 0, found {}, {}", name,
        c.patience->best, c.patience->wait));
  }
}

// The file save_checkpoint replaces: a link's target (the link keeps pointing at the new
// checkpoint), which must be a regular file if it exists: renaming over a device or a FIFO
// would replace it.
std::filesystem::path replaced_file(const std::filesystem::path& given) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path path = given;
  // Link by link, as the kernel follows them (40 at most), to a target that may not exist yet.
  for (int hops = 0; hops < 40 && fs::is_symlink(path, ec); ++hops) {
    const fs::path next = fs::read_symlink(path, ec);
    if (ec) break;
    path = next.is_absolute() ? next : path.parent_path() / next;
  }
  const fs::file_status status = fs::status(path, ec);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    throw SystemError(fmt::format("{}: cannot write a checkpoint over it: expected a regular file",
                                  path.string()));
  }
  return path;
}

}  // namespace

void save_checkpoint(const std::filesystem::path& given, const Checkpoint& checkpoint) {
  const std::string bytes = serialize_checkpoint(checkpoint);
  const std::filesystem::path path = replaced_file(given);
  const std::filesystem::path dir =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  std::string tmp_name(".");
  tmp_name += path.filename().string();
  tmp_name += ".tmp.XXXXXX";
  std::string tmp = (dir / tmp_name).string();
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    throw SystemError(fmt::format("{}: cannot create a temporary file in {}: {}", path.string(),
                                  dir.string(), std::strerror(errno)));
  }
  const auto fail = [&](std::string_view what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("{}: cannot {}: {}", path.string(), what, std::strerror(saved)));
  };
  if (::fchmod(fd, 0644) != 0) fail("set the permissions of the temporary file");
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) fail("flush to disk (fsync)");
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("{}: cannot close: {}", path.string(), std::strerror(saved)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    throw SystemError(fmt::format("{}: cannot rename the temporary file over it: {}", path.string(),
                                  std::strerror(saved)));
  }
  // The rename itself is durable once the directory is flushed.
  if (const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY); dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

Checkpoint load_checkpoint(const std::filesystem::path& path) {
  const std::string bytes = read_text(path);
  return parse_checkpoint(bytes, path.string());
}

}  // namespace hogwild
