// Ratings triplets: parsing with path:line errors, writing, and the planted low-rank generator.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

#include "hogwild/error.h"
#include "hogwild/ratings.h"

using namespace hogwild;

TEST_CASE("ratings parse with separators, comments, timestamps, and round-trip") {
  const Ratings r =
      parse_ratings("# user item rating\n1 2 3.5\n0\t7\t-1\n\n3,0,2 881250949\n", "r.txt");
  REQUIRE(r.size() == 3);
  CHECK(r.users == std::vector<std::uint32_t>{1, 0, 3});
  CHECK(r.items == std::vector<std::uint32_t>{2, 7, 0});
  CHECK(r.values == std::vector<float>{3.5f, -1.0f, 2.0f});
  CHECK(r.num_users == 4);
  CHECK(r.num_items == 8);
  std::ostringstream out;
  write_ratings(r, out);
  const Ratings back = parse_ratings(out.str(), "back");
  CHECK(back.users == r.users);
  CHECK(back.items == r.items);
  CHECK(back.values == r.values);
}

TEST_CASE("malformed ratings name the file and line") {
  auto expect = [](const char* text, const char* message) {
    CHECK_THROWS_WITH_AS(parse_ratings(text, "r.txt"), doctest::Contains(message), InputError);
  };
  expect("1 2 3\n1 2\n", "r.txt:2: expected 'user item rating', found 2 fields");
  expect("x 2 3\n", "r.txt:1: expected a non-negative integer user id, found 'x'");
  expect("1 -2 3\n", "r.txt:1: expected a non-negative integer item id, found '-2'");
  expect("1 2 good\n", "r.txt:1: expected a numeric rating, found 'good'");
  expect("1 2 nan\n", "r.txt:1: expected a finite rating");
  expect("1 2 3 4 5\n", "r.txt:1: expected 'user item rating [timestamp]'");
  expect("1 2 3 t\n", "expected a numeric fourth column");
  expect("", "r.txt:1: expected at least one 'user item rating' line, found an empty file");
  expect("# only\n\n", "r.txt:3: expected at least one");
}

TEST_CASE("the ratings generator is deterministic, distinct per user, and planted") {
  RatingsGeneratorConfig c;
  c.users = 300;
  c.items = 200;
  c.rank = 4;
  c.density = 0.1;
  c.noise = 0.0;
  c.test_fraction = 0.2;
  c.seed = 9;
  const auto a = generate_ratings(c);
  const auto b = generate_ratings(c);
  CHECK(a.train.values == b.train.values);
  CHECK(a.test.items == b.test.items);
  const std::size_t total = a.train.size() + a.test.size();
  CHECK(total == 300 * 20);
  CHECK(std::abs(static_cast<double>(a.test.size()) / total - 0.2) < 0.03);
  std::set<std::pair<std::uint32_t, std::uint32_t>> seen;
  std::vector<std::size_t> per_item(c.items, 0);
  double var = 0;
  for (const auto* set : {&a.train, &a.test}) {
    for (std::size_t i = 0; i < set->size(); ++i) {
      CHECK(seen.insert({set->users[i], set->items[i]}).second);
      ++per_item[set->items[i]];
      // Without noise each rating is exactly the planted u . v.
      double dot = 0;
      for (std::size_t f = 0; f < c.rank; ++f) {
        dot += double{a.user_factors[set->users[i] * c.rank + f]} *
               a.item_factors[set->items[i] * c.rank + f];
      }
      CHECK(set->values[i] == doctest::Approx(dot).epsilon(1e-5));
      var += dot * dot;
    }
  }
  CHECK(std::abs(var / total - 1.0) < 0.25);  // unit-variance planted entries
  std::sort(per_item.rbegin(), per_item.rend());
  CHECK(per_item.front() > 3 * per_item[per_item.size() / 2]);  // power-law popularity
  c.seed = 10;
  CHECK(generate_ratings(c).train.values != a.train.values);
  c.density = 0.7;
  CHECK_THROWS_WITH_AS(generate_ratings(c), doctest::Contains("--density"), InputError);
}
