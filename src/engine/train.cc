// hogwild::train: which kernel and which model each kind of data trains. The model's shape comes
// from the data through checkpoint_for, the one description that training, checkpoints and
// prediction (detail::make_model) share.

#include <fmt/format.h>

#include <algorithm>

#include "engine/step_calibration.h"
#include "engine/trainers.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/report.h"
#include "models/classes.h"

namespace hogwild {
namespace {

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
                                             name_of(train_data.source, "training data"));
  std::vector<std::int32_t> y_test;
  if (test_data) {
    y_test = detail::class_indices(test_data->labels, shape.labels,
                                   name_of(test_data->source, "test data"));
  }
  const detail::Examples train_examples(train_data, y_train);
  const std::optional<detail::Examples> test_examples =
      test_data ? std::optional(detail::Examples(*test_data, y_test)) : std::nullopt;
  return detail::train_model(config, *model, train_examples, test_examples, std::move(data),
                             shape.labels, callbacks, resume);
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
  if (config.optimizer.auto_step) {
    return detail::train_with_step_calibration(config, train_data, test_data, callbacks, resume);
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
  if (config.optimizer.auto_step) {
    return detail::train_with_step_calibration(config, train_data, test_data, callbacks, resume);
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
  if (config.optimizer.auto_step) {
    return detail::train_with_step_calibration(config, train_data, test_data, callbacks, resume);
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
