#include "hogwild/report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace hogwild {
namespace {

using nlohmann::ordered_json;

// JSON has no NaN/Inf; a non-finite value is written as null rather than as invalid JSON.
ordered_json number(double v) { return std::isfinite(v) ? ordered_json(v) : ordered_json(nullptr); }

ordered_json config_json(const TrainConfig& c) {
  return ordered_json{{"model", to_string(c.loss)},
                      {"policy", to_string(c.policy)},
                      {"threads", c.threads},
                      {"epochs", c.epochs},
                      {"step", c.step},
                      {"decay", c.decay},
                      {"l2", c.l2},
                      {"seed", c.seed},
                      {"divergence_factor", c.divergence_factor}};
}

// Shortest form that reads back: "1", "-1", "0.5".
std::string fmt_label(float label) { return fmt::format("{}", label); }

ordered_json stats_json(const DatasetStats& s) {
  ordered_json labels = ordered_json::object();
  for (const auto& [label, count] : s.label_counts) labels[fmt_label(label)] = count;
  return ordered_json{{"rows", s.rows},
                      {"features", s.features},
                      {"nnz", s.nnz},
                      {"mean_nnz_per_row", s.mean_nnz_per_row},
                      {"max_nnz_per_row", s.max_nnz_per_row},
                      {"labels", labels}};
}

}  // namespace

std::string config_to_json(const TrainConfig& config, int indent) {
  return config_json(config).dump(indent);
}

std::string to_json(const Report& report, int indent) {
  ordered_json epochs = ordered_json::array();
  for (const auto& e : report.epochs) {
    ordered_json record{{"epoch", e.epoch},
                        {"seconds", e.seconds},
                        {"elapsed", e.elapsed},
                        {"step", e.step}};
    if (e.train) {
      record["train_loss"] = number(e.train->loss);
      record["train_objective"] = number(e.train->objective);
      if (is_classifier(report.config.loss)) record["train_accuracy"] = e.train->accuracy;
    }
    if (e.test) {
      record["test_loss"] = number(e.test->loss);
      if (is_classifier(report.config.loss)) record["test_accuracy"] = e.test->accuracy;
    }
    epochs.push_back(std::move(record));
  }
  ordered_json json{{"config", config_json(report.config)}, {"dataset", stats_json(report.dataset)}};
  if (report.test_dataset) json["test_dataset"] = stats_json(*report.test_dataset);
  if (!report.label_values.empty()) {
    json["label_values"] = {{"negative", report.label_values[0]},
                            {"positive", report.label_values[1]}};
  }
  json["epochs"] = std::move(epochs);
  json["samples"] = report.samples;
  json["train_seconds"] = report.train_seconds;
  json["samples_per_second"] = report.samples_per_second;
  ordered_json final_values = ordered_json::object();
  if (!report.epochs.empty()) {
    const auto& last = report.epochs.back();
    final_values["epoch"] = last.epoch;
    if (last.train) {
      final_values["train_loss"] = number(last.train->loss);
      final_values["train_objective"] = number(last.train->objective);
      if (is_classifier(report.config.loss)) final_values["train_accuracy"] = last.train->accuracy;
    }
    if (last.test) {
      final_values["test_loss"] = number(last.test->loss);
      if (is_classifier(report.config.loss)) final_values["test_accuracy"] = last.test->accuracy;
    }
  }
  json["final"] = std::move(final_values);
  return json.dump(indent);
}

}  // namespace hogwild
