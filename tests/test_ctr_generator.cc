// The CTR-like generator: one hashed index per field, the click rate asked for, category
// frequencies as the power law says, the same data for a seed whatever the thread count, a
// planted model that a logistic regression learns, and bad settings named.
#include <doctest/doctest.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hogwild/ctr_generator.h"
#include "hogwild/error.h"
#include "hogwild/trainer.h"

using namespace hogwild;

namespace {

CtrGeneratorConfig small_config() {
  CtrGeneratorConfig c;
  c.rows = 20000;
  c.test_rows = 5000;
  c.fields = 8;
  c.max_categories = 5000;
  c.features = 1 << 16;
  c.seed = 5;
  return c;
}

double clicks(const Dataset& data) {
  double positive = 0;
  for (const float label : data.labels) positive += label > 0 ? 1 : 0;
  return positive / static_cast<double>(data.rows());
}

}  // namespace

TEST_CASE("each row holds one hashed index per field, colliding fields adding up") {
  const auto config = small_config();
  const auto p = generate_ctr(config);
  REQUIRE(p.train.rows() == config.rows);
  REQUIRE(p.test.rows() == config.test_rows);
  CHECK(p.train.num_features == config.features);
  for (const Dataset* data : {&p.train, &p.test}) {
    for (std::size_t i = 0; i < data->rows(); ++i) {
      const auto row = data->row(i);
      REQUIRE(!row.indices.empty());
      CHECK(std::is_sorted(row.indices.begin(), row.indices.end()));
      CHECK(std::adjacent_find(row.indices.begin(), row.indices.end()) == row.indices.end());
      CHECK(row.indices.back() < config.features);
      float total = 0;
      for (const float v : row.values) total += v;
      CHECK(total == static_cast<float>(config.fields));
      CHECK((data->labels[i] == 1.0f || data->labels[i] == -1.0f));
    }
  }
}

TEST_CASE("fields run from a few categories to the largest count, log-spaced") {
  CtrGeneratorConfig c;
  c.fields = 26;
  c.max_categories = 10000000;
  CHECK(ctr_field_categories(c, 0) == 2);      // 10^(7/26) = 1.86, at least 2
  CHECK(ctr_field_categories(c, 12) == 3162);  // 10^(7 * 13/26) = sqrt(10^7)
  CHECK(ctr_field_categories(c, 25) == 10000000);
  for (std::size_t f = 1; f < c.fields; ++f) {
    CHECK(ctr_field_categories(c, f) >= ctr_field_categories(c, f - 1));
  }
}

TEST_CASE("clicks come at the rate asked for") {
  for (const double rate : {0.01, 0.05, 0.3}) {
    CAPTURE(rate);
    auto config = small_config();
    config.positive_rate = rate;
    const auto p = generate_ctr(config);
    // The bias sets the training rows' mean probability to the rate; the labels are draws
    // from it: 5 standard deviations of a mean of 20,000 (or 5,000) Bernoulli draws.
    CHECK(std::abs(clicks(p.train) - rate) < 5 * std::sqrt(rate * (1 - rate) / 20000));
    CHECK(std::abs(clicks(p.test) - rate) < 5 * std::sqrt(rate * (1 - rate) / 5000));
  }
}

TEST_CASE("a field's most frequent category comes as often as the power law says") {
  // One field of 1,000 categories, exponent 1.1: the first rank is a draw of the bounded
  // Pareto on [1, 1001) below 2, with probability (2^-0.1 - 1) / (1001^-0.1 - 1) = 0.1342.
  // The top category shares its hashed index with another with probability about 1000 / 2^22.
  auto config = small_config();
  config.fields = 1;
  config.max_categories = 1000;
  config.zipf = 1.1;
  config.features = 1 << 22;
  const auto p = generate_ctr(config);
  std::map<std::uint32_t, std::size_t> count;
  for (const auto index : p.train.indices) ++count[index];
  std::size_t top = 0;
  for (const auto& [index, n] : count) top = std::max(top, n);
  const double expected = (std::pow(2.0, -0.1) - 1) / (std::pow(1001.0, -0.1) - 1);
  const double share = static_cast<double>(top) / 20000.0;
  CHECK(std::abs(share - expected) < 5 * std::sqrt(expected * (1 - expected) / 20000));
  // Uniform (exponent 0): the top category holds about 1/1000, far below.
  config.zipf = 0;
  count.clear();
  for (const auto index : generate_ctr(config).train.indices) ++count[index];
  top = 0;
  for (const auto& [index, n] : count) top = std::max(top, n);
  CHECK(static_cast<double>(top) / 20000.0 < 0.005);
  // ... and 20,000 uniform draws hold every one of the 1,000 categories (one is missed with
  // probability about 1000 e^-20), each at its own index but for the expected 0.12 colliding
  // pairs among 1,000 categories in 2^22 indices.
  CHECK(count.size() >= 998);
  CHECK(count.size() <= 1000);
}

TEST_CASE("the same seed gives the same data with one thread or several, another seed not") {
  const auto config = small_config();
  const auto a = generate_ctr(config);
  tbb::task_arena one(1);
  const auto b = one.execute([&] { return generate_ctr(config); });
  CHECK(a.train.indices == b.train.indices);
  CHECK(a.train.values == b.train.values);
  CHECK(a.train.labels == b.train.labels);
  CHECK(a.test.labels == b.test.labels);
  CHECK(a.bias == b.bias);
  auto other = config;
  other.seed = 6;
  CHECK(generate_ctr(other).train.indices != a.train.indices);
}

TEST_CASE("logistic regression learns the planted clicks: below the base rate's log loss") {
  auto config = small_config();
  config.rows = 50000;
  config.signal = 2.5;  // a planted logit that varies more than the default's 1.5
  const auto p = generate_ctr(config);
  const double rate = clicks(p.train);
  // What predicting the click rate for every row scores on the test rows.
  const double base = -(rate * std::log(rate) + (1 - rate) * std::log(1 - rate));
  TrainConfig train_config;
  train_config.policy = Policy::kSerial;
  train_config.epochs = 2;
  train_config.optimizer.step = 0.05;
  const auto report = train(train_config, p.train, &p.test);
  const double loss = report.epochs.back().test->loss;
  MESSAGE("test log loss " << loss << ", the base rate's " << base);
  CHECK(loss < 0.9 * base);
  // Without a signal the labels carry nothing to learn.
  config.signal = 0;
  const auto flat = generate_ctr(config);
  CHECK(train(train_config, flat.train, &flat.test).epochs.back().test->loss > 0.98 * base);
}

TEST_CASE("bad CTR generator settings are rejected with the option name") {
  using C = CtrGeneratorConfig;
  const std::pair<std::function<void(C&)>, const char*> cases[] = {
      {[](C& c) { c.rows = 0; }, "--rows"},
      {[](C& c) { c.fields = 0; }, "--fields"},
      {[](C& c) { c.max_categories = 1; }, "--categories"},
      {[](C& c) { c.features = 0; }, "--features"},
      {[](C& c) { c.zipf = -1; }, "--zipf"},
      {[](C& c) { c.positive_rate = 0; }, "--positive-rate"},
      {[](C& c) { c.positive_rate = 1; }, "--positive-rate"},
      {[](C& c) { c.positive_rate = std::nan(""); }, "--positive-rate"},
      {[](C& c) { c.signal = -1; }, "--signal"},
  };
  for (const auto& entry : cases) {
    const char* option = entry.second;
    CAPTURE(option);
    auto c = small_config();
    entry.first(c);
    try {
      generate_ctr(c);
      FAIL("expected an InputError");
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find(option) != std::string::npos);
    }
  }
}
