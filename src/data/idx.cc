#include "hogwild/idx.h"

#include <fmt/format.h>

#include <array>
#include <cstring>
#include <limits>
#include <string_view>

#include "data/input.h"
#include "hogwild/detail/huge_pages.h"
#include "hogwild/error.h"

namespace hogwild {
namespace {

constexpr std::size_t kIdxHeaderFixed = 4;  // 0x00 0x00 type ndims

std::string describe_magic(std::string_view bytes) {
  std::string shown;
  for (std::size_t i = 0; i < std::min<std::size_t>(4, bytes.size()); ++i) {
    shown += fmt::format("{}{:02x}", i ? " " : "", static_cast<unsigned char>(bytes[i]));
  }
  return shown.empty() ? "an empty file" : "bytes " + shown;
}

}  // namespace

IdxArray read_idx_array(const std::filesystem::path& path) {
  return detail::parse_whole_file(path, parse_idx_array);
}

bool looks_like_idx(std::string_view bytes) {
  return bytes.size() >= kIdxHeaderFixed && bytes[0] == 0 && bytes[1] == 0 && bytes[3] != 0;
}

IdxArray parse_idx_array(std::string_view data, std::string_view name) {
  const bool compressed = detail::compression_of(data) != detail::Compression::kNone;
  const std::string decompressed = compressed ? detail::decompress(data, name) : std::string();
  const std::string_view bytes = compressed ? std::string_view(decompressed) : data;
  if (!looks_like_idx(bytes)) {
    throw InputError(
        fmt::format("{}: expected an IDX file (magic 00 00 <type> <dimensions>), found {}", name,
                    describe_magic(bytes)));
  }
  if (static_cast<unsigned char>(bytes[2]) != 0x08) {
    throw InputError(
        fmt::format("{}: expected IDX data of unsigned bytes (type 0x08), found type 0x{:02x}",
                    name, static_cast<unsigned char>(bytes[2])));
  }
  const std::size_t dims = static_cast<unsigned char>(bytes[3]);
  const std::size_t header = kIdxHeaderFixed + 4 * dims;
  if (bytes.size() < header) {
    throw InputError(
        fmt::format("{}: expected a {}-byte IDX header ({} dimension sizes), found {} bytes", name,
                    header, dims, bytes.size()));
  }
  IdxArray array;
  std::size_t total = 1;
  bool zero = false;
  bool overflow = false;
  for (std::size_t d = 0; d < dims; ++d) {
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + kIdxHeaderFixed + 4 * d);
    const std::size_t size = (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) |
                             (std::size_t{p[2]} << 8) | std::size_t{p[3]};
    array.shape.push_back(size);
    // Up to 255 sizes of 2^32-1: the product may not fit in 64 bits (it would wrap around).
    if (size == 0) {
      zero = true;
    } else if (total > std::numeric_limits<std::size_t>::max() / 2 / size) {
      overflow = true;
    } else {
      total *= size;
    }
  }
  if (zero) total = 0;
  const std::size_t found = bytes.size() - header;
  std::string shape;
  for (const auto s : array.shape) shape += (shape.empty() ? "" : " x ") + std::to_string(s);
  if (overflow && !zero) {
    throw InputError(fmt::format(
        "{}: expected dimension sizes whose product is the {} bytes of data after the header, "
        "found {} (more than 2^63)",
        name, found, shape));
  }
  if (found != total) {
    throw InputError(fmt::format("{}: expected {} = {} bytes of data after the header, found {}{}",
                                 name, shape, total, found,
                                 found < total ? " (the file is truncated)" : ""));
  }
  detail::reserve_on_huge_pages(array.data, bytes.size() - header);
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return array;
}

std::optional<std::filesystem::path> find_idx_labels(const std::filesystem::path& images) {
  const std::string file = images.filename().string();
  static constexpr std::pair<std::string_view, std::string_view> kNames[] = {
      {"images-idx3-ubyte", "labels-idx1-ubyte"}, {"images.idx3-ubyte", "labels.idx1-ubyte"}};
  for (const auto& [from, to] : kNames) {
    const auto at = file.find(from);
    if (at == std::string::npos) continue;
    const std::string base = file.substr(0, at) + std::string(to);
    // The images' own suffix first (.gz beside .gz), then the compressed and plain forms.
    const std::string tail = file.substr(at + from.size());
    for (const std::string& candidate : {base + tail, base + ".gz", base}) {
      const auto path = images.parent_path() / candidate;
      std::error_code ec;
      if (std::filesystem::is_regular_file(path, ec)) return path;
    }
  }
  return std::nullopt;
}

DenseDataset read_idx(const std::filesystem::path& images, const std::filesystem::path& labels) {
  std::filesystem::path labels_path = labels;
  if (labels_path.empty()) {
    const auto found = find_idx_labels(images);
    if (!found) {
      throw InputError(fmt::format(
          "{}: expected a labels file beside the images by the standard name (e.g. "
          "train-labels-idx1-ubyte.gz for train-images-idx3-ubyte.gz), found none; name it "
          "explicitly",
          images.string()));
    }
    labels_path = *found;
  }
  IdxArray x = read_idx_array(images);
  const IdxArray y = read_idx_array(labels_path);
  if (x.shape.size() < 2) {
    throw InputError(
        fmt::format("{}: expected images with at least 2 dimensions (count x features), found {}",
                    images.string(), x.shape.size()));
  }
  if (y.shape.size() != 1) {
    throw InputError(fmt::format("{}: expected labels with 1 dimension, found {}",
                                 labels_path.string(), y.shape.size()));
  }
  if (y.shape[0] != x.shape[0]) {
    throw InputError(fmt::format("{}: expected {} labels (one per image in {}), found {}",
                                 labels_path.string(), x.shape[0], images.string(), y.shape[0]));
  }
  if (x.shape[0] == 0) {
    throw InputError(fmt::format("{}: expected at least one image, found none", images.string()));
  }
  if (x.data.empty()) {
    throw InputError(fmt::format("{}: expected images of at least one pixel, found {} images of 0",
                                 images.string(), x.shape[0]));
  }
  DenseDataset data;
  data.source = images.string();
  data.labels_source = labels_path.string();
  data.shape.assign(x.shape.begin() + 1, x.shape.end());
  data.cols = x.data.size() / x.shape[0];
  data.bytes = std::move(x.data);  // the pixels as they are: byte_scale makes them [0, 1]
  data.labels.assign(y.data.begin(), y.data.end());
  return data;
}

}  // namespace hogwild
