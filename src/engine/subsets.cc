#include "engine/subsets.h"

namespace hogwild::detail {

Dataset subset(const Dataset& data, std::span<const std::size_t> rows) {
  Dataset out;
  for (const auto r : rows) {
    const auto row = data.row(r);
    out.append(row.indices, row.values, data.labels[r]);
  }
  out.num_features = data.num_features;
  out.zero_based = data.zero_based;
  out.source = data.source;
  return out;
}

DenseDataset subset(const DenseDataset& data, std::span<const std::size_t> rows) {
  DenseDataset out;
  out.cols = data.cols;
  out.shape = data.shape;
  out.source = data.source;
  for (const auto r : rows) {
    const auto row = data.row(r);
    out.features.insert(out.features.end(), row.begin(), row.end());
    out.labels.push_back(data.labels[r]);
  }
  return out;
}

Ratings subset(const Ratings& data, std::span<const std::size_t> rows) {
  Ratings out;
  for (const auto r : rows) out.append(data.users[r], data.items[r], data.values[r]);
  out.num_users = data.num_users;
  out.num_items = data.num_items;
  out.source = data.source;
  return out;
}

}  // namespace hogwild::detail
