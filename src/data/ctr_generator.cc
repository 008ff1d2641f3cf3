#include "hogwild/ctr_generator.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "hogwild/detail/random.h"
#include "hogwild/error.h"

namespace hogwild {
namespace {

// Streams: a field's tag for its hashes and weights, and one stream per row (training rows
// first, test rows after them); small numbers are reserved for other draws.
constexpr std::uint64_t kFieldStream = 0xc7f1e1d0000ULL;
constexpr std::uint64_t kFirstRowStream = std::uint64_t{1} << 20;
// Rows whose margins set the bias: enough that the mean probability is within about 0.1% of
// the rate, few enough that the bisection's passes take milliseconds.
constexpr std::size_t kBiasRows = 100000;

// The rank (0 = most frequent) of a category among n: the floor of a bounded Pareto draw on
// [1, n + 1) with exponent s, by inversion, so no table of n weights is needed.
std::size_t power_law_rank(std::size_t n, double s, double u) {
  const double top = static_cast<double>(n) + 1.0;
  double x;
  if (s == 0) {
    x = 1.0 + u * static_cast<double>(n);
  } else if (std::abs(s - 1.0) < 1e-9) {
    x = std::exp(u * std::log(top));
  } else {
    const double a = 1.0 - s;
    x = std::pow(1.0 + u * (std::pow(top, a) - 1.0), 1.0 / a);
  }
  const auto rank = static_cast<std::size_t>(std::max(0.0, std::floor(x) - 1.0));
  return std::min(rank, n - 1);
}

struct Field {
  std::size_t categories;
  std::uint64_t seed;  // hashes and planted weights of its categories
};

// A (field, category) pair's hashed index and planted weight, both from the pair's own stream.
struct Category {
  std::uint32_t index;
  double weight;
};

Category category(const CtrGeneratorConfig& config, const Field& field, std::size_t rank,
                  double scale) {
  detail::Rng rng(detail::derive_seed(field.seed, rank));
  const auto index = static_cast<std::uint32_t>(rng.below(config.features));
  return {index, scale * rng.normal()};
}

// One row: its sorted distinct indices with their values (1 each, or the count of pairs that
// collided there) and the planted margin without the bias; `u` draws the labels afterwards.
struct Row {
  std::vector<std::pair<std::uint32_t, float>> entries;
  double margin = 0;
  double u = 0;
};

Row draw_row(const CtrGeneratorConfig& config, const std::vector<Field>& fields,
             std::uint64_t stream) {
  detail::Rng rng(detail::derive_seed(config.seed, stream));
  const double scale = config.signal / std::sqrt(static_cast<double>(fields.size()));
  Row row;
  row.entries.reserve(fields.size());
  for (const Field& field : fields) {
    const auto c = category(config, field,
                            power_law_rank(field.categories, config.zipf, rng.uniform()), scale);
    row.entries.emplace_back(c.index, 1.0f);
    row.margin += c.weight;
  }
  row.u = rng.uniform();
  std::sort(row.entries.begin(), row.entries.end());
  std::size_t kept = 0;
  for (std::size_t k = 0; k < row.entries.size(); ++k) {
    if (kept > 0 && row.entries[kept - 1].first == row.entries[k].first) {
      row.entries[kept - 1].second += 1.0f;
    } else {
      row.entries[kept++] = row.entries[k];
    }
  }
  row.entries.resize(kept);
  return row;
}

std::vector<Row> draw_rows(const CtrGeneratorConfig& config, const std::vector<Field>& fields,
                           std::uint64_t first_stream, std::size_t count) {
  std::vector<Row> rows(count);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 1024), [&](const auto& range) {
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      rows[i] = draw_row(config, fields, first_stream + i);
    }
  });
  return rows;
}

double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// The bias b with mean sigmoid(b + margin) = rate over the first kBiasRows training rows, by
// bisection (the mean rises monotonically in b); summed in row order, so it is the same for
// any thread count.
double solve_bias(const std::vector<Row>& rows, double rate) {
  const std::size_t n = std::min(rows.size(), kBiasRows);
  double low = -60, high = 60;
  for (int iteration = 0; iteration < 80; ++iteration) {
    const double mid = 0.5 * (low + high);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) sum += sigmoid(mid + rows[i].margin);
    (sum / static_cast<double>(n) < rate ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

Dataset to_dataset(const CtrGeneratorConfig& config, const std::vector<Row>& rows, double bias) {
  Dataset data;
  data.num_features = config.features;
  data.row_offsets.reserve(rows.size() + 1);  // holds the first row's 0 already
  data.labels.reserve(rows.size());
  for (const Row& row : rows) {
    for (const auto& [index, value] : row.entries) {
      data.indices.push_back(index);
      data.values.push_back(value);
    }
    data.row_offsets.push_back(data.indices.size());
    data.labels.push_back(row.u < sigmoid(bias + row.margin) ? 1.0f : -1.0f);
  }
  return data;
}

void check(const CtrGeneratorConfig& c) {
  auto fail = [](std::string_view option, std::string_view expected, auto found) {
    throw InputError(fmt::format("--{}: expected {}, found {}", option, expected, found));
  };
  if (c.rows < 1) fail("rows", "at least 1", c.rows);
  if (c.fields < 1 || c.fields > 1000) fail("fields", "between 1 and 1000", c.fields);
  if (c.max_categories < 2 || c.max_categories > (std::size_t{1} << 40)) {
    fail("categories", "between 2 and 2^40", c.max_categories);
  }
  if (c.features < 1 || c.features > (std::size_t{1} << 32) - 1) {
    fail("features", "between 1 and 4294967295", c.features);
  }
  if (!(c.zipf >= 0) || !std::isfinite(c.zipf)) fail("zipf", "a finite exponent >= 0", c.zipf);
  if (!(c.positive_rate > 0 && c.positive_rate < 1)) {
    fail("positive-rate", "a probability in (0, 1)", c.positive_rate);
  }
  if (!(c.signal >= 0 && c.signal <= 100)) fail("signal", "a value in [0, 100]", c.signal);
}

}  // namespace

std::size_t ctr_field_categories(const CtrGeneratorConfig& config, std::size_t field) {
  const double exponent =
      static_cast<double>(field + 1) / static_cast<double>(std::max<std::size_t>(1, config.fields));
  const double n = std::round(std::pow(static_cast<double>(config.max_categories), exponent));
  return std::max<std::size_t>(2, static_cast<std::size_t>(n));
}

CtrProblem generate_ctr(const CtrGeneratorConfig& config) {
  check(config);
  std::vector<Field> fields(config.fields);
  for (std::size_t f = 0; f < config.fields; ++f) {
    fields[f] = {ctr_field_categories(config, f),
                 detail::derive_seed(config.seed, kFieldStream + f)};
  }
  CtrProblem problem;
  const auto train = draw_rows(config, fields, kFirstRowStream, config.rows);
  problem.bias = solve_bias(train, config.positive_rate);
  problem.train = to_dataset(config, train, problem.bias);
  if (config.test_rows > 0) {
    const auto test = draw_rows(config, fields, kFirstRowStream + config.rows, config.test_rows);
    problem.test = to_dataset(config, test, problem.bias);
  }
  return problem;
}

}  // namespace hogwild
