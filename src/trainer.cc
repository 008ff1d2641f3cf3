#include "hogwild/trainer.h"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <set>
#include <thread>

#include "hogwild/error.h"
#include "hogwild/policy.h"
#include "rng.h"
#include "workers.h"

namespace hogwild {

void TrainConfig::validate() const {
  auto fail = [](std::string_view option, std::string_view expected, auto found) {
    throw InputError(fmt::format("--{}: expected {}, found {}", option, expected, found));
  };
  if (threads < 0 || threads > 4096) fail("threads", "a count in [1, 4096] (0 = all cores)", threads);
  if (policy == Policy::kSerial && threads > 1) {
    fail("threads", "1 with --policy serial (it runs one worker)", threads);
  }
  if (epochs < 1) fail("epochs", "at least 1", epochs);
  if (!(step > 0) || !std::isfinite(step)) fail("step", "a finite step size > 0", step);
  if (!(decay > 0 && decay <= 1)) fail("decay", "a factor in (0, 1]", decay);
  if (!(l2 >= 0) || !std::isfinite(l2)) fail("l2", "a finite strength >= 0", l2);
  if (!(divergence_factor > 1)) fail("divergence-factor", "a factor > 1", divergence_factor);
}

int TrainConfig::resolved_threads() const {
  if (policy == Policy::kSerial) return 1;
  if (threads > 0) return threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

namespace {

using Clock = std::chrono::steady_clock;

std::string_view source_name(const Dataset& data, std::string_view fallback) {
  return data.source.empty() ? fallback : std::string_view(data.source);
}

// Classifiers train on -1/+1: the smaller of two label values is negative. One class alone
// is positive when its value is > 0 (so 0/1 and -1/+1 files both work).
std::vector<float> binary_label_values(const Dataset& data) {
  std::set<float> distinct;
  for (const float y : data.labels) {
    distinct.insert(y);
    if (distinct.size() > 2) {
      throw InputError(fmt::format(
          "{}: expected two label classes for a binary model, found at least three ({}, {}, {})",
          source_name(data, "training data"), *distinct.begin(), *std::next(distinct.begin()),
          *distinct.rbegin()));
    }
  }
  if (distinct.size() == 2) return {*distinct.begin(), *distinct.rbegin()};
  const float only = *distinct.begin();
  return only > 0 ? std::vector<float>{-only, only} : std::vector<float>{only, 1.0f};
}

std::vector<float> mapped_labels(const Dataset& data, std::span<const float> label_values,
                                 std::string_view role) {
  if (label_values.empty()) return data.labels;
  std::vector<float> y(data.rows());
  for (std::size_t i = 0; i < data.rows(); ++i) {
    if (data.labels[i] == label_values[1]) {
      y[i] = 1.0f;
    } else if (data.labels[i] == label_values[0]) {
      y[i] = -1.0f;
    } else {
      throw InputError(fmt::format(
          "{}: expected labels {} or {} (the training classes), found {} in example {}",
          source_name(data, role), label_values[0], label_values[1], data.labels[i], i + 1));
    }
  }
  return y;
}

template <class Loss>
Evaluation evaluate_mapped(std::span<const float> w, double l2, const Dataset& data,
                           std::span<const float> y, tbb::task_arena& arena) {
  struct Sums {
    double loss = 0;
    std::size_t correct = 0;
  };
  const Sums sums = arena.execute([&] {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, data.rows(), 1024), Sums{},
        [&](const tbb::blocked_range<std::size_t>& range, Sums acc) {
          for (std::size_t i = range.begin(); i != range.end(); ++i) {
            const auto row = data.row(i);
            double m = 0;
            for (std::size_t k = 0; k < row.indices.size(); ++k) {
              if (row.indices[k] < w.size()) m += double{w[row.indices[k]]} * row.values[k];
            }
            acc.loss += Loss::value(m, y[i]);
            acc.correct += (m >= 0 ? 1.0f : -1.0f) == y[i];
          }
          return acc;
        },
        [](Sums a, const Sums& b) {
          a.loss += b.loss;
          a.correct += b.correct;
          return a;
        });
  });
  Evaluation e;
  const double n = static_cast<double>(std::max<std::size_t>(1, data.rows()));
  e.loss = sums.loss / n;
  double norm2 = 0;
  for (const float v : w) norm2 += double{v} * v;
  e.objective = e.loss + 0.5 * l2 * norm2;
  e.accuracy = static_cast<double>(sums.correct) / n;
  return e;
}

template <class Fn>
decltype(auto) dispatch_loss(LossKind loss, Fn&& fn) {
  switch (loss) {
    case LossKind::kLogistic:
      return fn(LogisticLoss{});
    case LossKind::kHinge:
      return fn(HingeLoss{});
    case LossKind::kSquared:
      break;
  }
  return fn(SquaredLoss{});
}

// One worker's share of an epoch: plain SGD over `order`.
// Glossary: w = shared weights, m = margin w.x, g = d loss / d m, eta = step,
// shrink[j] = 1 / (1 + eta * l2 * n / count[j]): the L2 term applied on a row's nonzeros only,
// scaled by how rarely each feature occurs so its expectation is the full l2/2 ||w||^2
// gradient; the proximal form keeps it stable for rare features at any step.
template <class P, class Loss, bool kRegularised>
void sgd_slice(ParamStore& store, const Dataset& data, const float* y,
               std::span<const std::uint32_t> order, float eta, const float* shrink) {
  const float* w = store.data();
  for (const std::uint32_t r : order) {
    const auto row = data.row(r);
    float m = 0;
    for (std::size_t k = 0; k < row.indices.size(); ++k) m += P::load(w[row.indices[k]]) * row.values[k];
    const float g = Loss::derivative(m, y[r]);
    if constexpr (!kRegularised) {
      if (g == 0.0f) continue;
    }
    const float scale = -eta * g;
    const float* values = row.values.data();
    const std::uint32_t* indices = row.indices.data();
    P::sparse_update(store, row.indices, [=](float old, std::size_t k) {
      float v = old + scale * values[k];
      if constexpr (kRegularised) v *= shrink[indices[k]];
      return v;
    });
  }
}

}  // namespace

Evaluation evaluate(LossKind loss, std::span<const float> weights, double l2, const Dataset& data,
                    std::span<const float> label_values, int threads) {
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  const std::vector<float> y = mapped_labels(data, label_values, "data");
  return dispatch_loss(loss, [&](auto loss_type) {
    return evaluate_mapped<decltype(loss_type)>(weights, l2, data, y, arena);
  });
}

Report train(const TrainConfig& config, const Dataset& train_data, const Dataset* test_data,
             const Callbacks& callbacks) {
  config.validate();
  if (train_data.rows() == 0) {
    throw InputError(fmt::format("{}: expected at least one training example, found none",
                                 source_name(train_data, "training data")));
  }
  if (train_data.rows() > std::numeric_limits<std::uint32_t>::max()) {
    throw InputError(fmt::format("{}: expected at most 2^32-1 examples, found {}",
                                 source_name(train_data, "training data"), train_data.rows()));
  }
  Report report;
  report.config = config;
  report.config.threads = config.resolved_threads();
  const int threads = report.config.threads;
  report.dataset = describe(train_data);
  if (test_data) report.test_dataset = describe(*test_data);

  if (is_classifier(config.loss)) report.label_values = binary_label_values(train_data);
  const std::vector<float> y_train = mapped_labels(train_data, report.label_values, "training data");
  std::vector<float> y_test;
  if (test_data) y_test = mapped_labels(*test_data, report.label_values, "test data");

  const std::size_t n = train_data.rows();
  const std::size_t dim = std::max<std::size_t>(1, train_data.num_features);
  ParamStore store(dim);
  tbb::task_arena arena(threads);

  std::vector<float> reg_scale;  // n / count[j]
  std::vector<float> shrink;
  if (config.l2 > 0) {
    const auto counts = feature_counts(train_data);
    reg_scale.assign(dim, 0.0f);
    for (std::size_t j = 0; j < counts.size(); ++j) {
      if (counts[j] > 0) reg_scale[j] = static_cast<float>(static_cast<double>(n) / counts[j]);
    }
    shrink.resize(dim);
  }

  auto evaluate_epoch = [&](EpochRecord& record) {
    dispatch_loss(config.loss, [&](auto loss_type) {
      using Loss = decltype(loss_type);
      record.train = evaluate_mapped<Loss>(store.values(), config.l2, train_data, y_train, arena);
      if (test_data) {
        record.test = evaluate_mapped<Loss>(store.values(), config.l2, *test_data, y_test, arena);
      }
    });
  };

  EpochRecord initial;
  evaluate_epoch(initial);
  report.epochs.push_back(initial);
  if (callbacks.on_epoch) callbacks.on_epoch(initial);
  const double initial_loss = initial.train->loss;

  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  double eta = config.step;
  double elapsed = 0;

  for (int epoch = 1; epoch <= config.epochs; ++epoch) {
    detail::Rng rng(detail::derive_seed(config.seed, static_cast<std::uint64_t>(epoch)));
    for (std::size_t i = n; i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    const auto eta_f = static_cast<float>(eta);
    if (config.l2 > 0) {
      arena.execute([&] {
        tbb::parallel_for(std::size_t{0}, dim, [&](std::size_t j) {
          shrink[j] = static_cast<float>(1.0 / (1.0 + eta * config.l2 * reg_scale[j]));
        });
      });
    }

    const auto start = Clock::now();
    dispatch_policy(config.policy, [&](auto policy_type) {
      using P = decltype(policy_type);
      dispatch_loss(config.loss, [&](auto loss_type) {
        using Loss = decltype(loss_type);
        detail::run_workers(threads, [&](int worker) {
          const std::size_t begin = n * static_cast<std::size_t>(worker) / threads;
          const std::size_t end = n * static_cast<std::size_t>(worker + 1) / threads;
          const std::span<const std::uint32_t> slice(order.data() + begin, end - begin);
          if (config.l2 > 0) {
            sgd_slice<P, Loss, true>(store, train_data, y_train.data(), slice, eta_f, shrink.data());
          } else {
            sgd_slice<P, Loss, false>(store, train_data, y_train.data(), slice, eta_f, nullptr);
          }
        });
      });
    });
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    elapsed += seconds;
    report.samples += n;

    EpochRecord record;
    record.epoch = epoch;
    record.seconds = seconds;
    record.elapsed = elapsed;
    record.step = eta;
    evaluate_epoch(record);
    const double loss = record.train->loss;
    report.epochs.push_back(record);
    if (!std::isfinite(loss) || loss > config.divergence_factor * std::max(initial_loss, 1e-12)) {
      const std::string what =
          std::isfinite(loss)
              ? fmt::format("grew to {:.6g}, beyond {}x its initial {:.6g}", loss,
                            config.divergence_factor, initial_loss)
              : fmt::format("became {} (it was {:.6g} at the start)", loss, initial_loss);
      throw DivergenceError(fmt::format(
          "epoch {}: training loss {}; the run diverged: try a smaller --step (this epoch used {:.6g})",
          epoch, what, eta));
    }
    if (callbacks.on_epoch) callbacks.on_epoch(record);
    eta *= config.decay;
  }
  report.train_seconds = elapsed;
  report.samples_per_second = elapsed > 0 ? static_cast<double>(report.samples) / elapsed : 0.0;
  report.weights = store.snapshot();
  return report;
}

}  // namespace hogwild
