#include "hogwild/ratings.h"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>

#include "data/input.h"
#include "data/text.h"
#include "data/write_file.h"
#include "engine/rng.h"
#include "hogwild/error.h"

namespace hogwild {

void Ratings::append(std::uint32_t user, std::uint32_t item, float value) {
  users.push_back(user);
  items.push_back(item);
  values.push_back(value);
  num_users = std::max<std::size_t>(num_users, std::size_t{user} + 1);
  num_items = std::max<std::size_t>(num_items, std::size_t{item} + 1);
}

namespace {

bool is_separator(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == ',' || c == '\v' || c == '\f';
}

std::optional<std::uint32_t> parse_id(std::string_view token) {
  std::uint64_t value = 0;
  const auto* end = token.data() + token.size();
  const auto [p, ec] = std::from_chars(token.data(), end, value);
  if (ec != std::errc() || p != end || value >= std::numeric_limits<std::uint32_t>::max()) {
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(value);
}

std::optional<double> parse_number(std::string_view token) {
  if (token.size() > 1 && token.front() == '+') token.remove_prefix(1);
  double value = 0;
  const auto* end = token.data() + token.size();
  const auto [p, ec] = std::from_chars(token.data(), end, value);
  if (ec != std::errc() || p != end) return std::nullopt;
  return value;
}

}  // namespace

Ratings parse_ratings(std::string_view bytes, std::string_view name) {
  const bool compressed = detail::compression_of(bytes) != detail::Compression::kNone;
  const std::string decompressed = compressed ? detail::decompress(bytes, name) : std::string();
  std::string_view text = compressed ? std::string_view(decompressed) : bytes;
  Ratings ratings;
  ratings.source = std::string(name);
  std::size_t line_number = 0;
  while (!text.empty()) {
    std::string_view line = detail::next_line(text);
    ++line_number;
    std::string_view fields[5];
    std::size_t count = 0;
    std::size_t pos = 0;
    while (count < 5) {
      while (pos < line.size() && is_separator(line[pos])) ++pos;
      if (pos == line.size()) break;
      const std::size_t begin = pos;
      while (pos < line.size() && !is_separator(line[pos])) ++pos;
      fields[count++] = line.substr(begin, pos - begin);
    }
    if (count == 0) continue;
    auto fail = [&](const std::string& what) {
      throw InputError(fmt::format("{}:{}: {}", name, line_number, what));
    };
    if (count < 3) {
      fail(fmt::format("expected 'user item rating', found {} field{}", count,
                       count == 1 ? "" : "s"));
    }
    if (count > 4) fail("expected 'user item rating [timestamp]', found more than 4 fields");
    const auto user = parse_id(fields[0]);
    if (!user)
      fail(fmt::format("expected a non-negative integer user id, found {}",
                       detail::quote(fields[0])));
    const auto item = parse_id(fields[1]);
    if (!item)
      fail(fmt::format("expected a non-negative integer item id, found {}",
                       detail::quote(fields[1])));
    const auto value = parse_number(fields[2]);
    if (!value) fail(fmt::format("expected a numeric rating, found {}", detail::quote(fields[2])));
    if (!std::isfinite(*value) || std::abs(*value) > std::numeric_limits<float>::max()) {
      fail(fmt::format("expected a finite rating, found {}", detail::quote(fields[2])));
    }
    if (count == 4 && !parse_number(fields[3])) {
      fail(fmt::format("expected a numeric fourth column (timestamp), found {}",
                       detail::quote(fields[3])));
    }
    ratings.append(*user, *item, static_cast<float>(*value));
  }
  if (ratings.size() == 0) {
    throw InputError(fmt::format(
        "{}:{}: expected at least one 'user item rating' line, found {}", name, line_number + 1,
        line_number == 0 ? "an empty file" : "only blank or comment lines"));
  }
  return ratings;
}

Ratings read_ratings(const std::filesystem::path& path) {
  return detail::parse_whole_file(path, parse_ratings);
}

void write_ratings(const Ratings& ratings, std::ostream& out) {
  fmt::memory_buffer buffer;
  for (std::size_t i = 0; i < ratings.size(); ++i) {
    fmt::format_to(std::back_inserter(buffer), "{} {} {}\n", ratings.users[i], ratings.items[i],
                   ratings.values[i]);
    if (buffer.size() > (1 << 20)) {
      out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      buffer.clear();
    }
  }
  out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
}

void write_ratings(const Ratings& ratings, const std::filesystem::path& path) {
  detail::write_file(path, [&](std::ostream& out) { write_ratings(ratings, out); });
}

RatingsProblem generate_ratings(const RatingsGeneratorConfig& c) {
  auto fail = [](std::string_view option, std::string_view expected, auto found) {
    throw InputError(fmt::format("--{}: expected {}, found {}", option, expected, found));
  };
  constexpr std::size_t kMaxIds = std::numeric_limits<std::uint32_t>::max() - 1;
  if (c.users < 1 || c.users > kMaxIds) fail("users", "a count >= 1", c.users);
  if (c.items < 1 || c.items > kMaxIds) fail("items", "a count >= 1", c.items);
  if (c.rank < 1 || c.rank > 4096) fail("rank", "a rank in [1, 4096]", c.rank);
  if (!(c.density > 0 && c.density <= 0.5)) fail("density", "a fraction in (0, 0.5]", c.density);
  if (!(c.noise >= 0) || !std::isfinite(c.noise)) fail("noise", "a finite deviation >= 0", c.noise);
  if (!(c.zipf >= 0 && c.zipf <= 4)) fail("zipf", "an exponent in [0, 4]", c.zipf);
  if (!(c.test_fraction >= 0 && c.test_fraction < 1)) {
    fail("test-fraction", "a fraction in [0, 1)", c.test_fraction);
  }
  const std::size_t per_user = std::max<std::size_t>(
      1, static_cast<std::size_t>(std::llround(c.density * static_cast<double>(c.items))));
  if (static_cast<double>(per_user) * static_cast<double>(c.users) > 2e9) {
    fail("density", "at most 2e9 ratings in all (users x items x density)",
         static_cast<double>(per_user) * static_cast<double>(c.users));
  }

  RatingsProblem problem;
  const std::size_t r = c.rank;
  const double scale = std::pow(static_cast<double>(r), -0.25);
  problem.user_factors.resize(c.users * r);
  problem.item_factors.resize(c.items * r);
  {
    detail::Rng rng(detail::derive_seed(c.seed, 0));
    for (auto& x : problem.user_factors) x = static_cast<float>(scale * rng.normal());
    for (auto& x : problem.item_factors) x = static_cast<float>(scale * rng.normal());
  }
  // Items by popularity rank: a random permutation, so popular items are not just low ids.
  std::vector<std::uint32_t> item_of_rank(c.items);
  for (std::size_t i = 0; i < c.items; ++i) item_of_rank[i] = static_cast<std::uint32_t>(i);
  {
    detail::Rng rng(detail::derive_seed(c.seed, 1));
    for (std::size_t i = c.items; i > 1; --i)
      std::swap(item_of_rank[i - 1], item_of_rank[rng.below(i)]);
  }
  std::vector<double> cumulative(c.items);
  double total = 0;
  for (std::size_t k = 0; k < c.items; ++k) {
    total += std::pow(static_cast<double>(k + 1), -c.zipf);
    cumulative[k] = total;
  }

  struct UserRatings {
    std::vector<std::uint32_t> items;
    std::vector<float> values;
    std::vector<bool> test;
  };
  std::vector<UserRatings> per(c.users);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, c.users, 64), [&](const auto& range) {
    std::vector<char> taken(c.items, 0);
    for (std::size_t u = range.begin(); u != range.end(); ++u) {
      detail::Rng rng(detail::derive_seed(c.seed, 2 + u));
      auto& out = per[u];
      std::size_t attempts = 0;
      while (out.items.size() < per_user) {
        std::size_t k;
        if (++attempts < 20 * per_user) {
          k = static_cast<std::size_t>(
              std::lower_bound(cumulative.begin(), cumulative.end(), rng.uniform() * total) -
              cumulative.begin());
          k = std::min(k, c.items - 1);
        } else {
          k = rng.below(c.items);  // the popular head is exhausted: fill uniformly
        }
        const std::uint32_t item = item_of_rank[k];
        if (taken[item]) continue;
        taken[item] = 1;
        double dot = 0;
        for (std::size_t f = 0; f < r; ++f) {
          dot += double{problem.user_factors[u * r + f]} * problem.item_factors[item * r + f];
        }
        out.items.push_back(item);
        out.values.push_back(static_cast<float>(dot + c.noise * rng.normal()));
        out.test.push_back(rng.uniform() < c.test_fraction);
      }
      for (const auto item : out.items) taken[item] = 0;
    }
  });
  for (std::size_t u = 0; u < c.users; ++u) {
    for (std::size_t k = 0; k < per[u].items.size(); ++k) {
      auto& target = per[u].test[k] ? problem.test : problem.train;
      target.append(static_cast<std::uint32_t>(u), per[u].items[k], per[u].values[k]);
    }
  }
  // A split that leaves either side empty would write a file that training refuses.
  if (problem.train.size() == 0 || (c.test_fraction > 0 && problem.test.size() == 0)) {
    fail("test-fraction",
         fmt::format("a fraction that leaves ratings in both the training and the test set "
                     "({} generated)",
                     problem.train.size() + problem.test.size()),
         fmt::format("{} ({} training, {} test)", c.test_fraction, problem.train.size(),
                     problem.test.size()));
  }
  // Both sets describe the same matrix, whatever ids happen to occur in each.
  for (auto* set : {&problem.train, &problem.test}) {
    set->num_users = c.users;
    set->num_items = c.items;
  }
  problem.train.source = "generated ratings";
  problem.test.source = "generated test ratings";
  return problem;
}

}  // namespace hogwild
