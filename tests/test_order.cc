// --order: the block order visits every row once per epoch in runs of stored rows, the storage
// shuffle keeps every row with its label, and training in blocks reaches what training in a
// fresh permutation of rows reaches.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <vector>

#include "engine/rng.h"
#include "hogwild/dataset.h"
#include "hogwild/dense_dataset.h"
#include "hogwild/error.h"
#include "hogwild/generator.h"
#include "hogwild/ratings.h"
#include "hogwild/report.h"
#include "hogwild/trainer.h"

using namespace hogwild;

namespace {

// A row as comparable values: (label, indices, values).
using RowKey = std::tuple<float, std::vector<std::uint32_t>, std::vector<float>>;

std::vector<RowKey> sorted_rows(const Dataset& d) {
  std::vector<RowKey> rows;
  for (std::size_t r = 0; r < d.rows(); ++r) {
    const auto row = d.row(r);
    rows.emplace_back(d.labels[r],
                      std::vector<std::uint32_t>(row.indices.begin(), row.indices.end()),
                      std::vector<float>(row.values.begin(), row.values.end()));
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace

TEST_CASE("block order: a permutation made of runs of consecutive stored rows") {
  for (const std::size_t n : {1u, 5u, 127u, 128u, 129u, 1000u}) {
    for (const std::size_t block : {1u, 7u, 128u, 4096u}) {
      CAPTURE(n);
      CAPTURE(block);
      std::vector<std::uint32_t> order(n);
      detail::block_order(order, block, 9, 3);
      std::vector<std::uint32_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::uint32_t> identity(n);
      std::iota(identity.begin(), identity.end(), 0u);
      CHECK(sorted == identity);
      // Each row whose index is not a multiple of the block follows its predecessor.
      std::size_t run_starts = 0;
      for (std::size_t p = 0; p < n; ++p) {
        if (order[p] % block == 0) {
          ++run_starts;
        } else {
          REQUIRE(p > 0);
          CHECK(order[p] == order[p - 1] + 1);
        }
      }
      CHECK(run_starts == (n + block - 1) / block);
      // Same (seed, epoch), same order, whatever the vector held before.
      std::vector<std::uint32_t> again(n, 77);
      detail::block_order(again, block, 9, 3);
      CHECK(again == order);
    }
  }
  // Epochs and seeds draw different run orders (1000 runs: equal by chance with odds 1/1000!).
  std::vector<std::uint32_t> a(1000), b(1000), c(1000);
  detail::block_order(a, 1, 9, 1);
  detail::block_order(b, 1, 9, 2);
  detail::block_order(c, 1, 10, 1);
  CHECK(a != b);
  CHECK(a != c);
  // With blocks of 1 the first row is uniform over the rows: over 4000 epochs each of 10 rows
  // comes first 400 times on average; a chi-square with 9 degrees of freedom stays below 27.9
  // (p = 0.001) for a fixed seed.
  std::vector<int> first(10, 0);
  std::vector<std::uint32_t> small(10);
  for (int epoch = 1; epoch <= 4000; ++epoch) {
    detail::block_order(small, 1, 5, epoch);
    ++first[small[0]];
  }
  double chi2 = 0;
  for (const int count : first) chi2 += (count - 400.0) * (count - 400.0) / 400.0;
  CHECK(chi2 < 27.9);
}

TEST_CASE("shuffle_rows keeps every row with its label and moves them") {
  SparseGeneratorConfig g;
  g.rows = 2000;
  g.test_rows = 10;
  g.features = 300;
  g.nnz_per_row = 12;
  g.seed = 4;
  const auto p = generate_sparse(g);
  Dataset shuffled = p.train;
  shuffle_rows(shuffled, 21);
  CHECK(shuffled.rows() == p.train.rows());
  CHECK(shuffled.nnz() == p.train.nnz());
  CHECK(shuffled.num_features == p.train.num_features);
  CHECK(shuffled.source == p.train.source);
  CHECK(sorted_rows(shuffled) == sorted_rows(p.train));
  // Moved: a fixed point count near the expected 1 of a random permutation, far from 2000.
  std::map<RowKey, std::size_t> position;
  for (std::size_t r = 0; r < p.train.rows(); ++r) {
    const auto row = p.train.row(r);
    position[{p.train.labels[r],
              {row.indices.begin(), row.indices.end()},
              {row.values.begin(), row.values.end()}}] = r;
  }
  std::size_t fixed = 0;
  for (std::size_t r = 0; r < shuffled.rows(); ++r) {
    const auto row = shuffled.row(r);
    fixed += position[{shuffled.labels[r],
                       {row.indices.begin(), row.indices.end()},
                       {row.values.begin(), row.values.end()}}] == r;
  }
  CHECK(fixed < 10);
  // Row i is the row storage_order puts there, whole (the rows are copied in parallel).
  const std::vector<std::size_t> order = storage_order(p.train.rows(), 21);
  for (std::size_t i = 0; i < shuffled.rows(); ++i) {
    const auto got = shuffled.row(i);
    const auto want = p.train.row(order[i]);
    REQUIRE(std::ranges::equal(got.indices, want.indices));
    REQUIRE(std::ranges::equal(got.values, want.values));
    REQUIRE(shuffled.labels[i] == p.train.labels[order[i]]);
  }
  // Deterministic for a seed; another seed, another order.
  Dataset again = p.train;
  shuffle_rows(again, 21);
  CHECK(again.indices == shuffled.indices);
  CHECK(again.labels == shuffled.labels);
  Dataset other = p.train;
  shuffle_rows(other, 22);
  CHECK(other.labels != shuffled.labels);
  // A width wider than the largest index survives (a test set's width, say).
  Dataset wide = p.train;
  wide.num_features += 50;
  shuffle_rows(wide, 1);
  CHECK(wide.num_features == p.train.num_features + 50);
}

TEST_CASE("blocks of shuffled storage reach the accuracy of a permutation of rows") {
  // The training rows sorted by label (as some published files are): the case the storage
  // shuffle is for.
  SparseGeneratorConfig g;
  g.rows = 20000;
  g.test_rows = 5000;
  g.features = 5000;
  g.nnz_per_row = 40;
  g.zipf = 1.0;
  g.seed = 8;
  auto p = generate_sparse(g);
  Dataset sorted;
  for (const float label : {-1.0f, 1.0f}) {
    for (std::size_t r = 0; r < p.train.rows(); ++r) {
      if (p.train.labels[r] == label)
        sorted.append(p.train.row(r).indices, p.train.row(r).values, label);
    }
  }
  sorted.num_features = p.train.num_features;
  TrainConfig c;
  c.epochs = 5;
  c.policy = Policy::kSerial;
  const auto rows = hogwild::train(c, sorted, &p.test);
  Dataset stored = sorted;
  shuffle_rows(stored, c.seed);
  c.block_rows = TrainConfig::kDefaultBlockRows;
  // One worker, then 2 and 4 virtual workers in lockstep: deterministic, where real threads'
  // interleavings moved the accuracy by a point under a loaded ThreadSanitizer run.
  for (const int workers : {1, 2, 4}) {
    CAPTURE(workers);
    c.simulate = workers == 1 ? 0 : workers;
    const auto blocks = hogwild::train(c, stored, &p.test);
    CHECK(blocks.epochs.back().test->accuracy.value() ==
          doctest::Approx(rows.epochs.back().test->accuracy.value()).epsilon(0.005));
    CHECK(blocks.epochs.back().train.objective.value() ==
          doctest::Approx(rows.epochs.back().train.objective.value()).epsilon(0.02));
  }
  // Blocks over the sorted storage itself (no shuffle): runs of one label, and a visibly worse
  // model: the reason the CLI shuffles the storage first.
  c.simulate = 0;
  c.block_rows = 1000;
  const auto unshuffled = hogwild::train(c, sorted, &p.test);
  CHECK(unshuffled.epochs.back().train.objective.value() >
        rows.epochs.back().train.objective.value() * 2);
}

TEST_CASE("racy at one thread matches serial bit for bit in block order") {
  SparseGeneratorConfig g;
  g.rows = 3000;
  g.test_rows = 10;
  g.features = 800;
  g.nnz_per_row = 20;
  g.seed = 6;
  const auto p = generate_sparse(g);
  TrainConfig c;
  c.epochs = 3;
  c.block_rows = 64;
  c.replicate = 0;
  c.policy = Policy::kSerial;
  const auto serial = hogwild::train(c, p.train, nullptr);
  c.policy = Policy::kRacy;
  c.threads = 1;
  const auto racy = hogwild::train(c, p.train, nullptr);
  CHECK(racy.weights == serial.weights);
  c.block_rows = 0;
  const auto permuted = hogwild::train(c, p.train, nullptr);
  CHECK(permuted.weights != serial.weights);
}

TEST_CASE("--order out of range is refused with the option's name") {
  TrainConfig c;
  c.block_rows = (std::size_t{1} << 24) + 1;
  CHECK_THROWS_WITH_AS(c.validate(), doctest::Contains("--order: expected rows or blocks:B"),
                       InputError);
}

namespace {

// `rows` examples of `classes` Gaussian classes in `cols` dimensions, stored sorted by class
// (class c centred at 2 e_c): the case the storage shuffle is for.
DenseDataset sorted_blobs(std::size_t rows, std::size_t cols, std::size_t classes) {
  DenseDataset d;
  d.cols = cols;
  detail::Rng rng(11);
  for (std::size_t c = 0; c < classes; ++c) {
    for (std::size_t i = 0; i < rows / classes; ++i) {
      for (std::size_t j = 0; j < cols; ++j) {
        d.features.push_back(static_cast<float>((j == c ? 2.0 : 0.0) + 0.8 * rng.normal()));
      }
      d.labels.push_back(static_cast<std::int32_t>(c));
    }
  }
  return d;
}

// Examples as sorted (label, features) pairs, to compare storage orders.
std::vector<std::pair<std::int32_t, std::vector<float>>> examples(const DenseDataset& d) {
  std::vector<std::pair<std::int32_t, std::vector<float>>> all;
  for (std::size_t i = 0; i < d.rows(); ++i) {
    std::vector<float> row(d.cols);
    d.copy_row(i, row.data());
    all.emplace_back(d.labels[i], std::move(row));
  }
  std::sort(all.begin(), all.end());
  return all;
}

}  // namespace

TEST_CASE("model trainer: blocks of shuffled storage reach the accuracy and rmse of rows") {
  const DenseDataset sorted = sorted_blobs(6000, 12, 4);
  DenseDataset stored = sorted;
  shuffle_rows(stored, 1);
  CHECK(examples(stored) == examples(sorted));  // every example kept with its label
  CHECK(stored.labels != sorted.labels);        // and moved
  TrainConfig c;
  c.model = hogwild::SoftmaxModel{};
  c.epochs = 4;
  c.policy = Policy::kSerial;
  const auto rows = hogwild::train(c, sorted, nullptr);
  c.block_rows = 64;
  // One worker, then 3 virtual workers in lockstep: deterministic.
  for (const int workers : {1, 3}) {
    CAPTURE(workers);
    c.simulate = workers == 1 ? 0 : workers;
    const auto blocks = hogwild::train(c, stored, nullptr);
    CHECK(blocks.config.block_rows == 64);
    CHECK(blocks.samples == 4 * sorted.rows());  // every example once per epoch
    CHECK(blocks.epochs.back().train.accuracy.value() ==
          doctest::Approx(rows.epochs.back().train.accuracy.value()).epsilon(0.01));
  }
  // Blocks over the sorted storage: runs of one class, and a visibly worse model.
  c.simulate = 0;
  c.block_rows = 1500;
  const auto unshuffled = hogwild::train(c, sorted, nullptr);
  CHECK(unshuffled.epochs.back().train.loss > rows.epochs.back().train.loss * 1.3);

  // Factorisation over ratings sorted by user.
  RatingsGeneratorConfig g;
  g.users = 300;
  g.items = 200;
  g.seed = 4;
  Ratings ratings = generate_ratings(g).train;
  TrainConfig mf;
  mf.model = hogwild::FactorisationModel{};
  mf.policy = Policy::kSerial;
  mf.epochs = 5;
  const auto mf_rows = hogwild::train(mf, ratings, nullptr);
  shuffle_rows(ratings, 2);
  mf.block_rows = 128;
  const auto mf_blocks = hogwild::train(mf, ratings, nullptr);
  CHECK(*mf_blocks.epochs.back().train.rmse ==
        doctest::Approx(*mf_rows.epochs.back().train.rmse).epsilon(0.05));
}
