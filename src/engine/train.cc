// hogwild::train: which kernel and which model each kind of data trains.

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "engine/trainers.h"
#include "hogwild/error.h"

namespace hogwild {
namespace {

// Maps label values to class indices 0..k-1 in increasing order of value.
template <class Label>
std::vector<double> class_values(const std::vector<Label>& labels) {
  std::vector<double> values(labels.begin(), labels.end());
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

template <class Label>
std::vector<std::int32_t> class_indices(const std::vector<Label>& labels,
                                        const std::vector<double>& classes,
                                        std::string_view source) {
  std::map<double, std::int32_t> index;
  for (std::size_t c = 0; c < classes.size(); ++c) index[classes[c]] = static_cast<std::int32_t>(c);
  std::vector<std::int32_t> y(labels.size());
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const auto it = index.find(static_cast<double>(labels[i]));
    if (it == index.end()) {
      throw InputError(
          fmt::format("{}: expected labels among the {} training classes, found {} in example {}",
                      source, classes.size(), labels[i], i + 1));
    }
    y[i] = it->second;
  }
  return y;
}

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
    values = class_values(train.labels);
    if (values.size() < 2) {
      throw InputError(fmt::format("{}: expected at least two label classes, found {}", train_name,
                                   values.size()));
    }
    y_train = class_indices(train.labels, values, train_name);
    if (test) y_test = class_indices(test->labels, values, name_of(test->source, "test data"));
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
  Classes classes(train_data, test_data);
  const std::size_t features = std::max<std::size_t>(1, train_data.num_features);
  const auto model = detail::make_sparse_softmax(
      train_data, std::move(classes.y_train), test_data, std::move(classes.y_test), features,
      classes.values.size(), static_cast<float>(config.l2_strength()));
  const DataShape shape{"libsvm",
                        train_data.rows(),
                        features,
                        classes.values.size(),
                        0,
                        0,
                        test_data ? test_data->rows() : 0,
                        0};
  return detail::train_model(config, *model, shape, classes.values, callbacks, resume);
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
  Classes classes(train_data, test_data);
  const auto l2 = static_cast<float>(config.l2_strength());
  const std::size_t k = classes.values.size();
  const auto model = mlp ? detail::make_mlp(train_data, std::move(classes.y_train), test_data,
                                            std::move(classes.y_test), k, mlp->hidden, l2)
                         : detail::make_dense_softmax(train_data, std::move(classes.y_train),
                                                      test_data, std::move(classes.y_test), k, l2);
  const DataShape shape{
      "idx", train_data.rows(), train_data.cols, k, 0, 0, test_data ? test_data->rows() : 0, 0};
  return detail::train_model(config, *model, shape, classes.values, callbacks, resume);
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
  const auto model = detail::make_factorisation(train_data, test_data, mf.rank,
                                                static_cast<float>(config.l2_strength()),
                                                static_cast<float>(mf.init_scale));
  const DataShape shape{"ratings",
                        train_data.size(),
                        0,
                        0,
                        std::max(train_data.num_users, test_data ? test_data->num_users : 0),
                        std::max(train_data.num_items, test_data ? test_data->num_items : 0),
                        test_data ? test_data->size() : 0,
                        0};
  return detail::train_model(config, *model, shape, {}, callbacks, resume);
}

}  // namespace hogwild
