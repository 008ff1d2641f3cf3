// Compressed inputs: LIBSVM, ratings and IDX files compressed with gzip, bzip2 or xz (by the
// libraries' own encoders) read as their plain text does, whatever their names; concatenated
// streams; truncated and corrupt files refused with the path; line numbers of the
// decompressed text in parse errors.
#include <bzlib.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <lzma.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "data/input.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/idx.h"
#include "hogwild/libsvm.h"
#include "hogwild/ratings.h"
#include "test_support.h"

using namespace hogwild;
namespace fs = std::filesystem;

namespace {

std::string gzip(std::string_view text) {
  z_stream s{};
  REQUIRE(deflateInit2(&s, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&s, static_cast<uLong>(text.size())) + 64, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  s.avail_in = static_cast<uInt>(text.size());
  s.next_out = reinterpret_cast<Bytef*>(out.data());
  s.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&s, Z_FINISH) == Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

std::string bzip2(std::string_view text) {
  std::string out(text.size() + text.size() / 100 + 700, '\0');
  auto size = static_cast<unsigned>(out.size());
  REQUIRE(BZ2_bzBuffToBuffCompress(out.data(), &size, const_cast<char*>(text.data()),
                                   static_cast<unsigned>(text.size()), 9, 0, 0) == BZ_OK);
  out.resize(size);
  return out;
}

std::string xz(std::string_view text) {
  std::string out(lzma_stream_buffer_bound(text.size()), '\0');
  std::size_t size = 0;
  REQUIRE(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, nullptr,
                                  reinterpret_cast<const std::uint8_t*>(text.data()), text.size(),
                                  reinterpret_cast<std::uint8_t*>(out.data()), &size,
                                  out.size()) == LZMA_OK);
  out.resize(size);
  return out;
}

fs::path write(const std::string& name, const std::string& bytes) {
  const fs::path path = fs::temp_directory_path() / ("hogwild_test_input_" + name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// The text of a small generated LIBSVM set, a few hundred kilobytes: several blocks compressed.
std::string libsvm_text() {
  SparseGeneratorConfig g;
  g.rows = 3000;
  g.features = 500;
  g.nnz_per_row = 20;
  std::ostringstream out;
  write_libsvm(generate_sparse(g).train, out);
  return out.str();
}

void check_same(const Dataset& a, const Dataset& b) {
  test::check_same_rows(a, b);
  CHECK(a.num_features == b.num_features);
}

using Compressor = std::string (*)(std::string_view);

}  // namespace

TEST_CASE("gzip, bzip2 and xz LIBSVM files read as the plain file does, whatever their names") {
  const std::string text = libsvm_text();
  const Dataset plain = parse_libsvm(text, "plain");
  for (const auto& format :
       {std::pair<const char*, Compressor>{"gzip", gzip}, {"bzip2", bzip2}, {"xz", xz}}) {
    const auto& [name, compress] = format;
    CAPTURE(format.first);
    const std::string bytes = compress(text);
    CHECK(detail::compression_name(detail::compression_of(bytes)) == name);
    const fs::path path = write(std::string(name) + ".txt", bytes);
    check_same(read_libsvm(path), plain);
    check_same(parse_libsvm(bytes, "memory"), plain);
    // Concatenated streams are one text, as `cat a.gz b.gz | gunzip` reads them.
    const std::string half = text.substr(0, text.find('\n', text.size() / 2) + 1);
    const std::string rest = text.substr(half.size());
    check_same(parse_libsvm(compress(half) + compress(rest), "two streams"), plain);
    fs::remove(path);
  }
}

TEST_CASE("a mapped file holds the bytes a read of it gives; what cannot be mapped is read") {
  const std::string text = libsvm_text();
  const fs::path path = write("mapped.svm", text);
  {
    const auto mapped = detail::MappedFile::open(path);
    REQUIRE(mapped.has_value());
    CHECK(mapped->bytes() == read_text(path));
  }
  // Standard input, a directory, an empty and a missing file: the stream reader's turn, and its
  // messages.
  CHECK_FALSE(detail::MappedFile::open("-").has_value());
  CHECK_FALSE(detail::MappedFile::open(fs::temp_directory_path()).has_value());
  const fs::path empty = write("mapped_empty.svm", "");
  CHECK_FALSE(detail::MappedFile::open(empty).has_value());
  const fs::path missing = fs::temp_directory_path() / "hogwild_test_input_no_such_file.svm";
  CHECK_FALSE(detail::MappedFile::open(missing).has_value());
  CHECK_THROWS_WITH_AS(read_libsvm(empty), doctest::Contains(empty.string().c_str()), InputError);
  CHECK_THROWS_WITH_AS(read_libsvm(missing), doctest::Contains("cannot open"), SystemError);
  CHECK_THROWS_WITH_AS(read_libsvm(fs::temp_directory_path()), doctest::Contains("is a directory"),
                       SystemError);
  // Rows and a parse error's line come out as from the bytes in memory.
  check_same(read_libsvm(path), parse_libsvm(text, "memory"));
  const fs::path bad = write("mapped_bad.svm", text + "1 3:x\n");
  const auto lines = std::count(text.begin(), text.end(), '\n');
  CHECK_THROWS_WITH_AS(read_libsvm(bad),
                       doctest::Contains(fmt::format("{}:{}:", bad.string(), lines + 1).c_str()),
                       InputError);
  fs::remove(path);
  fs::remove(empty);
  fs::remove(bad);
}

TEST_CASE("compressed ratings and IDX files read as the plain ones") {
  const std::string ratings = "1 2 3.5\n2 1 4\n# a comment\n3 3 1.5\n";
  const Ratings plain = parse_ratings(ratings, "plain");
  const Ratings packed = read_ratings(write("ratings.bz2", bzip2(ratings)));
  CHECK(packed.values == plain.values);
  CHECK(packed.users == plain.users);
  const std::string idx("\0\0\x08\x01\0\0\0\x03\x07\x08\x09", 11);
  CHECK(read_idx_array(write("labels.xz", xz(idx))).data == std::vector<std::uint8_t>{7, 8, 9});
  CHECK(parse_idx_array(gzip(idx), "labels.gz").shape == std::vector<std::size_t>{3});
}

TEST_CASE("truncated and corrupt compressed files are refused with the path and the format") {
  const std::string text = libsvm_text();
  const std::string gz = gzip(text);
  const fs::path cut = write("cut.gz", gz.substr(0, gz.size() / 2));
  CHECK_THROWS_WITH_AS(read_libsvm(cut),
                       (cut.string() +
                        ": expected a complete gzip stream, found it truncated "
                        "after " +
                        std::to_string(gz.size() / 2) + " compressed bytes")
                           .c_str(),
                       InputError);
  std::string bz = bzip2(text);
  bz[bz.size() / 2] = static_cast<char>(bz[bz.size() / 2] ^ 0x55);
  const fs::path corrupt = write("corrupt.bz2", bz);
  CHECK_THROWS_WITH_AS(
      read_libsvm(corrupt),
      doctest::Contains(
          (corrupt.string() + ": expected valid bzip2 data, found corrupt data (").c_str()),
      InputError);
  const std::string x = xz(text);
  CHECK_THROWS_WITH_AS(parse_libsvm(x.substr(0, x.size() - 7), "cut.xz"),
                       doctest::Contains("cut.xz: expected a complete xz stream"), InputError);
  // A header alone is a truncated stream, not an empty file.
  CHECK_THROWS_WITH_AS(parse_libsvm(gz.substr(0, 10), "header.gz"),
                       doctest::Contains("header.gz: expected a complete gzip stream"), InputError);
  fs::remove(cut);
  fs::remove(corrupt);
}

TEST_CASE("errors in compressed text name the line of the decompressed text") {
  const std::string text = "1 1:0.5\n-1 2:1\n1 3:oops\n";
  const fs::path path = write("bad.bz2", bzip2(text));
  CHECK_THROWS_WITH_AS(read_libsvm(path),
                       doctest::Contains((path.string() + ":3: expected").c_str()), InputError);
  CHECK_THROWS_WITH_AS(parse_libsvm(gzip(""), "empty.gz"),
                       "empty.gz:1: expected at least one example 'label index:value ...', found "
                       "an empty file",
                       InputError);
  fs::remove(path);
}

namespace {

// The parts' rows one after the other, as one dataset.
Dataset joined(const std::vector<Dataset>& parts) {
  Dataset all;
  for (const auto& part : parts) {
    for (std::size_t i = 0; i < part.rows(); ++i) {
      const SparseRow row = part.row(i);
      all.append(row.indices, row.values, part.labels[i]);
    }
  }
  return all;
}

}  // namespace

TEST_CASE("a file's parts hold every row once, in order, plain or compressed") {
  const std::string text = libsvm_text();
  const Dataset whole = parse_libsvm(text, "whole");
  // A compressed file's every part inflates the stream from its start: fewer counts there
  // (ThreadSanitizer's time), the same boundaries code.
  const std::vector<int> plain_counts{1, 2, 3, 5, 7, 64}, gzip_counts{1, 2, 7};
  for (const auto& file :
       {std::pair<std::string, std::string>{"plain", text}, {"gzip", gzip(text)}}) {
    const auto& [name, bytes] = file;
    const fs::path path = write("parts_" + name + ".svm", bytes);
    for (const int count : name == "plain" ? plain_counts : gzip_counts) {
      CAPTURE(file.first);
      CAPTURE(count);
      std::vector<Dataset> parts;
      for (int index = 0; index < count; ++index) {
        parts.push_back(read_libsvm_part(path, {index, count}, {.threads = 1}));
        CHECK(parts.back().rows() > 0);
        CHECK(parts.back().num_features <= whole.num_features);
      }
      test::check_same_rows(joined(parts), whole);
    }
    fs::remove(path);
  }
  // More parts than lines: the parts past the lines are empty, not errors.
  const fs::path two = write("parts_two.svm", "1 1:1\n-1 2:1\n");
  std::size_t rows = 0;
  for (int index = 0; index < 5; ++index) rows += read_libsvm_part(two, {index, 5}).rows();
  CHECK(rows == 2);
  CHECK_THROWS_AS(read_libsvm_part(two, {5, 5}), InputError);
  fs::remove(two);
}

TEST_CASE("an error in a part names the line of the whole file") {
  std::string text = libsvm_text();
  std::size_t pos = 0;
  for (int line = 1; line < 2500; ++line) pos = text.find('\n', pos) + 1;
  text.insert(pos, "1 5:oops\n");
  const fs::path path = write("parts_broken.svm", text);
  // Line 2500 of 3001 lies in the last of four parts, whose reader sees none of the lines
  // before it.
  CHECK_THROWS_WITH_AS(read_libsvm_part(path, {3, 4}),
                       (path.string() + ":2500: expected a numeric value for feature 5, found "
                                        "'oops'")
                           .c_str(),
                       InputError);
  CHECK_NOTHROW(read_libsvm_part(path, {0, 4}));
  fs::remove(path);
}

TEST_CASE("a part read 1-based becomes the 0-based reading when another part saw index 0") {
  // Index 0 only in the last line: the first part reads itself 1-based.
  const std::string text = libsvm_text() + "1 0:2 7:1\n";
  const fs::path path = write("parts_zero.svm", text);
  const Dataset whole = parse_libsvm(text, "whole");
  REQUIRE(whole.zero_based);
  Dataset first = read_libsvm_part(path, {0, 2});
  const Dataset second = read_libsvm_part(path, {1, 2});
  CHECK_FALSE(first.zero_based);
  CHECK(second.zero_based);
  make_zero_based(first);
  CHECK(first.zero_based);
  test::check_same_rows(joined({first, second}), whole);
  CHECK(std::max(first.num_features, second.num_features) == whole.num_features);
  fs::remove(path);
}
