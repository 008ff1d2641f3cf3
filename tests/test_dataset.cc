// A data set's summary and its subsets against plain references: describe's label counts
// against one map insertion per label (random sequences of two to five classes, and the first
// of two equal values, 0 and -0, as the key), and subset against appending the chosen rows one
// at a time; the binary classes a linear run finds and the labels it refuses.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "engine/subsets.h"
#include "hogwild/dataset.h"
#include "hogwild/error.h"
#include "hogwild/trainer.h"

using namespace hogwild;

namespace {

// Rows of random length (0 to 30) over 1,000 features, with labels from `classes`.
Dataset random_rows(std::size_t rows, const std::vector<float>& classes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Dataset data;
  for (std::size_t i = 0; i < rows; ++i) {
    std::vector<std::uint32_t> indices;
    std::vector<float> values;
    const std::size_t length = rng() % 31;
    for (std::uint32_t j = rng() % 40; indices.size() < length; j += 1 + rng() % 40) {
      indices.push_back(j);
      values.push_back(static_cast<float>(rng() % 1000) / 100.0f);
    }
    data.append(indices, values, classes[rng() % classes.size()]);
  }
  data.num_features = 1000;
  return data;
}

std::map<float, std::size_t> counted_one_by_one(const std::vector<float>& labels) {
  std::map<float, std::size_t> counts;
  for (const float y : labels) ++counts[y];
  return counts;
}

}  // namespace

TEST_CASE("describe counts each label value as one map insertion per label would") {
  const std::vector<std::vector<float>> class_sets = {
      {-1, 1}, {0, 1}, {1, 2, 3}, {5, -2, 7, 0.5f, 9}, {4}};
  for (std::uint32_t seed = 1; seed <= 5; ++seed) {
    for (const auto& classes : class_sets) {
      const Dataset data = random_rows(3000, classes, seed);
      const auto counts = describe(data).label_counts;
      CHECK(counts == counted_one_by_one(data.labels));
    }
  }
  // Runs of one class, then another, then the first again: each flushed count adds up.
  Dataset runs;
  for (const float y : {1.0f, 1.0f, 2.0f, 3.0f, 3.0f, 1.0f, 2.0f, 2.0f, 4.0f, 1.0f}) {
    runs.append({}, {}, y);
  }
  CHECK(describe(runs).label_counts == counted_one_by_one(runs.labels));
  // 0 and -0 are one value; the key is the first met, as with insertions one by one.
  for (const auto& labels : std::vector<std::vector<float>>{
           {-0.0f, 1, 2, 0.0f, 1}, {0.0f, 3, -0.0f, 1, 2, -0.0f}, {1, 2, 3, -0.0f, 0.0f}}) {
    Dataset data;
    for (const float y : labels) data.append({}, {}, y);
    const auto counts = describe(data).label_counts;
    const auto expected = counted_one_by_one(labels);
    REQUIRE(counts == expected);
    CHECK(std::signbit(counts.begin()->first) == std::signbit(expected.begin()->first));
  }
}

TEST_CASE("subset holds the chosen rows in the order given, as appending them would") {
  const Dataset data = random_rows(5000, {-1, 1}, 7);
  std::mt19937 rng(3);
  for (const std::size_t count :
       {std::size_t{0}, std::size_t{1}, std::size_t{37}, std::size_t{4000}, std::size_t{20000}}) {
    std::vector<std::size_t> rows(count);
    for (auto& r : rows) r = rng() % data.rows();  // repeats allowed, any order
    Dataset expected;
    for (const auto r : rows)
      expected.append(data.row(r).indices, data.row(r).values, data.labels[r]);
    const Dataset got = detail::subset(data, rows);
    CHECK(got.row_offsets == expected.row_offsets);
    CHECK(got.indices == expected.indices);
    CHECK(got.values == expected.values);
    CHECK(got.labels == expected.labels);
    CHECK(got.num_features == data.num_features);
  }
}

TEST_CASE("a binary linear run takes two label values and refuses a third, or one of neither") {
  TrainConfig config;
  config.policy = Policy::kSerial;
  config.threads = 1;
  config.epochs = 1;
  for (const auto& classes : std::vector<std::vector<float>>{{0, 1}, {-1, 1}, {3, 7}}) {
    const Dataset data = random_rows(500, classes, 11);
    const Report report = train(config, data, nullptr);
    CHECK(report.labels == std::vector<double>{classes[0], classes[1]});
  }
  Dataset three = random_rows(500, {-1, 1}, 12);
  three.labels[321] = 5;
  CHECK_THROWS_WITH_AS(train(config, three, nullptr),
                       doctest::Contains("found a third, 5, in example 322"), InputError);
  const Dataset train_data = random_rows(500, {-1, 1}, 13);
  Dataset test = random_rows(50, {-1, 1}, 14);
  test.labels[40] = 0;
  CHECK_THROWS_WITH_AS(train(config, train_data, &test),
                       doctest::Contains("expected labels -1 or 1 (the training classes), found 0 "
                                         "in example 41"),
                       InputError);
}
