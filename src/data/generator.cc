#include "hogwild/generator.h"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/rng.h"
#include "hogwild/error.h"

namespace hogwild {
namespace {

// Glossary: D = features, K = nonzeros per row, s = Zipf exponent, rank = position of a
// feature in frequency order (0 is the most frequent), perm[rank] = its feature index.

struct FeatureSampler {
  std::vector<double> cdf;          // cumulative weights over ranks; empty when uniform
  std::vector<std::uint32_t> perm;  // rank -> feature index
  std::vector<float> idf;           // per rank: rarer features weigh more, as in tf-idf

  std::uint32_t draw_rank(detail::Rng& rng) const {
    if (cdf.empty()) return static_cast<std::uint32_t>(rng.below(perm.size()));
    const double u = rng.uniform() * cdf.back();
    return static_cast<std::uint32_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  }
};

FeatureSampler make_sampler(const SparseGeneratorConfig& config) {
  FeatureSampler sampler;
  const std::size_t d = config.features;
  if (config.zipf > 0) {
    sampler.cdf.resize(d);
    double total = 0;
    for (std::size_t r = 0; r < d; ++r) {
      total += std::pow(static_cast<double>(r + 1), -config.zipf);
      sampler.cdf[r] = total;
    }
  }
  sampler.perm.resize(d);
  std::iota(sampler.perm.begin(), sampler.perm.end(), 0u);
  detail::Rng rng(detail::derive_seed(config.seed, 0x9e37));
  for (std::size_t i = d; i > 1; --i) std::swap(sampler.perm[i - 1], sampler.perm[rng.below(i)]);
  sampler.idf.resize(d);
  for (std::size_t r = 0; r < d; ++r) {
    sampler.idf[r] = static_cast<float>(1.0 + std::log1p(static_cast<double>(r)) *
                                                  std::min(1.0, config.zipf + 0.1));
  }
  return sampler;
}

// A row's label: the sign of the hidden hyperplane's margin (2 classes) or the class of the
// largest margin, replaced with probability label_noise by the other sign or another class.
float label_of(const SparseGeneratorConfig& config, const std::vector<float>& hidden,
               const SparseRow& row, detail::Rng& rng) {
  const std::size_t classes = config.classes;
  std::size_t best = 0;
  double best_margin = 0;
  for (std::size_t c = 0; c < (classes == 2 ? 1 : classes); ++c) {
    double margin = 0;
    for (std::size_t k = 0; k < row.indices.size(); ++k) {
      margin += double{hidden[c * config.features + row.indices[k]]} * row.values[k];
    }
    if (c == 0 || margin > best_margin) {
      best = c;
      best_margin = margin;
    }
  }
  if (config.regression) return static_cast<float>(best_margin);  // noise added once scaled
  if (classes == 2) {
    const float label = best_margin >= 0 ? 1.0f : -1.0f;
    return rng.uniform() < config.label_noise ? -label : label;
  }
  if (rng.uniform() < config.label_noise) best = (best + 1 + rng.below(classes - 1)) % classes;
  return static_cast<float>(best);
}

// Fills rows [first, first + count) of `out`, each from its own seeded stream.
void generate_rows(const SparseGeneratorConfig& config, const FeatureSampler& sampler,
                   const std::vector<float>& hidden, std::uint64_t stream_base, std::size_t count,
                   Dataset& out) {
  const std::size_t k_nnz = config.nnz_per_row;
  out.num_features = config.features;
  out.row_offsets.resize(count + 1);
  out.indices.resize(count * k_nnz);
  out.values.resize(count * k_nnz);
  out.labels.resize(count);
  for (std::size_t i = 0; i <= count; ++i) out.row_offsets[i] = i * k_nnz;

  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, count, 256), [&](const auto& range) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> picked;  // (feature, rank)
    for (std::size_t i = range.begin(); i != range.end(); ++i) {
      detail::Rng rng(detail::derive_seed(config.seed, stream_base + i));
      picked.clear();
      auto has = [&](std::uint32_t feature) {
        return std::any_of(picked.begin(), picked.end(),
                           [&](const auto& p) { return p.first == feature; });
      };
      // Power-law draws with rejection of repeats; if the head is so heavy that distinct
      // features become rare, finish with uniform draws so every row has exactly K.
      std::size_t attempts = 0;
      while (picked.size() < k_nnz && attempts < 64 * k_nnz) {
        ++attempts;
        const auto rank = sampler.draw_rank(rng);
        if (!has(sampler.perm[rank])) picked.emplace_back(sampler.perm[rank], rank);
      }
      while (picked.size() < k_nnz) {
        const auto rank = static_cast<std::uint32_t>(rng.below(config.features));
        if (!has(sampler.perm[rank])) picked.emplace_back(sampler.perm[rank], rank);
      }
      std::sort(picked.begin(), picked.end());
      const std::size_t base = i * k_nnz;
      double norm2 = 0;
      for (std::size_t k = 0; k < k_nnz; ++k) {
        const double draw = rng.exponential();
        const auto v =
            config.counts
                ? static_cast<float>(1.0 + std::floor(draw))
                : static_cast<float>((1.0 + std::log1p(draw)) * sampler.idf[picked[k].second]);
        out.indices[base + k] = picked[k].first;
        out.values[base + k] = v;
        norm2 += double{v} * v;
      }
      if (config.normalize) {
        const double inv_norm = 1.0 / std::sqrt(norm2);
        for (std::size_t k = 0; k < k_nnz; ++k) {
          out.values[base + k] = static_cast<float>(out.values[base + k] * inv_norm);
        }
      }
      out.labels[i] = label_of(config, hidden, out.row(i), rng);
    }
  });
}

// Regression targets: the margins scaled to unit variance over the training rows (the scale
// applies to the test rows too), plus seeded Gaussian noise of standard deviation label_noise.
void add_target_noise(const SparseGeneratorConfig& config, std::uint64_t stream_base,
                      SparseProblem& problem) {
  double sum = 0;
  double sum2 = 0;
  for (const float m : problem.train.labels) {
    sum += m;
    sum2 += double{m} * m;
  }
  const double n = static_cast<double>(problem.train.labels.size());
  const double variance = sum2 / n - (sum / n) * (sum / n);
  const double scale = variance > 0 ? 1.0 / std::sqrt(variance) : 1.0;
  auto noisy = [&](std::vector<float>& labels, std::uint64_t first_stream) {
    for (std::size_t i = 0; i < labels.size(); ++i) {
      detail::Rng rng(detail::derive_seed(config.seed, first_stream + i) ^ 0x7a26e7u);
      labels[i] = static_cast<float>(labels[i] * scale + config.label_noise * rng.normal());
    }
  };
  noisy(problem.train.labels, stream_base);
  noisy(problem.test.labels, stream_base + config.rows);
}

void check(const SparseGeneratorConfig& c) {
  auto fail = [](std::string_view option, std::string_view expected, auto found) {
    throw InputError(fmt::format("--{}: expected {}, found {}", option, expected, found));
  };
  if (c.rows < 1) fail("rows", "at least 1", c.rows);
  if (c.features < 1 || c.features > (std::size_t{1} << 32) - 1) {
    fail("features", "between 1 and 4294967295", c.features);
  }
  if (c.nnz_per_row < 1 || c.nnz_per_row > c.features) {
    fail("nnz-per-row", fmt::format("between 1 and --features ({})", c.features), c.nnz_per_row);
  }
  if (!(c.zipf >= 0) || !std::isfinite(c.zipf)) fail("zipf", "a finite exponent >= 0", c.zipf);
  if (c.regression) {
    if (!(c.label_noise >= 0 && c.label_noise <= 100)) {
      fail("noise", "a noise standard deviation in [0, 100] with --regression", c.label_noise);
    }
    if (c.classes != 2) fail("classes", "2 (the default) with --regression", c.classes);
  } else if (!(c.label_noise >= 0 && c.label_noise <= 0.5)) {
    fail("noise", "a flip probability in [0, 0.5]", c.label_noise);
  }
  if (!(c.hyperplane_density > 0 && c.hyperplane_density <= 1)) {
    fail("density", "a fraction in (0, 1]", c.hyperplane_density);
  }
  if (c.classes < 2 || c.classes > 100000) fail("classes", "between 2 and 100000", c.classes);
  if (c.classes > 2 && c.features > (std::size_t{1} << 31) / c.classes) {
    fail("classes", "a number of hyperplanes of at most 2^31 weights with --features", c.classes);
  }
}

}  // namespace

SparseProblem generate_sparse(const SparseGeneratorConfig& config) {
  check(config);
  SparseProblem problem;
  const FeatureSampler sampler = make_sampler(config);
  const std::size_t planes = config.classes == 2 ? 1 : config.classes;
  problem.hidden_weights.assign(planes * config.features, 0.0f);
  detail::Rng rng(detail::derive_seed(config.seed, 0x5eed));
  // Frequent features carry the signal (as topic words do in text): a weight's scale falls
  // with the feature's idf, so the label is learnable from a realistic number of rows. The
  // most frequent 0.1% are stop words with no weight; otherwise they would bias every margin
  // the same way and unbalance the classes.
  const std::size_t stop_words = config.zipf > 0 ? config.features / 1000 : 0;
  for (std::size_t plane = 0; plane < planes; ++plane) {
    float* weights = problem.hidden_weights.data() + plane * config.features;
    for (std::size_t rank = 0; rank < config.features; ++rank) {
      if (rng.uniform() < config.hyperplane_density && rank >= stop_words) {
        const double idf = sampler.idf[rank];
        weights[sampler.perm[rank]] = static_cast<float>(rng.normal() / (idf * idf));
      }
    }
  }
  // Streams: training rows 1..rows, test rows after them; 0 and small tags are reserved.
  constexpr std::uint64_t kFirstRowStream = 1 << 20;
  generate_rows(config, sampler, problem.hidden_weights, kFirstRowStream, config.rows,
                problem.train);
  if (config.test_rows > 0) {
    generate_rows(config, sampler, problem.hidden_weights, kFirstRowStream + config.rows,
                  config.test_rows, problem.test);
  }
  if (config.regression) add_target_noise(config, kFirstRowStream, problem);
  return problem;
}

}  // namespace hogwild
