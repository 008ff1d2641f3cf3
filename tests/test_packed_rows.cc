// Packed training rows (--data-precision, 16-bit indices, binary data): the half-float
// conversions against their definitions, the layout each data set gets, what the loops read
// back, the values a precision refuses, and whole runs: on data whose values f16 or u8 hold
// exactly (halves; multiples of 1/256 up to 255/256; integers up to 255), a packed run is the
// f32 run bit for bit (serial and simulated with delays and minibatches); racy at 1, 2 and 4
// threads it learns as the serial run does.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "engine/linear_evaluation.h"
#include "engine/packed_rows.h"
#include "hogwild/detail/huge_pages.h"
#include "hogwild/error.h"
#include "hogwild/trainer.h"
#include "test_support.h"

using namespace hogwild;
using detail::narrow_half;
using detail::PackedRows;
using detail::widen_half;
using test::rounded;

namespace {

// The value of a half float from its definition: (-1)^s 2^(e-15) (1 + m/1024), or 2^-14 m/1024
// when e = 0.
double half_value(std::uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  const double magnitude = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

bool finite_half(std::uint16_t h) { return ((h >> 10) & 0x1f) != 0x1f; }

Dataset sparse_data(std::size_t features, std::uint64_t seed) {
  auto problem = test::sparse_problem(600, features, 12, seed);
  return std::move(problem.train);
}

// What visit hands the loops for row r, widened to floats.
std::pair<std::vector<std::uint32_t>, std::vector<float>> read_back(const PackedRows& rows,
                                                                    std::uint32_t r) {
  std::vector<std::uint32_t> indices;
  std::vector<float> values;
  rows.visit(r, [&](const auto* idx, auto val, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) {
      indices.push_back(idx[k]);
      values.push_back(val[k]);
    }
  });
  return {indices, values};
}

TrainConfig logistic(DataPrecision precision, Policy policy = Policy::kSerial, int threads = 1) {
  TrainConfig config;
  config.model = LinearModel{LossKind::kLogistic};
  config.data_precision = precision;
  config.policy = policy;
  config.threads = threads;
  config.epochs = 4;
  config.optimizer.step = 0.5;
  config.keep_weights = true;
  return config;
}

void check_same_run(const Report& a, const Report& b) {
  REQUIRE(a.epochs.size() == b.epochs.size());
  for (std::size_t e = 0; e < a.epochs.size(); ++e) {
    CHECK(a.epochs[e].train.loss == b.epochs[e].train.loss);
  }
  CHECK(a.weights == b.weights);
}

}  // namespace

TEST_CASE("widen_half is exact for every finite half") {
  for (std::uint32_t h = 0; h <= 0xffff; ++h) {
    const auto half = static_cast<std::uint16_t>(h);
    if (!finite_half(half)) continue;
    const float wide = widen_half(half);
    REQUIRE(static_cast<double>(wide) == half_value(half));
    REQUIRE(std::signbit(wide) == ((half & 0x8000) != 0));  // -0 stays -0
  }
}

TEST_CASE("narrow_half rounds to the nearest half, ties to even") {
  // Every midpoint between neighbouring finite halves goes to the one with an even mantissa.
  for (std::uint32_t h = 0; h < 0x7bff; ++h) {
    const auto lower = static_cast<std::uint16_t>(h);
    const auto upper = static_cast<std::uint16_t>(h + 1);
    const float midpoint = (widen_half(lower) + widen_half(upper)) / 2;  // exact in float
    REQUIRE(narrow_half(midpoint) == ((lower & 1) == 0 ? lower : upper));
    REQUIRE(narrow_half(-midpoint) == ((lower & 1) == 0 ? lower : upper) + 0x8000);
    REQUIRE(narrow_half(widen_half(lower)) == lower);
  }
  // Any float in range: no finite half is nearer than the one chosen.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> exponent(-26.0f, 15.9f);
  for (int i = 0; i < 200000; ++i) {
    const float x = std::exp2(exponent(rng)) * (i % 2 ? -1.0f : 1.0f);
    const std::uint16_t h = narrow_half(x);
    const double error = std::fabs(half_value(h) - x);
    const auto neighbour_error = [&](int step) {
      return std::fabs(half_value(static_cast<std::uint16_t>(h + step)) - x);
    };
    REQUIRE(finite_half(h));
    if ((h & 0x7fff) != 0) REQUIRE(error <= neighbour_error(-1));
    if ((h & 0x7fff) != 0x7bff) REQUIRE(error <= neighbour_error(1));
  }
  CHECK(narrow_half(65520.0f) == 0x7c00);  // beyond the largest half: infinity
  CHECK(narrow_half(65504.0f) == 0x7bff);
}

TEST_CASE("each data set gets the layout that holds it") {
  SUBCASE("indices take 16 bits up to a dimension of 65,536") {
    Dataset data = sparse_data(400, 1);
    CHECK(PackedRows(data, DataPrecision::kF32).index_bits() == 16);
    data.num_features = 65536;
    CHECK(PackedRows(data, DataPrecision::kF32).index_bits() == 16);
    data.num_features = 65537;
    const PackedRows wide(data, DataPrecision::kF32);
    CHECK(wide.index_bits() == 32);
    CHECK(wide.bytes_per_nonzero() == 8);
  }
  SUBCASE("binary data stores no values, at every precision") {
    const Dataset data = rounded(sparse_data(400, 2), [](float, std::size_t) { return 1.0f; });
    for (auto precision : {DataPrecision::kF32, DataPrecision::kF16, DataPrecision::kU8}) {
      const PackedRows rows(data, precision);
      CHECK(rows.values() == PackedRows::Values::kOnes);
      CHECK(rows.bytes_per_nonzero() == 2);
      CHECK(to_string(rows.values()) == "none");
    }
  }
  SUBCASE("f16 and u8 as asked") {
    const Dataset data = sparse_data(400, 3);
    CHECK(PackedRows(data, DataPrecision::kF32).values() == PackedRows::Values::kF32);
    CHECK(PackedRows(data, DataPrecision::kF16).bytes_per_nonzero() == 4);
    CHECK(PackedRows(data, DataPrecision::kU8).bytes_per_nonzero() == 3);
  }
}

// The loss of w on `data` read from the data set (first), and from its packed rows (second).
template <class Loss>
std::pair<Evaluation, Evaluation> both_evaluations(const Dataset& data, std::span<const float> w,
                                                   double l2) {
  tbb::task_arena arena(2);
  const auto y = detail::mapped_labels(data, label_values(LossKind::kLogistic, data), "data");
  const PackedRows packed(data, DataPrecision::kF32);
  REQUIRE(packed.exact());
  const Evaluation given =
      detail::evaluate_mapped<Loss>(w, l2, detail::EvaluatedRows(data), y, arena);
  const Evaluation read = detail::with_packed_rows(packed, data, [&](const auto& rows) {
    return detail::evaluate_mapped<Loss>(w, l2, rows, y, arena);
  });
  return {given, read};
}

TEST_CASE("an evaluation of the packed rows is the data set's, bit for bit") {
  // 16- and 32-bit indices, floats and binary data; a row count that leaves rows beyond the
  // last group of four margins.
  for (const std::size_t features : {std::size_t{400}, std::size_t{70000}}) {
    for (const bool binary : {false, true}) {
      CAPTURE(features);
      CAPTURE(binary);
      Dataset data = sparse_data(400, 9);
      data.num_features = features;
      while (data.rows() % 4 != 3) {
        data.labels.pop_back();
        data.row_offsets.pop_back();
        data.indices.resize(data.row_offsets.back());
        data.values.resize(data.row_offsets.back());
      }
      if (binary) data = rounded(std::move(data), [](float, std::size_t) { return 1.0f; });
      std::vector<float> w(features);
      std::mt19937 rng(5);
      std::normal_distribution<float> normal;
      for (float& v : w) v = normal(rng);
      const auto logistic = both_evaluations<LogisticLoss>(data, w, 0.01);
      CHECK(logistic.second.loss == logistic.first.loss);
      CHECK(logistic.second.objective == logistic.first.objective);
      CHECK(logistic.second.accuracy == logistic.first.accuracy);
      const auto hinge = both_evaluations<HingeLoss>(data, w, 0.0);
      CHECK(hinge.second.loss == hinge.first.loss);
      CHECK(hinge.second.accuracy == hinge.first.accuracy);
    }
  }
  CHECK_FALSE(PackedRows(sparse_data(400, 9), DataPrecision::kF16).exact());
  CHECK_FALSE(PackedRows(sparse_data(400, 9), DataPrecision::kU8).exact());
}

TEST_CASE("a run's test loss, read from packed test rows, is the data set's bit for bit") {
  // Floats and binary data, 16-bit indices, a test row with a feature beyond the training data's
  // (the loss skips it), with and without L2; against the public evaluate of the run's weights.
  for (const bool binary : {false, true}) {
    for (const double l2 : {0.0, 0.001}) {
      CAPTURE(binary);
      CAPTURE(l2);
      auto problem = test::sparse_problem(800, 300, 12, 8, 202);
      Dataset fit = std::move(problem.train);
      Dataset test_rows = std::move(problem.test);
      const std::vector<std::uint32_t> beyond{3, static_cast<std::uint32_t>(fit.num_features + 4)};
      test_rows.append(beyond, std::vector<float>{0.5f, 2.0f}, fit.labels[0]);
      test_rows.num_features = fit.num_features + 5;
      if (binary) {
        const auto one = [](float, std::size_t) { return 1.0f; };
        fit = rounded(std::move(fit), one);
        test_rows = rounded(std::move(test_rows), one);
      }
      TrainConfig config = logistic(DataPrecision::kF32);
      config.l2 = l2;
      const Report report = train(config, fit, &test_rows);
      REQUIRE(report.training_rows->index_bits == 16);
      const std::vector<float> labels(report.labels.begin(), report.labels.end());
      const Evaluation given =
          evaluate(LossKind::kLogistic, report.weights, l2, test_rows, labels, 1);
      CHECK(report.epochs.back().test->loss == given.loss);
      CHECK(report.epochs.back().test->accuracy == given.accuracy);
    }
  }
}

TEST_CASE("the loops read back the data's indices, and its values as the precision holds them") {
  Dataset data = sparse_data(400, 4);
  // Signed values, to take the signed half path.
  Dataset signed_data = rounded(data, [](float v, std::size_t r) { return r % 3 ? v : -v; });
  const PackedRows f32(data, DataPrecision::kF32);
  const PackedRows f16(data, DataPrecision::kF16);
  const PackedRows f16_signed(signed_data, DataPrecision::kF16);
  const PackedRows u8(data, DataPrecision::kU8);
  CHECK(f16.values() == PackedRows::Values::kPositiveF16);
  CHECK(f16_signed.values() == PackedRows::Values::kF16);
  for (std::uint32_t r = 0; r < data.rows(); ++r) {
    const SparseRow row = data.row(static_cast<std::size_t>(r));
    const std::vector<std::uint32_t> indices(row.indices.begin(), row.indices.end());
    const auto [i32, v32] = read_back(f32, r);
    CHECK(i32 == indices);
    CHECK(v32 == std::vector<float>(row.values.begin(), row.values.end()));
    const auto [i16, v16] = read_back(f16, r);
    const auto [i16s, v16s] = read_back(f16_signed, r);
    const auto [i8, v8] = read_back(u8, r);
    CHECK(i16 == indices);
    CHECK(i16s == indices);
    CHECK(i8 == indices);
    float largest = 0;
    for (float v : row.values) largest = std::max(largest, v);
    for (std::size_t k = 0; k < indices.size(); ++k) {
      CHECK(v16[k] == widen_half(narrow_half(row.values[k])));
      CHECK(v16s[k] == widen_half(narrow_half(
                           signed_data.values[row.indices.data() - data.indices.data() + k])));
      // A byte times largest / 255: within half a step of the value (and float rounding).
      CHECK(std::fabs(v8[k] - row.values[k]) <= largest / 255 * 0.5f * (1 + 1e-5f));
    }
  }
}

TEST_CASE("a precision that cannot hold the values is refused, naming the data") {
  Dataset data = sparse_data(400, 5);
  data.source = "rows.svm";
  data.values[7] = -0.25f;
  try {
    PackedRows rows(data, DataPrecision::kU8);
    FAIL("u8 accepted a negative value");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("rows.svm: expected values >= 0 for --data-precision u8") !=
          std::string::npos);
  }
  CHECK_NOTHROW(PackedRows(data, DataPrecision::kF16));
  data.values[7] = 70000.0f;
  CHECK_THROWS_WITH_AS(PackedRows(data, DataPrecision::kF16),
                       doctest::Contains("rows.svm: expected values within +-65504"), InputError);
  CHECK_NOTHROW(PackedRows(data, DataPrecision::kF32));
}

TEST_CASE("on values a precision holds exactly, a packed run is the f32 run bit for bit") {
  auto problem = test::sparse_problem(1500, 300, 14, 6, 300);
  // f16: values rounded to halves. u8: values k/256 in every row with 255/256 the largest, so
  // that a row's scale (255/256) / 255 is 1/256 exactly.
  const Dataset halves =
      rounded(problem.train, [](float v, std::size_t) { return widen_half(narrow_half(v)); });
  Dataset bytes = rounded(problem.train, [](float v, std::size_t) {
    return std::round(std::min(v, 0.99f) * 256) / 256;
  });
  for (std::size_t r = 0; r < bytes.rows(); ++r) {
    bytes.values[bytes.row_offsets[r]] = 255.0f / 256;  // every row's largest
  }
  // Counts: small integers, held with a scale of 1 (largest / 255 would not hold them), trained
  // with a step for their scale; rows of 1 only among them.
  const Dataset counts = rounded(
      problem.train, [](float v, std::size_t r) { return r % 4 ? std::round(v * 40) : 1.0f; });
  for (const bool simulated : {false, true}) {
    CAPTURE(simulated);
    auto config = [&](DataPrecision precision, double step = 0.5) {
      TrainConfig c = logistic(precision);
      c.optimizer.step = step;
      if (simulated) {
        c.simulate = 3;
        c.delay = DelaySpec::parse("uniform:6");
        c.schedule = ScheduleSpec::parse("fixed:4");
      }
      return c;
    };
    const Report f16 = train(config(DataPrecision::kF16), halves, &problem.test);
    CHECK(f16.training_rows->values == "f16");
    check_same_run(f16, train(config(DataPrecision::kF32), halves, &problem.test));
    const Report u8 = train(config(DataPrecision::kU8), bytes, &problem.test);
    CHECK(u8.training_rows->values == "u8");
    check_same_run(u8, train(config(DataPrecision::kF32), bytes, &problem.test));
    const Report u8_counts = train(config(DataPrecision::kU8, 0.005), counts, &problem.test);
    check_same_run(u8_counts, train(config(DataPrecision::kF32, 0.005), counts, &problem.test));
  }
}

TEST_CASE("racy runs on packed rows learn as the serial f32 run does, at 1, 2 and 4 threads") {
  auto problem = test::sparse_problem(4000, 2000, 20, 7, 1000);
  const Report serial = train(logistic(DataPrecision::kF32), problem.train, &problem.test);
  const double start = serial.epochs.front().train.loss;
  const double reference = serial.epochs.back().train.loss;
  REQUIRE(reference < 0.8 * start);
  for (const int threads : {1, 2, 4}) {
    for (const auto precision : {DataPrecision::kF16, DataPrecision::kU8}) {
      CAPTURE(threads);
      const Report racy =
          train(logistic(precision, Policy::kRacy, threads), problem.train, &problem.test);
      CHECK(racy.epochs.back().train.loss == doctest::Approx(reference).epsilon(0.1));
      CHECK(*racy.epochs.back().test->accuracy >= *serial.epochs.back().test->accuracy - 0.03);
    }
  }
}

TEST_CASE("resize_on_huge_pages: a resize, whatever pages back the storage") {
  using hogwild::detail::kHugePagesMinBytes;
  using hogwild::detail::resize_on_huge_pages;
  std::vector<std::uint16_t> small{7, 8};
  resize_on_huge_pages(small, 5);  // below the size that asks for huge pages
  CHECK(small == std::vector<std::uint16_t>{7, 8, 0, 0, 0});
  // Large enough to ask: the kept prefix and the value-initialised rest, as resize gives.
  const std::size_t large = 3 * kHugePagesMinBytes / sizeof(float) + 5;
  std::vector<float> values{1.5f, -2.0f};
  resize_on_huge_pages(values, large);
  REQUIRE(values.size() == large);
  CHECK(values[0] == 1.5f);
  CHECK(values[1] == -2.0f);
  CHECK(std::all_of(values.begin() + 2, values.end(), [](float v) { return v == 0.0f; }));
  values.back() = 3.0f;             // the whole buffer is writable
  resize_on_huge_pages(values, 3);  // shrinking keeps the front
  CHECK(values == std::vector<float>{1.5f, -2.0f, 0.0f});
  // Large storage grown into fresh storage, whose pages are written from oneTBB's threads
  // before the zero-fill: the elements moved over keep their values, the new ones are zero.
  const std::size_t first = kHugePagesMinBytes / sizeof(std::uint32_t) + 3;
  std::vector<std::uint32_t> counts(first);
  std::iota(counts.begin(), counts.end(), 1u);
  resize_on_huge_pages(counts, 4 * first + 1);
  REQUIRE(counts.size() == 4 * first + 1);
  for (std::size_t k = 0; k < first; ++k) REQUIRE(counts[k] == k + 1);
  CHECK(std::all_of(counts.begin() + static_cast<std::ptrdiff_t>(first), counts.end(),
                    [](std::uint32_t c) { return c == 0; }));
}
