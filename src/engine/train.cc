// hogwild::train: which kernel and which model each kind of data trains. The model's shape comes
// from the data through checkpoint_for, the one description that training, checkpoints and
// prediction (detail::make_model) share.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>
#include <utility>

#include "engine/rng.h"
#include "engine/sample_cost.h"
#include "engine/step_calibration.h"
#include "engine/subsets.h"
#include "engine/trainers.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/predict.h"
#include "hogwild/report.h"
#include "models/classes.h"

namespace hogwild {
namespace {

// The file a message about a label names: IDX labels have one of their own.
const std::string& labels_name(const Dataset& data) { return data.source; }
const std::string& labels_name(const DenseDataset& data) { return data.labels_name(); }

std::string name_of(const std::string& source, std::string_view fallback) {
  return source.empty() ? std::string(fallback) : source;
}

// The fields of a checkpoint that every model has.
Checkpoint blank_checkpoint(const TrainConfig& config, std::string format) {
  Checkpoint c;
  c.model = std::string(model_name(config.model));
  c.format = std::move(format);
  c.config = config_to_json(config, -1);
  return c;
}

// A classifier's classes: the distinct training labels, increasing; InputError without
// examples or with a single class.
template <class Data>
void set_classes(Checkpoint& c, const Data& train) {
  const std::string train_name = name_of(train.source, "training data");
  if (train.rows() == 0) {
    throw InputError(train_name + ": expected at least one example, found none");
  }
  c.labels = detail::class_values(train.labels);
  if (c.labels.size() < 2) {
    throw InputError(fmt::format("{}: expected at least two label classes, found {}", train_name,
                                 c.labels.size()));
  }
  c.classes = c.labels.size();
}

// Trains the model `shape` describes on examples labelled with its classes.
template <class Data>
Report train_classifier(const TrainConfig& config, const Checkpoint& shape, const Data& train_data,
                        const Data* test_data, DataShape data, const Callbacks& callbacks,
                        const TrainState* resume) {
  const auto model = detail::make_model(shape, static_cast<float>(config.l2_strength()));
  const auto y_train = detail::class_indices(train_data.labels, shape.labels,
                                             name_of(labels_name(train_data), "training data"));
  std::vector<std::int32_t> y_test;
  if (test_data) {
    y_test = detail::class_indices(test_data->labels, shape.labels,
                                   name_of(labels_name(*test_data), "test data"));
  }
  const detail::Examples train_examples(train_data, y_train);
  const std::optional<detail::Examples> test_examples =
      test_data ? std::optional(detail::Examples(*test_data, y_test)) : std::nullopt;
  return detail::train_model(config, *model, train_examples, test_examples, std::move(data),
                             shape.labels, callbacks, resume);
}

// The training examples split into the part trained on and the part held out for
// --validation-fraction: a seeded random choice, each part in the data's order.
template <class Data>
std::pair<Data, Data> split_off_validation(const TrainConfig& config, const Data& train) {
  const std::size_t n = detail::examples_in(train);
  const auto held =
      static_cast<std::size_t>(std::llround(config.validation_fraction * static_cast<double>(n)));
  if (held < 1 || held >= n) {
    throw InputError(fmt::format(
        "--validation-fraction: expected a fraction that holds out at least one of the {} "
        "training examples and keeps at least one, found {}",
        n, config.validation_fraction));
  }
  const std::vector<std::size_t> order = detail::seeded_permutation(n, config.seed, 0x7a11da7eu);
  std::vector<std::size_t> held_rows(order.begin(), order.begin() + static_cast<long>(held));
  std::vector<std::size_t> kept_rows(order.begin() + static_cast<long>(held), order.end());
  std::sort(held_rows.begin(), held_rows.end());
  std::sort(kept_rows.begin(), kept_rows.end());
  return {detail::subset(train, kept_rows), detail::subset(train, held_rows)};
}

// Classifiers: a class only the held-out part has would be one the model cannot predict.
template <class Data>
void check_held_out_classes(const Checkpoint& shape, const Data& held) {
  if (shape.model == "squared") return;
  for (const float label : held.labels) {
    if (std::find(shape.labels.begin(), shape.labels.end(), double{label}) == shape.labels.end()) {
      throw InputError(fmt::format(
          "--validation-fraction: expected every label of the held-out examples among those "
          "trained on, found label {} only in the held-out part; give a smaller fraction",
          label));
    }
  }
}

// Trains on the examples --validation-fraction keeps, evaluating those it holds out after
// every epoch (the model's own prediction, from a checkpoint of the parameters).
template <class Data>
Report train_holding_out(const TrainConfig& config, const Data& train_data, const Data* test_data,
                         const Callbacks& callbacks, const TrainState* resume) {
  config.validate();
  // Named parts, not a structured binding: a lambda below refers to one (C++20 allows that,
  // Debian's clang 14 does not).
  const std::pair<Data, Data> parts = split_off_validation(config, train_data);
  const Data& kept = parts.first;
  const Data& held = parts.second;
  TrainConfig inner = config;
  inner.validation_fraction = 0;
  const Checkpoint shape = checkpoint_for(inner, kept, test_data);
  if constexpr (!std::is_same_v<Data, Ratings>) check_held_out_classes(shape, held);
  Callbacks with_held_out = callbacks;
  with_held_out.held_out = [&shape, &held](std::span<const float> weights) {
    Checkpoint model = shape;
    model.weights.assign(weights.begin(), weights.end());
    const Predictions p = predict(model, held);
    return Evaluation{p.loss.value_or(0.0), std::nullopt, p.accuracy,
                      shape.model == "mf" ? p.rmse : std::nullopt};
  };
  with_held_out.held_out_rows = detail::examples_in(held);
  Report report = train(inner, kept, test_data, with_held_out, resume);
  report.config.validation_fraction = config.validation_fraction;
  return report;
}

// What a run does before it trains as configured, each stage then training through train():
// measuring the sample cost (--sample-cost measured), holding out examples
// (--validation-fraction), calibrating the step (--step auto). None: the run trains as it is.
template <class Data>
std::optional<Report> train_in_stages(const TrainConfig& config, const Data& train_data,
                                      const Data* test_data, const Callbacks& callbacks,
                                      const TrainState* resume) {
  if (config.measure_sample_cost) {
    config.validate();  // before the measurement trains
    Report report = train(detail::with_measured_sample_cost(config, train_data), train_data,
                          test_data, callbacks, resume);
    report.config.measure_sample_cost = true;
    return report;
  }
  if (config.validation_fraction > 0) {
    return train_holding_out(config, train_data, test_data, callbacks, resume);
  }
  if (config.optimizer.auto_step) {
    return detail::train_with_step_calibration(config, train_data, test_data, callbacks, resume);
  }
  return std::nullopt;
}

}  // namespace

Checkpoint checkpoint_for(const TrainConfig& config, const Dataset& train, const Dataset*) {
  Checkpoint c = blank_checkpoint(config, "libsvm");
  c.features = std::max<std::size_t>(1, train.num_features);
  c.zero_based = train.zero_based;
  if (const auto* linear = std::get_if<LinearModel>(&config.model)) {
    const auto values = label_values(linear->loss, train);
    c.labels.assign(values.begin(), values.end());
  } else {
    set_classes(c, train);
  }
  return c;
}

Checkpoint checkpoint_for(const TrainConfig& config, const DenseDataset& train,
                          const DenseDataset*) {
  Checkpoint c = blank_checkpoint(config, "idx");
  c.features = train.cols;
  set_classes(c, train);
  if (const auto* mlp = std::get_if<MlpModel>(&config.model)) {
    c.hidden.assign(mlp->hidden.begin(), mlp->hidden.end());
  }
  return c;
}

Checkpoint checkpoint_for(const TrainConfig& config, const Ratings& train, const Ratings* test) {
  if (train.size() == 0) {
    throw InputError(name_of(train.source, "training data") +
                     ": expected at least one rating, found none");
  }
  Checkpoint c = blank_checkpoint(config, "ratings");
  c.users = std::max(train.num_users, test ? test->num_users : 0);
  c.items = std::max(train.num_items, test ? test->num_items : 0);
  c.rank = std::get<FactorisationModel>(config.model).rank;
  // The model's mean is a float, summed in double.
  double sum = 0;
  for (const float v : train.values) sum += v;
  c.mean = static_cast<float>(sum / static_cast<double>(train.size()));
  return c;
}

Report train(const TrainConfig& config, const Dataset& train_data, const Dataset* test_data,
             const Callbacks& callbacks, const TrainState* resume) {
  if (auto staged = train_in_stages(config, train_data, test_data, callbacks, resume)) {
    return std::move(*staged);
  }
  config.validate();
  config.check_format("libsvm");
  if (is_linear(config.model)) {
    return detail::train_linear(config, train_data, test_data, callbacks, resume);
  }
  const Checkpoint shape = checkpoint_for(config, train_data, test_data);
  const std::size_t test_rows = test_data ? test_data->rows() : 0;
  return train_classifier(config, shape, train_data, test_data,
                          {"libsvm", train_data.rows(), shape.features, shape.classes, 0, 0,
                           test_rows, 0, train_data.zero_based},
                          callbacks, resume);
}

Report train(const TrainConfig& config, const DenseDataset& train_data,
             const DenseDataset* test_data, const Callbacks& callbacks, const TrainState* resume) {
  if (auto staged = train_in_stages(config, train_data, test_data, callbacks, resume)) {
    return std::move(*staged);
  }
  config.validate();
  config.check_format("idx");
  if (test_data && test_data->cols != train_data.cols) {
    throw InputError(fmt::format("{}: expected {} features per example (as in {}), found {}",
                                 name_of(test_data->source, "test data"), train_data.cols,
                                 name_of(train_data.source, "training data"), test_data->cols));
  }
  const Checkpoint shape = checkpoint_for(config, train_data, test_data);
  const std::size_t test_rows = test_data ? test_data->rows() : 0;
  return train_classifier(
      config, shape, train_data, test_data,
      {"idx", train_data.rows(), train_data.cols, shape.classes, 0, 0, test_rows, 0}, callbacks,
      resume);
}

Report train(const TrainConfig& config, const Ratings& train_data, const Ratings* test_data,
             const Callbacks& callbacks, const TrainState* resume) {
  if (auto staged = train_in_stages(config, train_data, test_data, callbacks, resume)) {
    return std::move(*staged);
  }
  config.validate();
  config.check_format("ratings");
  const Checkpoint shape = checkpoint_for(config, train_data, test_data);
  const auto model =
      detail::make_model(shape, static_cast<float>(config.l2_strength()),
                         static_cast<float>(std::get<FactorisationModel>(config.model).init_scale));
  const DataShape data{"ratings",
                       train_data.size(),
                       0,
                       0,
                       shape.users,
                       shape.items,
                       test_data ? test_data->size() : 0,
                       0};
  const detail::Examples train_examples(train_data);
  const std::optional<detail::Examples> test_examples =
      test_data ? std::optional(detail::Examples(*test_data)) : std::nullopt;
  return detail::train_model(config, *model, train_examples, test_examples, data, {}, callbacks,
                             resume);
}

}  // namespace hogwild
