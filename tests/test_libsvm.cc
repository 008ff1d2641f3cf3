#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/libsvm.h"
#include "test_support.h"

using namespace hogwild;

namespace {

std::string to_text(const Dataset& d) {
  std::ostringstream out;
  write_libsvm(d, out);
  return out.str();
}

// Parses `text` and returns the error message (empty if it parsed).
std::string error_of(const std::string& text) {
  try {
    (void)parse_libsvm(text, "bad.svm");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("generated data round-trips exactly through LIBSVM text") {
  SparseGeneratorConfig c;
  c.rows = 3000;
  c.features = 5000;
  c.nnz_per_row = 40;
  const auto p = generate_sparse(c);
  for (const int threads : {1, 2, 4}) {
    CAPTURE(threads);
    const auto back = parse_libsvm(to_text(p.train), "mem", {.threads = threads});
    test::check_same_rows(p.train, back);
  }
}

TEST_CASE("multi-chunk parse gives the same result and the right line numbers") {
  SparseGeneratorConfig c;
  c.rows = 40000;  // a few MB of text: many chunks
  c.features = 1000;
  c.nnz_per_row = 10;
  const auto p = generate_sparse(c);
  const std::string text = to_text(p.train);
  REQUIRE(text.size() > (3u << 20));
  test::check_same_rows(parse_libsvm(text, "mem", {.threads = 1}),
                        parse_libsvm(text, "mem", {.threads = 8}));
  // Break line 31234 (deep inside a later chunk).
  std::size_t pos = 0;
  for (int line = 1; line < 31234; ++line) pos = text.find('\n', pos) + 1;
  std::string broken = text;
  broken.insert(pos, "1 5:oops\n");
  try {
    (void)parse_libsvm(broken, "big.svm", {.threads = 8});
    FAIL("expected an error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) ==
          "big.svm:31234: expected a numeric value for feature 5, found 'oops'");
  }
}

TEST_CASE("':' in comments and query ids, in every chunk, leave the rows as without them") {
  // Each chunk's nonzeros are parsed into room counted from its ':'; these leave some of it
  // unused, so every later chunk's rows move down to close the gaps.
  SparseGeneratorConfig c;
  c.rows = 40000;  // a few MB of text: several chunks
  c.features = 1000;
  c.nnz_per_row = 10;
  const std::string plain = to_text(generate_sparse(c).train);
  std::string annotated;
  std::size_t line = 0;
  for (std::size_t begin = 0; begin < plain.size(); ++line) {
    const std::size_t end = plain.find('\n', begin);
    const std::string row = plain.substr(begin, end - begin);
    const std::size_t label_end = std::min(row.find(' '), row.size());
    annotated += row.substr(0, label_end) + " qid:" + std::to_string(line % 5) +
                 row.substr(label_end) + (line % 3 == 0 ? " # seen: 12:00, a:b\n" : "\n");
    begin = end + 1;
  }
  REQUIRE(annotated.size() > (3u << 20));
  const Dataset expected = parse_libsvm(plain, "mem", {.threads = 1});
  for (const int threads : {1, 2, 8}) {
    CAPTURE(threads);
    test::check_same_rows(expected, parse_libsvm(annotated, "mem", {.threads = threads}));
  }
}

TEST_CASE("accepted syntax: qid, comments, blank lines, CRLF, +1 and 0/1 labels, tabs") {
  const std::string text =
      "# a header comment\n"
      "+1 qid:3 1:0.5 4:2 # trailing comment\r\n"
      "\n"
      "0\t2:1e-3\t10:-7\n"
      "   \n"
      "1 3:1\n"
      "-1\n";  // a row with no features
  const auto d = parse_libsvm(text, "ok.svm");
  REQUIRE(d.rows() == 4);
  CHECK(d.labels == std::vector<float>{1, 0, 1, -1});
  CHECK(d.indices == std::vector<std::uint32_t>{0, 3, 1, 9, 2});
  CHECK(d.values == std::vector<float>{0.5f, 2.0f, 1e-3f, -7.0f, 1.0f});
  CHECK(d.row_offsets == std::vector<std::uint64_t>{0, 2, 4, 5, 5});
  CHECK(d.num_features == 10);
  CHECK(d.source == "ok.svm");
}

// A number as files write it: a sign or none, digits (leading zeros too), a fraction of up to 12
// digits, now and then an exponent; around the lengths where the reader's exact shortcut for
// plain decimals (mantissas to 2^24, fractions to 10 digits) hands over to the general one.
std::string random_number_text(std::mt19937_64& rng) {
  const auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::string text = std::array<const char*, 4>{"", "", "-", "+"}[pick(4)];
  const int integer_digits = 1 + pick(9);
  for (int i = 0; i < integer_digits; ++i) text += static_cast<char>('0' + pick(10));
  if (pick(4) > 0) {
    text += '.';
    const int fraction_digits = 1 + pick(12);
    for (int i = 0; i < fraction_digits; ++i) text += static_cast<char>('0' + pick(10));
  }
  if (pick(10) == 0) text += fmt::format("e{}{}", pick(2) ? "-" : "", pick(20));
  return text;
}

TEST_CASE("labels and values read as strtof rounds them, bit for bit, in every form") {
  std::mt19937_64 rng(17);
  std::vector<std::string> numbers = {"16777216",    "16777217",     "-16777217",
                                      "1677721.7",   "0.0000000001", "0.00000000001",
                                      "-0",          "+0.5",         "000000000000000000001",
                                      "1234567.891", "0.1",          "9999999999"};
  while (numbers.size() < 60000) numbers.push_back(random_number_text(rng));
  std::string text;
  std::vector<std::string> labels;
  std::vector<std::string> values;
  for (std::size_t k = 0; k < numbers.size(); k += 6) {
    labels.push_back(numbers[k]);
    text += numbers[k];
    for (std::size_t j = 1; j < 6 && k + j < numbers.size(); ++j) {
      values.push_back(numbers[k + j]);
      text += fmt::format(" {}:{}", j, numbers[k + j]);
    }
    text += k % 12 == 0 ? " # a comment\n" : "\n";
  }
  const auto bits = [](float x) { return std::bit_cast<std::uint32_t>(x); };
  for (const int threads : {1, 3}) {
    CAPTURE(threads);
    const Dataset d = parse_libsvm(text, "numbers.svm", {.threads = threads});
    REQUIRE(d.labels.size() == labels.size());
    REQUIRE(d.values.size() == values.size());
    for (std::size_t i = 0; i < labels.size(); ++i) {
      CAPTURE(labels[i]);
      CHECK(bits(d.labels[i]) == bits(std::strtof(labels[i].c_str(), nullptr)));
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      CAPTURE(values[i]);
      CHECK(bits(d.values[i]) == bits(std::strtof(values[i].c_str(), nullptr)));
    }
  }
}

TEST_CASE("malformed input names the file, the line, what was expected and what was found") {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"1 1:1\n1 2:abc\n", "bad.svm:2: expected a numeric value for feature 2, found 'abc'"},
      {"1 3:1 2:1\n", "bad.svm:1: expected feature indices in increasing order, found 2 after 3"},
      {"1 3:1 3:2\n", "bad.svm:1: expected each feature index once per line, found 3 twice"},
      {"1 1:1\n2:1 3:1\n", "bad.svm:2: expected a label before the features, found '2:1'"},
      {"abc 1:1\n", "bad.svm:1: expected a numeric label, found 'abc'"},
      {"nan 1:1\n", "bad.svm:1: expected a finite label, found 'nan'"},
      {"1 1:inf\n", "bad.svm:1: expected a finite value for feature 1, found 'inf'"},
      {"1 1:nan\n", "bad.svm:1: expected a finite value for feature 1, found 'nan'"},
      {"1 1:1e999\n", "bad.svm:1: expected a finite value for feature 1, found '1e999'"},
      {"1 1:1 junk\n", "bad.svm:1: expected index:value, found 'junk'"},
      {"1 -3:1\n", "bad.svm:1: expected a positive integer feature index, found '-3'"},
      {"1 x:1\n", "bad.svm:1: expected a positive integer feature index, found 'x'"},
      {"1 99999999999:1\n",
       "bad.svm:1: expected a feature index <= 4294967295, found '99999999999'"},
      {"1 qid:x 1:1\n", "bad.svm:1: expected an integer query id in qid:N, found 'qid:x'"},
      {"1 1:\n", "bad.svm:1: expected a numeric value for feature 1, found ''"},
      {"", "bad.svm:1: expected at least one example 'label index:value ...', found an empty file"},
      {"# only\n\n",
       "bad.svm:3: expected at least one example 'label index:value ...', found only "
       "blank or comment lines"},
      {"1 1:\x01\xff\n", "bad.svm:1: expected a numeric value for feature 1, found '\\x01\\xff'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(error_of(c.text) == c.message);
  }
}

TEST_CASE("files that cannot be read give a system error naming the path") {
  CHECK_THROWS_WITH_AS(read_libsvm("/nonexistent/file.svm"),
                       doctest::Contains("/nonexistent/file.svm: cannot open"), SystemError);
  CHECK_THROWS_WITH_AS(read_libsvm(std::filesystem::temp_directory_path()),
                       doctest::Contains("is a directory"), SystemError);
}

TEST_CASE("read_libsvm reads what write_libsvm wrote") {
  SparseGeneratorConfig c;
  c.rows = 500;
  c.features = 300;
  c.nnz_per_row = 12;
  const auto p = generate_sparse(c);
  const auto path = std::filesystem::temp_directory_path() / "hogwild_test_roundtrip.svm";
  write_libsvm(p.train, path);
  const auto back = read_libsvm(path);
  test::check_same_rows(p.train, back);
  CHECK(back.source == path.string());
  std::filesystem::remove(path);
}

TEST_CASE("0-based files: auto decides by an index 0 anywhere, as scikit-learn's reader does") {
  const std::string zero = "1 0:1 2:3\n-1 1:1\n";
  const Dataset a = parse_libsvm(zero, "zero.svm");
  CHECK(a.zero_based);
  CHECK(a.indices == std::vector<std::uint32_t>{0, 2, 1});
  CHECK(a.num_features == 3);
  const Dataset one = parse_libsvm("1 1:1 3:3\n-1 2:1\n", "one.svm");
  CHECK_FALSE(one.zero_based);
  CHECK(one.indices == a.indices);
  // Told, without an index 0: the indices count from 0 all the same.
  const Dataset told = parse_libsvm("1 1:1 3:3\n", "told.svm", {.index_base = IndexBase::kZero});
  CHECK(told.zero_based);
  CHECK(told.indices == std::vector<std::uint32_t>{1, 3});
  CHECK(told.num_features == 4);
  CHECK_THROWS_WITH_AS(parse_libsvm("1 1:1\n\n1 0:1\n", "bad.svm", {.index_base = IndexBase::kOne}),
                       "bad.svm:3: expected a feature index >= 1 (indices are 1-based), found 0",
                       InputError);
  CHECK_THROWS_WITH_AS(parse_libsvm("1 0:1\n1 4294967295:1\n", "top.svm"),
                       "top.svm:2: expected a feature index <= 4294967294 in a 0-based file, "
                       "found '4294967295'",
                       InputError);
  CHECK(parse_libsvm("1 4294967295:1\n", "top.svm").num_features == 4294967295u);
}

TEST_CASE("an index 0 in the last of many chunks makes every chunk 0-based") {
  std::string text;
  for (int i = 0; i < 60000; ++i) text += "1 3:0.5 7:1 12:2\n-1 1:1 5:0.25\n";
  const Dataset one = parse_libsvm(text, "many.svm", {.threads = 4});
  CHECK_FALSE(one.zero_based);
  CHECK(one.num_features == 12);
  const Dataset told =
      parse_libsvm(text, "many.svm", {.threads = 4, .index_base = IndexBase::kZero});
  text += "1 0:1\n";
  const Dataset zero = parse_libsvm(text, "many.svm", {.threads = 4});
  CHECK(zero.zero_based);
  CHECK(zero.num_features == 13);
  CHECK(std::equal(told.indices.begin(), told.indices.end(), zero.indices.begin()));
  CHECK(std::equal(one.indices.begin(), one.indices.end(), zero.indices.begin(),
                   [](std::uint32_t a, std::uint32_t b) { return a + 1 == b; }));
}
