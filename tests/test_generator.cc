#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "hogwild/dataset.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/trainer.h"

using namespace hogwild;

namespace {
SparseGeneratorConfig small(double zipf) {
  SparseGeneratorConfig c;
  c.rows = 4000;
  c.test_rows = 1000;
  c.features = 2000;
  c.nnz_per_row = 30;
  c.zipf = zipf;
  c.seed = 7;
  return c;
}
}  // namespace

TEST_CASE("rows have K sorted distinct features, unit norm, labels +-1") {
  for (const double zipf : {0.0, 1.0, 2.5}) {
    const auto p = generate_sparse(small(zipf));
    REQUIRE(p.train.rows() == 4000);
    REQUIRE(p.test.rows() == 1000);
    for (std::size_t i = 0; i < p.train.rows(); ++i) {
      const auto row = p.train.row(i);
      REQUIRE(row.indices.size() == 30);
      REQUIRE(std::adjacent_find(row.indices.begin(), row.indices.end(),
                                 [](auto a, auto b) { return a >= b; }) == row.indices.end());
      double norm2 = 0;
      for (const float v : row.values) norm2 += double{v} * v;
      REQUIRE(std::abs(norm2 - 1.0) < 1e-5);
      REQUIRE((p.train.labels[i] == 1.0f || p.train.labels[i] == -1.0f));
    }
  }
}

TEST_CASE("same seed gives the same data, and another seed does not") {
  const auto a = generate_sparse(small(1.0));
  const auto b = generate_sparse(small(1.0));
  CHECK(a.train.indices == b.train.indices);
  CHECK(a.train.values == b.train.values);
  CHECK(a.train.labels == b.train.labels);
  auto other = small(1.0);
  other.seed = 8;
  CHECK(generate_sparse(other).train.indices != a.train.indices);
}

TEST_CASE("the Zipf exponent skews feature frequencies, and 0 is uniform") {
  auto top_share = [](double zipf) {
    const auto p = generate_sparse(small(zipf));
    auto counts = feature_counts(p.train);
    std::sort(counts.begin(), counts.end(), std::greater<>());
    double top = 0, total = 0;
    for (std::size_t j = 0; j < counts.size(); ++j) {
      total += counts[j];
      if (j < counts.size() / 100) top += counts[j];
    }
    return top / total;
  };
  // Uniform: the top 1% of features hold about 1% of the nonzeros (sampling noise aside).
  CHECK(top_share(0.0) < 0.02);
  // Power law: the head dominates, more so with a larger exponent.
  CHECK(top_share(1.0) > 0.05);
  CHECK(top_share(1.5) > top_share(1.0));
}

TEST_CASE("label noise flips the expected fraction of labels") {
  auto clean = small(1.0);
  clean.label_noise = 0.0;
  auto noisy = clean;
  noisy.label_noise = 0.2;
  const auto a = generate_sparse(clean);
  const auto b = generate_sparse(noisy);
  std::size_t flipped = 0;
  for (std::size_t i = 0; i < a.train.rows(); ++i)
    flipped += a.train.labels[i] != b.train.labels[i];
  const double rate = static_cast<double>(flipped) / a.train.rows();
  // Binomial(4000, 0.2): sd ~ 0.0063; 5 sd either side.
  CHECK(rate > 0.2 - 0.032);
  CHECK(rate < 0.2 + 0.032);
  // Clean labels are the sign of the hidden margin.
  for (std::size_t i = 0; i < a.train.rows(); ++i) {
    const auto row = a.train.row(i);
    double m = 0;
    for (std::size_t k = 0; k < row.indices.size(); ++k)
      m += a.hidden_weights[row.indices[k]] * row.values[k];
    REQUIRE(a.train.labels[i] == (m >= 0 ? 1.0f : -1.0f));
  }
}

TEST_CASE("bad generator settings are rejected with the option name") {
  auto c = small(1.0);
  c.nnz_per_row = 3000;
  CHECK_THROWS_WITH_AS(generate_sparse(c), doctest::Contains("--nnz-per-row"), InputError);
  c = small(1.0);
  c.zipf = -1;
  CHECK_THROWS_WITH_AS(generate_sparse(c), doctest::Contains("--zipf"), InputError);
  c = small(1.0);
  c.label_noise = 0.7;
  CHECK_THROWS_WITH_AS(generate_sparse(c), doctest::Contains("--noise"), InputError);
  c = small(1.0);
  c.classes = 1;
  CHECK_THROWS_WITH_AS(generate_sparse(c), doctest::Contains("--classes"), InputError);
}

namespace {

// Text-like multiclass data: short rows over a large vocabulary.
SparseGeneratorConfig text_like(std::size_t classes, double noise) {
  SparseGeneratorConfig c;
  c.rows = 6000;
  c.test_rows = 2000;
  c.features = 5000;
  c.nnz_per_row = 40;
  c.classes = classes;
  c.label_noise = noise;
  c.seed = 11;
  return c;
}

// The class of the largest margin over the problem's hidden hyperplanes, computed here.
std::size_t best_class(const SparseProblem& p, std::size_t classes, const SparseRow& row) {
  const std::size_t d = p.hidden_weights.size() / classes;
  std::size_t best = 0;
  double best_margin = -1e300;
  for (std::size_t c = 0; c < classes; ++c) {
    double m = 0;
    for (std::size_t k = 0; k < row.indices.size(); ++k) {
      m += double{p.hidden_weights[c * d + row.indices[k]]} * row.values[k];
    }
    if (m > best_margin) {
      best = c;
      best_margin = m;
    }
  }
  return best;
}

}  // namespace

TEST_CASE("multiclass: labels are the largest margin's class, every class occurs, noise as asked") {
  const std::size_t k = 20;
  const auto clean = generate_sparse(text_like(k, 0.0));
  REQUIRE(clean.hidden_weights.size() == k * 5000);
  std::vector<std::size_t> counts(k, 0);
  for (std::size_t i = 0; i < clean.train.rows(); ++i) {
    const float y = clean.train.labels[i];
    REQUIRE(y == std::floor(y));
    REQUIRE(static_cast<std::size_t>(y) == best_class(clean, k, clean.train.row(i)));
    ++counts[static_cast<std::size_t>(y)];
  }
  // No class is empty, none has more than three times its share.
  CHECK(*std::min_element(counts.begin(), counts.end()) > 0);
  CHECK(*std::max_element(counts.begin(), counts.end()) < 3 * clean.train.rows() / k);
  // With noise 0.2, the replaced labels: binomial(6000, 0.2) is 1200 +- 31 (sd); 5 sd either way.
  const auto noisy = generate_sparse(text_like(k, 0.2));
  std::size_t replaced = 0;
  for (std::size_t i = 0; i < noisy.train.rows(); ++i) {
    replaced +=
        static_cast<std::size_t>(noisy.train.labels[i]) != best_class(noisy, k, noisy.train.row(i));
  }
  CHECK(replaced > 1045);
  CHECK(replaced < 1355);
  CHECK(generate_sparse(text_like(k, 0.2)).train.labels == noisy.train.labels);
}

TEST_CASE("term counts and unnormalised rows as asked") {
  auto c = text_like(5, 0.0);
  c.counts = true;
  c.normalize = false;
  const auto raw = generate_sparse(c);
  for (const float v : raw.train.values) REQUIRE((v >= 1.0f && v == std::floor(v)));
  std::size_t above_one = 0;
  for (const float v : raw.train.values) above_one += v > 1.0f;
  CHECK(above_one > raw.train.nnz() / 10);  // counts of 2 and more occur
  c.normalize = true;
  const auto unit = generate_sparse(c);
  for (std::size_t i = 0; i < unit.train.rows(); ++i) {
    double norm2 = 0;
    for (const float v : unit.train.row(i).values) norm2 += double{v} * v;
    REQUIRE(std::abs(norm2 - 1.0) < 1e-5);
  }
}

TEST_CASE("multiclass text-like data is learnable: softmax far above chance") {
  // 20 classes, the largest holding about 8% of the rows; seeded, serial: a fixed figure.
  const auto p = generate_sparse(text_like(20, 0.0));
  TrainConfig config;
  config.model = SoftmaxModel{};
  config.policy = Policy::kSerial;
  config.epochs = 10;
  config.optimizer.step = 1.0;
  config.schedule = ScheduleSpec::parse("fixed:1");
  const Report report = train(config, p.train, &p.test);
  CHECK(*report.epochs.back().test->accuracy > 0.35);
}

TEST_CASE("regression targets: unit-variance margins plus noise of the asked deviation") {
  SparseGeneratorConfig c = small(1.0);
  c.regression = true;
  c.label_noise = 0.0;
  const auto clean = generate_sparse(c);
  c.label_noise = 0.5;
  const auto noisy = generate_sparse(c);
  auto moments = [](const std::vector<float>& y) {
    double sum = 0;
    double sum2 = 0;
    for (const float v : y) {
      sum += v;
      sum2 += double{v} * v;
    }
    const double n = static_cast<double>(y.size());
    return std::pair{sum / n, sum2 / n - (sum / n) * (sum / n)};
  };
  // Without noise the training targets are the margins standardised to variance 1.
  CHECK(moments(clean.train.labels).second == doctest::Approx(1.0).epsilon(1e-4));
  // The noise is what the noisy targets add to the clean ones: mean 0, deviation 0.5 (4,000
  // draws: the sample deviation is within 5% with overwhelming probability).
  std::vector<float> added(clean.train.labels.size());
  for (std::size_t i = 0; i < added.size(); ++i) {
    added[i] = noisy.train.labels[i] - clean.train.labels[i];
  }
  const auto [mean, variance] = moments(added);
  CHECK(std::abs(mean) < 0.05);
  CHECK(std::sqrt(variance) == doctest::Approx(0.5).epsilon(0.05));
  // The rows are the classification problem's rows: only the targets differ.
  CHECK(clean.train.indices == generate_sparse(small(1.0)).train.indices);
  // Least squares learns them: its loss (half the squared error) falls from the targets' own
  // 0.625 towards the noise floor 0.125 (0.21 after 20 serial epochs on 4,000 rows).
  TrainConfig config;
  config.model = LinearModel{LossKind::kSquared};
  config.policy = Policy::kSerial;
  config.epochs = 20;
  config.optimizer.step = 0.5;
  const Report report = train(config, noisy.train, &noisy.test);
  CHECK(report.epochs.back().test->loss < 0.3);
  c.label_noise = 101;
  CHECK_THROWS_WITH_AS(generate_sparse(c),
                       doctest::Contains("--noise: expected a noise standard deviation"),
                       InputError);
}
