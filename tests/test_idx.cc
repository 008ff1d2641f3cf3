// IDX reader: plain and gzip files, label discovery, and every malformed-input message.
#include <doctest/doctest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "hogwild/error.h"
#include "hogwild/idx.h"

using namespace hogwild;
namespace fs = std::filesystem;

namespace {

fs::path dir() {
  static const fs::path d = [] {
    auto p = fs::temp_directory_path() / ("hogwild_idx_test_" + std::to_string(::getpid()));
    fs::create_directories(p);
    return p;
  }();
  return d;
}

std::string idx_bytes(std::vector<std::uint32_t> shape, const std::vector<std::uint8_t>& data,
                      std::uint8_t type = 0x08) {
  std::string s{'\0', '\0', static_cast<char>(type), static_cast<char>(shape.size())};
  for (const auto d : shape) {
    for (int b = 3; b >= 0; --b) s.push_back(static_cast<char>((d >> (8 * b)) & 0xff));
  }
  s.append(data.begin(), data.end());
  return s;
}

fs::path write_plain(const std::string& name, const std::string& bytes) {
  const auto p = dir() / name;
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

fs::path write_gz(const std::string& name, const std::string& bytes) {
  const auto p = dir() / name;
  gzFile f = gzopen(p.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
          static_cast<int>(bytes.size()));
  gzclose(f);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Three 2x2 images with labels 7, 0, 7.
const std::vector<std::uint8_t> kPixels{0, 255, 51, 102, 255, 255, 0, 0, 1, 2, 3, 4};
const std::vector<std::uint8_t> kLabels{7, 0, 7};

}  // namespace

TEST_CASE("IDX images and labels read the same from plain and gzip files") {
  for (const bool gz : {false, true}) {
    const std::string suffix = gz ? ".gz" : "";
    auto write = gz ? write_gz : write_plain;
    const auto images = write("demo-images-idx3-ubyte" + suffix, idx_bytes({3, 2, 2}, kPixels));
    write("demo-labels-idx1-ubyte" + suffix, idx_bytes({3}, kLabels));
    const DenseDataset data = read_idx(images);  // labels found beside the images
    CHECK(data.rows() == 3);
    CHECK(data.cols == 4);
    CHECK(data.shape == std::vector<std::size_t>{2, 2});
    CHECK(data.labels == std::vector<std::int32_t>{7, 0, 7});
    // The pixels are kept as bytes, a quarter of the memory of floats.
    CHECK(data.stored_as_bytes());
    CHECK(data.bytes.size() == data.rows() * data.cols);
    CHECK(data.features.empty());
    CHECK(data.bytes == kPixels);
    std::vector<float> values(12);
    data.copy_rows(0, 3, values.data());
    CHECK(values[0] == 0.0f);
    CHECK(values[1] == 1.0f);
    CHECK(values[2] == doctest::Approx(0.2));
    std::vector<float> last(4);
    data.copy_row(2, last.data());
    CHECK(last[3] == doctest::Approx(4.0 / 255));
    CHECK(std::equal(last.begin(), last.end(), values.begin() + 8));
  }
}

TEST_CASE("pixels stored as bytes read as the floats they stand for, reordered or cut") {
  const auto images = write_plain("order-images-idx3-ubyte", idx_bytes({3, 2, 2}, kPixels));
  write_plain("order-labels-idx1-ubyte", idx_bytes({3}, kLabels));
  const DenseDataset bytes = read_idx(images);
  // The floats read_idx held before it kept the bytes: each pixel times 1/255 in float.
  DenseDataset floats = bytes;
  floats.bytes.clear();
  for (const auto p : kPixels) floats.features.push_back(static_cast<float>(p) * (1.0f / 255.0f));
  REQUIRE_FALSE(floats.stored_as_bytes());
  const auto rows_of = [](const DenseDataset& d) {
    std::vector<float> v(d.rows() * d.cols);
    d.copy_rows(0, d.rows(), v.data());
    return v;
  };
  CHECK(rows_of(bytes) == rows_of(floats));
  DenseDataset shuffled_bytes = bytes, shuffled_floats = floats;
  shuffle_rows(shuffled_bytes, 7);
  shuffle_rows(shuffled_floats, 7);
  CHECK(shuffled_bytes.stored_as_bytes());
  CHECK(shuffled_bytes.labels == shuffled_floats.labels);
  CHECK(rows_of(shuffled_bytes) == rows_of(shuffled_floats));
  DenseDataset cut = bytes;
  cut.truncate(2);
  CHECK(cut.bytes.size() == 8);
  const std::vector<float> all = rows_of(floats);
  CHECK(rows_of(cut) == std::vector<float>(all.begin(), all.begin() + 8));
}

TEST_CASE("labels are found by the standard names, compressed or not") {
  const auto images = write_gz("found-images-idx3-ubyte.gz", idx_bytes({3, 2, 2}, kPixels));
  CHECK_FALSE(find_idx_labels(images));
  CHECK_THROWS_WITH_AS(read_idx(images), doctest::Contains("expected a labels file beside"),
                       InputError);
  write_plain("found-labels-idx1-ubyte", idx_bytes({3}, kLabels));
  REQUIRE(find_idx_labels(images));
  CHECK(find_idx_labels(images)->filename() == "found-labels-idx1-ubyte");
  const auto mnist = write_plain("t10k-images.idx3-ubyte", idx_bytes({3, 2, 2}, kPixels));
  write_plain("t10k-labels.idx1-ubyte", idx_bytes({3}, kLabels));
  CHECK(read_idx(mnist).rows() == 3);
  // An explicit labels path wins.
  const auto other = write_plain("other-labels", idx_bytes({3}, {1, 2, 3}));
  CHECK(read_idx(images, other).labels == std::vector<std::int32_t>{1, 2, 3});
}

TEST_CASE("malformed IDX input is reported with the path and what was expected") {
  const auto labels = write_plain("l", idx_bytes({3}, kLabels));
  auto expect = [&](const fs::path& images, const char* text) {
    CHECK_THROWS_WITH_AS(read_idx(images, labels), doctest::Contains(text), InputError);
  };
  expect(write_plain("magic", "GIF89a..."),
         "expected an IDX file (magic 00 00 <type> <dimensions>), found bytes 47 49 46 38");
  expect(write_plain("empty", ""), "found an empty file");
  expect(write_plain("type", idx_bytes({3, 2, 2}, kPixels, 0x0d)),
         "expected IDX data of unsigned bytes (type 0x08), found type 0x0d");
  auto short_data = kPixels;
  short_data.pop_back();
  expect(
      write_plain("short", idx_bytes({3, 2, 2}, short_data)),
      "expected 3 x 2 x 2 = 12 bytes of data after the header, found 11 (the file is truncated)");
  expect(write_plain("header", std::string("\0\0\x08\x03\0\0", 6)), "-byte IDX header");
  expect(write_plain("no-pixels", idx_bytes({3, 0, 28}, {})),
         "expected images of at least one pixel, found 3 images of 0");
  CHECK_THROWS_WITH_AS(read_idx(write_plain("i", idx_bytes({3, 2, 2}, kPixels)),
                                write_plain("l2", idx_bytes({2}, {1, 2}))),
                       doctest::Contains("expected 3 labels (one per image in"), InputError);
  CHECK_THROWS_AS(read_idx(dir() / "missing-file", labels), SystemError);

  // A gzip file cut short, and one with damaged compressed bytes.
  const std::string gz = slurp(write_gz("whole.gz", idx_bytes({3, 2, 2}, kPixels)));
  expect(write_plain("cut.gz", gz.substr(0, gz.size() / 2)),
         "expected a complete gzip stream, found it truncated");
  std::string damaged = gz;
  for (std::size_t i = 10; i < damaged.size() - 8; ++i) damaged[i] = static_cast<char>(0xff);
  expect(write_plain("damaged.gz", damaged), "expected valid gzip data, found corrupt data");
}
