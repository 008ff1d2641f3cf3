// Replays the LIBSVM fuzz seed corpus and every input the fuzzer (or review) found through the
// same contract checker the fuzz target uses (tests/fuzz/libsvm_contract.h), so the findings
// stay fixed in every build, sanitizers included, without clang or libFuzzer.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/checkpoint_contract.h"
#include "fuzz/idx_contract.h"
#include "fuzz/libsvm_contract.h"
#include "fuzz/ratings_contract.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/libsvm.h"

namespace fs = std::filesystem;
using hogwild::fuzz::check_libsvm;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The seed corpus lives next to this file; CMake compiles sources by absolute path.
fs::path corpus_dir(const char* target = "libsvm") {
  return fs::path(__FILE__).parent_path() / "fuzz" / "corpus" / target;
}

// Replays one target's seeds through `check`: the contract holds on each, valid_* seeds parse
// and invalid_* seeds are rejected.
template <class Check>
void replay_seeds(const char* target, Check&& check) {
  REQUIRE(fs::is_directory(corpus_dir(target)));
  std::vector<fs::path> seeds;
  for (const auto& entry : fs::directory_iterator(corpus_dir(target)))
    seeds.push_back(entry.path());
  std::sort(seeds.begin(), seeds.end());
  REQUIRE(seeds.size() >= 8);
  for (const auto& seed : seeds) {
    const std::string name = seed.filename().string();
    CAPTURE(name);
    const auto outcome = check(slurp(seed));
    CHECK(outcome.violation == "");
    if (name.rfind("valid_", 0) == 0) {
      CHECK_MESSAGE(outcome.parsed, outcome.error);
    } else {
      CHECK(name.rfind("invalid_", 0) == 0);
      CHECK_FALSE(outcome.parsed);
    }
  }
}

}  // namespace

TEST_CASE(
    "every LIBSVM seed keeps the reader's contract, valid_* seeds parse and invalid_* seeds are "
    "rejected") {
  REQUIRE(fs::is_directory(corpus_dir()));
  std::vector<fs::path> seeds;
  for (const auto& entry : fs::directory_iterator(corpus_dir())) seeds.push_back(entry.path());
  std::sort(seeds.begin(), seeds.end());
  REQUIRE(seeds.size() >= 10);
  for (const auto& seed : seeds) {
    const std::string name = seed.filename().string();
    const std::string text = slurp(seed);
    for (const int threads : {1, 4}) {
      CAPTURE(name);
      CAPTURE(threads);
      const auto outcome = check_libsvm(text, name, threads);
      CHECK(outcome.violation == "");
      if (name.rfind("valid_", 0) == 0) {
        CHECK_MESSAGE(outcome.parsed, outcome.error);
      } else {
        CHECK(name.rfind("invalid_", 0) == 0);
        CHECK_FALSE(outcome.parsed);
      }
    }
  }
}

TEST_CASE("regression: values too small for a float read as zero, not as 'not finite'") {
  // from_chars reports underflow and overflow alike as out of range; the reader used to call
  // both infinite, rejecting valid files written in double precision.
  const auto d = hogwild::parse_libsvm(
      "1e-50 1:1e-50 2:-1e-50 3:0.0000000000000000000000000000"
      "000000000000000000000001 4:1e-99999999999999\n",
      "tiny.svm");
  REQUIRE(d.rows() == 1);
  CHECK(d.labels[0] == 0.0f);
  CHECK(d.values == std::vector<float>{0.0f, -0.0f, 0.0f, 0.0f});
  CHECK(std::signbit(d.values[1]));
  // Denormals that from_chars can represent keep their value.
  CHECK(hogwild::parse_libsvm("1 1:1e-40\n", "x").values[0] > 0.0f);
  // Overflow stays an error, whatever the sign and however long the exponent.
  for (const char* text : {"1 1:1e39\n", "1 1:-3.5e38\n", "1 1:123456789e99999999999999999\n"}) {
    const auto outcome = check_libsvm(text, "big.svm");
    CHECK(outcome.violation == "");
    CHECK(outcome.error.find("big.svm:1: expected a finite value for feature 1") == 0);
  }
  const auto label = check_libsvm("-1e39 1:1\n", "big.svm");
  CHECK(label.error == "big.svm:1: expected a finite label, found '-1e39'");
  // A number with trailing junk is not numeric, even when its numeric part is out of range.
  const auto junk = check_libsvm("1 1:1e999x\n", "junk.svm");
  CHECK(junk.error == "junk.svm:1: expected a numeric value for feature 1, found '1e999x'");
}

TEST_CASE("the contract checker itself flags broken datasets and malformed messages") {
  using hogwild::fuzz::dataset_violation;
  using hogwild::fuzz::message_violation;
  hogwild::Dataset d = hogwild::parse_libsvm("1 2:1 5:2\n-1 1:1\n", "ok.svm");
  CHECK(dataset_violation(d, "ok.svm") == "");
  CHECK(dataset_violation(d, "other.svm") != "");
  auto unsorted = d;
  std::swap(unsorted.indices[0], unsorted.indices[1]);
  CHECK(dataset_violation(unsorted, "ok.svm") != "");
  auto out_of_range = d;
  out_of_range.num_features = 3;
  CHECK(dataset_violation(out_of_range, "ok.svm") != "");
  auto not_finite = d;
  not_finite.values[2] = std::numeric_limits<float>::infinity();
  CHECK(dataset_violation(not_finite, "ok.svm") != "");
  auto offsets = d;
  offsets.row_offsets[1] = 3;
  CHECK(dataset_violation(offsets, "ok.svm") != "");

  CHECK(message_violation("a.svm:2: expected x, found y", "1\n2\n", "a.svm") == "");
  CHECK(message_violation("b.svm:2: expected x", "1\n2\n", "a.svm") != "");
  CHECK(message_violation("a.svm: expected x", "1\n", "a.svm") != "");
  CHECK(message_violation("a.svm:9: expected x", "1\n", "a.svm") != "");
  CHECK(message_violation("a.svm:0: expected x", "1\n", "a.svm") != "");
  CHECK(message_violation("a.svm:1: wrong", "1\n", "a.svm") != "");
  CHECK(message_violation("a.svm:1: expected x\nmore", "1\n", "a.svm") != "");
}

TEST_CASE("every IDX, ratings and checkpoint seed keeps its reader's contract") {
  replay_seeds("idx", [](const std::string& bytes) { return hogwild::fuzz::check_idx(bytes); });
  replay_seeds("ratings",
               [](const std::string& text) { return hogwild::fuzz::check_ratings(text); });
  replay_seeds("checkpoint",
               [](const std::string& bytes) { return hogwild::fuzz::check_checkpoint(bytes); });
  // The checkpoint seeds with their checksums made valid: the parser behind the CRC holds too
  // (invalid_* seeds that are only corrupt may then parse, so only the contract is checked).
  for (const auto& entry : fs::directory_iterator(corpus_dir("checkpoint"))) {
    CAPTURE(entry.path().filename().string());
    const auto outcome =
        hogwild::fuzz::check_checkpoint(hogwild::fuzz::with_valid_crc(slurp(entry.path())));
    CHECK(outcome.violation == "");
  }
}

TEST_CASE("regression: a checkpoint count written as a float beyond 2^64 is refused, not cast") {
  // The checkpoint fuzzer (under UBSan) found metadata with "items": 184467440737095516150,
  // which JSON reads as a double; nlohmann's get<std::uint64_t> cast it, undefined behaviour.
  // Counts are now read only from JSON integers within their type's range.
  const std::string bytes = hogwild::fuzz::with_valid_crc(
      slurp(corpus_dir("checkpoint") / "invalid_count_beyond_range.ckpt"));
  CHECK_THROWS_WITH_AS(hogwild::parse_checkpoint(bytes, "c.ckpt"),
                       doctest::Contains("c.ckpt: expected checkpoint metadata with integer "
                                         "counts and a config object, found 'items' holding"),
                       hogwild::InputError);
}

TEST_CASE("regression: a damaged gzip trailer claiming 4 GiB does not size the first allocation") {
  // The IDX fuzzer ran at 50 inputs/s: gzip inputs whose last four bytes (the uncompressed
  // size mod 2^32) were mutated made the reader reserve up to 4 GiB before inflating 20 bytes.
  // The reservation is now bounded by deflate's 1032-fold limit on the compressed size.
  const std::string bytes = slurp(corpus_dir("idx") / "invalid_huge_isize.gz");
  REQUIRE(bytes.size() < 64);
  const auto outcome = hogwild::fuzz::check_idx(bytes, "huge.gz");
  CHECK(outcome.violation == "");
  CHECK_FALSE(outcome.parsed);
  CHECK(outcome.error.rfind("huge.gz: expected ", 0) == 0);
}
