// Checking that a checkpoint continues a run, and moving progress between a checkpoint and
// the trainers' TrainState.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "hogwild/checkpoint.h"
#include "hogwild/error.h"

namespace hogwild {
namespace {

std::string join(const std::vector<double>& values) {
  std::string out;
  for (const double v : values) out += (out.empty() ? "" : ", ") + fmt::format("{}", v);
  return out.empty() ? "none" : out;
}

std::string shown(const nlohmann::json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// A configuration value as its option reads: --replicate's numbers for auto and off.
std::string shown(std::string_view key, const nlohmann::json& v) {
  if (key == "replicate" && v == TrainConfig::kReplicateAuto) return "auto";
  if (key == "replicate" && v == 0) return "off";
  return shown(v);
}

// --step auto is two keys, the step it chose and `step_auto`: the step as its option reads.
std::string step_shown(const nlohmann::json& config, bool chosen) {
  if (!config.value("step_auto", false))
    return config.contains("step") ? shown(config["step"]) : "";
  return chosen && config.contains("step") ? "auto (it chose " + shown(config["step"]) + ")"
                                           : "auto";
}

// The model, format, data shape, labels and mean of `found` against `expected`.
void check_shape(const Checkpoint& found, const Checkpoint& expected, const auto& fail) {
  if (found.model != expected.model) {
    fail(fmt::format("a checkpoint of a {} model (--model), found one of a {} model",
                     expected.model, found.model));
  }
  if (found.format != expected.format) {
    fail(fmt::format("a checkpoint trained on {} data (--format), found {} data", expected.format,
                     found.format));
  }
  const auto differ = [&](std::string_view what, std::uint64_t want, std::uint64_t got) {
    if (want != got) {
      fail(fmt::format("{} {} (as in the training data and options), found {}", what, want, got));
    }
  };
  differ("features", expected.features, found.features);
  differ("classes", expected.classes, found.classes);
  differ("users", expected.users, found.users);
  differ("items", expected.items, found.items);
  differ("rank", expected.rank, found.rank);
  if (found.hidden != expected.hidden) {
    const std::vector<double> want(expected.hidden.begin(), expected.hidden.end());
    const std::vector<double> got(found.hidden.begin(), found.hidden.end());
    fail(fmt::format("hidden layers {} (--hidden), found {}", join(want), join(got)));
  }
  if (found.labels != expected.labels) {
    fail(fmt::format("label values {} (the training data's), found {}", join(expected.labels),
                     join(found.labels)));
  }
  if (found.zero_based != expected.zero_based) {
    fail(
        fmt::format("a checkpoint trained on {}-based indices (as the training data reads), "
                    "found {}-based",
                    expected.zero_based ? 0 : 1, found.zero_based ? 0 : 1));
  }
  if (found.mean != expected.mean) {
    fail(fmt::format("a training mean rating of {} (the training data's), found {}", expected.mean,
                     found.mean));
  }
}

// How a fingerprint reads in a message, in the words of the data's format.
std::string described(const DataFingerprint& data, std::string_view format) {
  const std::string counts =
      format == "idx"       ? fmt::format("{} images, {} pixels", data.rows, data.entries)
      : format == "ratings" ? fmt::format("{} ratings", data.rows)
                            : fmt::format("{} rows, {} nonzeros", data.rows, data.entries);
  return fmt::format("{}, CRC-32 {:08x}", counts, data.crc);
}

}  // namespace

void check_resumes(const Checkpoint& found, const Checkpoint& expected, std::string_view name,
                   const ResumeRules& rules) {
  const auto fail = [&](const std::string& what) {
    throw InputError(fmt::format("{}: expected {}", name, what));
  };
  check_shape(found, expected, fail);
  const auto is_free = [&](std::string_view key) { return rules.free_key && rules.free_key(key); };
  const auto named = [&](std::string_view key) {
    return rules.name_of_key ? rules.name_of_key(key) : std::string(key);
  };
  // Options that change what training computes must be the same; the free ones may change.
  const auto want = nlohmann::json::parse(expected.config);
  const auto got = nlohmann::json::parse(found.config);
  if (want.value("step_auto", false) != got.value("step_auto", false) && !is_free("step")) {
    fail(fmt::format("{} {} as in this run, found {} {} in the checkpoint", named("step"),
                     step_shown(want, false), named("step"), step_shown(got, true)));
  }
  for (const auto& [key, value] : want.items()) {
    if (is_free(key)) continue;
    if (!got.contains(key)) {
      fail(fmt::format("{} {} as in this run, found a checkpoint without it", named(key),
                       shown(key, value)));
    }
    if (got.at(key) != value) {
      fail(fmt::format("{} {} as in this run, found {} in the checkpoint", named(key),
                       shown(key, value), shown(key, got.at(key))));
    }
  }
  for (const auto& [key, value] : got.items()) {
    if (!is_free(key) && !want.contains(key)) {
      fail(fmt::format("no {} (not an option of this run), found {} in the checkpoint", named(key),
                       shown(key, value)));
    }
  }
  // Last: an option that differs names the cause better than the data it changes would. A
  // checkpoint without a fingerprint (older, or written without one) resumes unchecked.
  if (found.training_data && expected.training_data &&
      *found.training_data != *expected.training_data) {
    fail(fmt::format("the training data the checkpoint was written on ({}), found {}{}",
                     described(*found.training_data, found.format),
                     described(*expected.training_data, expected.format),
                     rules.data_name.empty() ? "" : " in " + rules.data_name));
  }
}

TrainState resume_state(const Checkpoint& checkpoint) {
  TrainState state;
  state.epoch = checkpoint.epoch;
  state.initial_loss = checkpoint.initial_loss;
  state.elapsed = checkpoint.elapsed;
  state.samples = checkpoint.samples;
  state.weights = checkpoint.weights;
  for (const auto& buffer : checkpoint.optimizer_state) state.optimizer_state.emplace_back(buffer);
  state.worker_updates = checkpoint.worker_updates;
  state.plateau = checkpoint.plateau;
  state.patience = checkpoint.patience;
  state.worker_draws = checkpoint.worker_draws;
  state.virtual_ns = checkpoint.virtual_ns;
  return state;
}

void record_state(Checkpoint& checkpoint, const TrainState& state) {
  checkpoint.epoch = state.epoch;
  checkpoint.initial_loss = state.initial_loss;
  checkpoint.elapsed = state.elapsed;
  checkpoint.samples = state.samples;
  checkpoint.plateau = state.plateau;
  checkpoint.patience = state.patience;
  checkpoint.weights.assign(state.weights.begin(), state.weights.end());
  checkpoint.optimizer_state.clear();
  for (const auto& buffer : state.optimizer_state) {
    checkpoint.optimizer_state.emplace_back(buffer.begin(), buffer.end());
  }
  checkpoint.worker_updates = state.worker_updates;
  checkpoint.worker_draws = state.worker_draws;
  checkpoint.virtual_ns = state.virtual_ns;
}

}  // namespace hogwild
