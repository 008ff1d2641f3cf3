// hogwild::train: which kernel and which model each kind of data trains.

#include <fmt/format.h>

#include <algorithm>

#include "engine/trainers.h"
#include "hogwild/error.h"
#include "models/classes.h"

namespace hogwild {
namespace {

std::string name_of(const std::string& source, std::string_view fallback) {
  return source.empty() ? std::string(fallback) : source;
}

// The classes of `train`'s labels and each example's class index, for `train` and `test`.
template <class Data>
struct Classes {
  Classes(const Data& train, const Data* test) {
    const std::string train_name = name_of(train.source, "training data");
    if (train.rows() == 0) {
      throw InputError(train_name + ": expected at least one example, found none");
    }
    values = detail::class_values(train.labels);
    if (values.size() < 2) {
      throw InputError(fmt::format("{}: expected at least two label classes, found {}", train_name,
                                   values.size()));
    }
    y_train = detail::class_indices(train.labels, values, train_name);
    if (!test) return;
    y_test = detail::class_indices(test->labels, values, name_of(test->source, "test data"));
  }
  // Trains `model` on the examples with their class indices.
  Report train(const TrainConfig& config, const detail::Model& model, const Data& train_data,
               const Data* test_data, DataShape shape, const Callbacks& callbacks,
               const TrainState* resume) const {
    const detail::Examples train_examples(train_data, y_train);
    const std::optional<detail::Examples> test_examples =
        test_data ? std::optional(detail::Examples(*test_data, y_test)) : std::nullopt;
    return detail::train_model(config, model, train_examples, test_examples, std::move(shape),
                               values, callbacks, resume);
  }
  std::vector<double> values;
  std::vector<std::int32_t> y_train, y_test;
};

}  // namespace

Report train(const TrainConfig& config, const Dataset& train_data, const Dataset* test_data,
             const Callbacks& callbacks, const TrainState* resume) {
  config.validate();
  config.check_format("libsvm");
  if (is_linear(config.model)) {
    return detail::train_linear(config, train_data, test_data, callbacks, resume);
  }
  const Classes classes(train_data, test_data);
  const std::size_t features = std::max<std::size_t>(1, train_data.num_features);
  const auto model = detail::make_sparse_softmax(features, classes.values.size(),
                                                 static_cast<float>(config.l2_strength()));
  const DataShape shape{"libsvm",
                        train_data.rows(),
                        features,
                        classes.values.size(),
                        0,
                        0,
                        test_data ? test_data->rows() : 0,
                        0};
  return classes.train(config, *model, train_data, test_data, shape, callbacks, resume);
}

Report train(const TrainConfig& config, const DenseDataset& train_data,
             const DenseDataset* test_data, const Callbacks& callbacks, const TrainState* resume) {
  config.validate();
  config.check_format("idx");
  const auto* mlp = std::get_if<MlpModel>(&config.model);
  const std::string train_name = name_of(train_data.source, "training data");
  if (test_data && test_data->cols != train_data.cols) {
    throw InputError(fmt::format("{}: expected {} features per example (as in {}), found {}",
                                 name_of(test_data->source, "test data"), train_data.cols,
                                 train_name, test_data->cols));
  }
  const Classes classes(train_data, test_data);
  const auto l2 = static_cast<float>(config.l2_strength());
  const std::size_t k = classes.values.size();
  const auto model = mlp ? detail::make_mlp(train_data.cols, mlp->hidden, k, l2)
                         : detail::make_dense_softmax(train_data.cols, k, l2);
  const DataShape shape{
      "idx", train_data.rows(), train_data.cols, k, 0, 0, test_data ? test_data->rows() : 0, 0};
  return classes.train(config, *model, train_data, test_data, shape, callbacks, resume);
}

Report train(const TrainConfig& config, const Ratings& train_data, const Ratings* test_data,
             const Callbacks& callbacks, const TrainState* resume) {
  config.validate();
  config.check_format("ratings");
  const auto& mf = std::get<FactorisationModel>(config.model);
  if (train_data.size() == 0) {
    throw InputError(name_of(train_data.source, "training data") +
                     ": expected at least one rating, found none");
  }
  const std::size_t users = std::max(train_data.num_users, test_data ? test_data->num_users : 0);
  const std::size_t items = std::max(train_data.num_items, test_data ? test_data->num_items : 0);
  double sum = 0;
  for (const float v : train_data.values) sum += v;
  const auto mean = static_cast<float>(sum / static_cast<double>(train_data.size()));
  const auto model = detail::make_factorisation(users, items, mf.rank, mean,
                                                static_cast<float>(config.l2_strength()),
                                                static_cast<float>(mf.init_scale));
  const DataShape shape{
      "ratings", train_data.size(), 0, 0, users, items, test_data ? test_data->size() : 0, 0};
  const detail::Examples train_examples(train_data);
  const std::optional<detail::Examples> test_examples =
      test_data ? std::optional(detail::Examples(*test_data)) : std::nullopt;
  return detail::train_model(config, *model, train_examples, test_examples, shape, {}, callbacks,
                             resume);
}

}  // namespace hogwild
