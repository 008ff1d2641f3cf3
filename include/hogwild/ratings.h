#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace hogwild {

/// Ratings triplets (user, item, rating) for matrix factorisation. User and item ids are the
/// integers found in the file (0-based or not); the factor matrices have max id + 1 rows.
struct Ratings {
  std::vector<std::uint32_t> users;  ///< user id of each rating
  std::vector<std::uint32_t> items;  ///< item id of each rating
  std::vector<float> values;         ///< the ratings, finite
  std::size_t num_users = 0;         ///< 1 + the largest user id (or more)
  std::size_t num_items = 0;         ///< 1 + the largest item id (or more)
  std::string source;                ///< where it came from (a path), for messages

  /// Number of ratings.
  std::size_t size() const { return values.size(); }
  /// Appends one rating, growing num_users/num_items as needed.
  void append(std::uint32_t user, std::uint32_t item, float value);
  /// Keeps the first `n` ratings (a subset for quick runs); num_users and num_items stay.
  void truncate(std::size_t n) {
    if (n >= size()) return;
    users.resize(n);
    items.resize(n);
    values.resize(n);
  }
};

/// Rewrites the ratings' storage in a random order drawn from `seed`, as shuffle_rows does for
/// examples: what TrainConfig::block_rows assumes (files are often sorted by user).
void shuffle_rows(Ratings& data, std::uint64_t seed);

/// Reads `user item rating` text, one triplet per line separated by spaces, tabs or commas
/// (a fourth numeric column, such as a timestamp, is ignored; blank lines and `#` comments are
/// skipped); `-` reads standard input, and gzip, bzip2 or xz files are decompressed as they are
/// read. Throws InputError("path:line: expected ..., found ...") on malformed input and
/// SystemError when the file cannot be read.
Ratings read_ratings(const std::filesystem::path& path);

/// Parses ratings text already in memory, plain or compressed; `name` is used in error messages.
Ratings parse_ratings(std::string_view text, std::string_view name);

/// Writes `user item rating` lines (values round-trip exactly).
void write_ratings(const Ratings& ratings, std::ostream& out);
/// Writes ratings to `path` (replacing it); throws SystemError on failure.
void write_ratings(const Ratings& ratings, const std::filesystem::path& path);

/// Parameters of the planted low-rank ratings generator.
struct RatingsGeneratorConfig {
  std::size_t users = 1000;    ///< rows of the planted matrix
  std::size_t items = 1000;    ///< columns of the planted matrix
  std::size_t rank = 10;       ///< rank of the planted matrix
  double density = 0.1;        ///< fraction of the users x items entries observed, (0, 0.5]
  double noise = 0.1;          ///< standard deviation of the Gaussian noise on each rating
  double zipf = 0.5;           ///< item popularity ~ 1/(rank+1)^zipf; 0 is uniform
  double test_fraction = 0.0;  ///< fraction of the observed entries held out, [0, 1)
  std::uint64_t seed = 1;      ///< same seed, same data
};

/// Generated ratings plus the planted factors.
struct RatingsProblem {
  Ratings train;                    ///< observed entries not held out
  Ratings test;                     ///< held-out entries (test_fraction of them)
  std::vector<float> user_factors;  ///< users x rank, row-major
  std::vector<float> item_factors;  ///< items x rank, row-major
};

/// Generates ratings r = u . v + noise from planted factors with i.i.d. N(0, rank^-1/2)
/// entries (so u . v has unit variance). Each user rates round(density * items) distinct items
/// drawn by a power law over item ranks (popular items are rated far more often); each rating
/// is held out for the test set with probability test_fraction. Deterministic for a seed.
/// Throws InputError when the configuration is out of range.
RatingsProblem generate_ratings(const RatingsGeneratorConfig& config);

}  // namespace hogwild
