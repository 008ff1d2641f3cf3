#include "cli_predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string_view>
#include <utility>

#include "cli_paths.h"
#include "hogwild/checkpoint.h"
#include "hogwild/error.h"
#include "hogwild/idx.h"
#include "hogwild/input.h"
#include "hogwild/libsvm.h"
#include "hogwild/predict.h"
#include "hogwild/ratings.h"

namespace hogwild_cli {
namespace {

// A model's predictions on a file and its number of examples.
struct Predicted {
  hogwild::Predictions predictions;
  std::size_t rows = 0;
};

// Is the line blank or a comment (the readers skip those)?
bool skipped_line(std::string_view line) {
  for (const char c : line) {
    if (c == '#') return true;
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

// The line's first whitespace-separated token.
std::string_view first_token(std::string_view line) {
  const auto begin = line.find_first_not_of(" \t");
  if (begin == std::string_view::npos) return {};
  const auto end = line.find_first_of(" \t\r", begin);
  return line.substr(begin, end == std::string_view::npos ? line.size() - begin : end - begin);
}

// IDX images with their labels (given, or found beside them) or without.
Predicted predict_idx(const hogwild::Checkpoint& model, const PredictOptions& o) {
  std::optional<std::filesystem::path> labels;
  if (!o.labels.empty()) labels = o.labels;
  if (!labels) labels = hogwild::find_idx_labels(o.data);
  if (labels) {
    const auto data = hogwild::read_idx(o.data, *labels);
    return {hogwild::predict(model, data, true), data.rows()};
  }
  auto images = hogwild::read_idx_array(o.data);
  if (images.shape.size() < 2 || images.shape[0] == 0) {
    throw hogwild::InputError(fmt::format(
        "{}: expected images with at least 2 dimensions and one image, found {} dimensions", o.data,
        images.shape.size()));
  }
  hogwild::DenseDataset data;
  data.source = o.data;
  data.cols = images.data.size() / images.shape[0];
  data.bytes = std::move(images.data);
  data.labels.assign(images.shape[0], 0);
  return {hogwild::predict(model, data, false), data.rows()};
}

// Calls fn(line number, line) for each line of `text` (a final line without its newline too).
template <class Fn>
void each_line(std::string_view text, Fn&& fn) {
  std::size_t number = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    if (!fn(++number, text.substr(0, end))) return;
    if (end == std::string_view::npos) return;
    text.remove_prefix(end + 1);
  }
}

// The first line of `text` that holds an example (not blank or a comment). Prediction needs
// one: text without it is refused, naming the line after its last as the readers do, with the
// example's `form` (labels optional here).
std::string_view first_example(std::string_view text, const std::string& name,
                               std::string_view form) {
  std::size_t lines = 0;
  std::optional<std::string_view> example;
  each_line(text, [&](std::size_t number, std::string_view line) {
    lines = number;
    if (!skipped_line(line)) example = line;
    return !example;
  });
  if (example) return *example;
  throw hogwild::InputError(
      fmt::format("{}:{}: expected at least one example to predict, '{}', found {}", name,
                  lines + 1, form, text.empty() ? "an empty file" : "only blank or comment lines"));
}

// `user item` lines have no rating to compare with; `user item rating` lines do. The first
// example decides which.
Predicted predict_ratings(const hogwild::Checkpoint& model, const PredictOptions& o) {
  std::string text = hogwild::read_text(o.data);
  std::string fields(first_example(text, o.data, "user item [rating]")), field;
  std::replace(fields.begin(), fields.end(), ',', ' ');
  std::size_t count = 0;
  for (std::istringstream split(fields); split >> field;) ++count;
  const bool pairs = count == 2;
  if (pairs) {
    std::string with_ratings, line;
    for (std::istringstream lines(text); std::getline(lines, line);) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      with_ratings += line + (skipped_line(line) ? "\n" : " 0\n");
    }
    text = std::move(with_ratings);
  }
  const auto data = hogwild::parse_ratings(text, o.data);
  return {hogwild::predict(model, data, !pairs), data.size()};
}

// Whether an example's line holds features alone, `1:0.5 7:1`, no label before them.
bool features_only(std::string_view line) {
  return first_token(line).find(':') != std::string_view::npos;
}

// The LIBSVM example predict takes, its label optional.
constexpr std::string_view kLibsvmForm = "[label] index:value ...";

// LIBSVM text of features alone with a label of 0 before each example, which nothing compares
// with, the lines kept where they were, up to the first example that holds a label.
struct ZeroLabelled {
  std::string text;          // the examples before a labelled one, each labelled 0
  std::size_t first = 0;     // the first example's line
  std::size_t labelled = 0;  // the line of the first example with a label (0: none)
  std::string_view label;    // its label
};

ZeroLabelled with_zero_labels(std::string_view text) {
  ZeroLabelled out;
  out.text.reserve(text.size() + text.size() / 16);
  each_line(text, [&](std::size_t number, std::string_view line) {
    if (!skipped_line(line)) {
      if (!features_only(line)) {
        out.labelled = number;
        out.label = first_token(line);
        return false;
      }
      if (out.first == 0) out.first = number;
      out.text += "0 ";
    }
    out.text += line;
    out.text += '\n';
    return true;
  });
  return out;
}

// Rows of features alone: the lines before a labelled example are parsed first, so that a
// malformed line before it is the one named; then the labelled example is refused.
hogwild::Dataset parse_unlabelled(std::string_view text, const std::string& name,
                                  const hogwild::LibsvmReadOptions& options) {
  const ZeroLabelled zero = with_zero_labels(text);
  auto data = hogwild::parse_libsvm(zero.text, name, options);
  if (zero.labelled != 0) {
    throw hogwild::InputError(fmt::format(
        "{}:{}: expected features only, as on line {} (a file without labels), found the "
        "label {}",
        name, zero.labelled, zero.first, hogwild::quote(zero.label)));
  }
  return data;
}

// IDX images given to a model trained on LIBSVM text: their first bytes say so, where the text
// reader would name the first bytes it cannot parse.
void refuse_idx(std::string_view text, const hogwild::Checkpoint& model, const std::string& name) {
  if (hogwild::looks_like_idx(text)) {
    throw hogwild::InputError(fmt::format(
        "{}: expected LIBSVM text for this {} model (trained on libsvm data), found an IDX file",
        name, model.model));
  }
}

// LIBSVM rows with labels, or rows of features alone (`1:0.5 7:1`, the examples a user has
// no label for), the file's first example deciding which. A labelled file is read as training
// reads it (mapped, not copied); one whose reading fails is read again as text when its first
// example has no label.
Predicted predict_libsvm(const hogwild::Checkpoint& model, const PredictOptions& o) {
  const hogwild::LibsvmReadOptions options{
      .index_base = model.zero_based ? hogwild::IndexBase::kZero : hogwild::IndexBase::kOne};
  std::string text;
  if (o.data == "-") {
    text = hogwild::read_text(o.data);  // standard input can be read once only
  } else {
    try {
      const auto data = hogwild::read_libsvm(o.data, options);
      return {hogwild::predict(model, data, true), data.rows()};
    } catch (const hogwild::InputError&) {
      text = hogwild::read_text(o.data);
      refuse_idx(text, model, o.data);
      if (!features_only(first_example(text, o.data, kLibsvmForm))) throw;
      const auto data = parse_unlabelled(text, o.data, options);
      return {hogwild::predict(model, data, false), data.rows()};
    }
  }
  refuse_idx(text, model, o.data);
  const bool labelled = !features_only(first_example(text, o.data, kLibsvmForm));
  const auto data = labelled ? hogwild::parse_libsvm(text, o.data, options)
                             : parse_unlabelled(text, o.data, options);
  return {hogwild::predict(model, data, labelled), data.rows()};
}

}  // namespace

CLI::App* add_predict(CLI::App& app, PredictOptions& o) {
  auto* cmd = app.add_subcommand(
      "predict",
      "Predict with a model saved by `hogwild train --checkpoint`: one line per example (binary "
      "models: the label and the probability of the positive label (logistic) or the margin "
      "(hinge); squared: the value; softmax/mlp: the class label; mf: the rating of each `user "
      "item` line); with labels in the data, the loss and accuracy (or RMSE) go to stderr. "
      "LIBSVM rows may come without labels (`1:0.5 7:1`), ratings as `user item` pairs and IDX "
      "images without a labels file.");
  cmd->add_option("--model", o.model, "checkpoint file written by --checkpoint")
      ->required()
      ->check(file_path());
  cmd->add_option("--data", o.data,
                  "examples in the format the model trained on: LIBSVM, with or without labels "
                  "(features beyond the model's dimension are ignored), IDX images, or `user "
                  "item [rating]` lines")
      ->required()
      ->check(file_path());
  cmd->add_option("--labels", o.labels,
                  "IDX: labels file (default: beside the images by the standard name; without "
                  "one, no accuracy)")
      ->check(file_path());
  cmd->add_option("--out", o.out,
                  "write the predictions here instead of standard output (- : standard output)")
      ->check(file_path());
  cmd->footer("Exit codes: 0 success, 2 bad usage, bad data or a corrupt checkpoint.");
  return cmd;
}

int run_predict(const PredictOptions& o) {
  const std::string out = o.out == "-" ? "" : o.out;  // "": standard output
  check_writable(out);
  const NamedFile inputs[] = {{"--model", o.model}, {"--data", o.data}, {"--labels", o.labels}};
  const NamedFile output[] = {{"--out", out}};
  check_outputs_apart(inputs, output);
  check_one_standard_input(inputs);
  const hogwild::Checkpoint model = hogwild::load_checkpoint(o.model);
  if (!o.labels.empty() && model.format != "idx") {
    throw hogwild::InputError(
        fmt::format("--labels: expected only with a model trained on IDX images, found a {} "
                    "model trained on {} data (its labels are in --data)",
                    model.model, model.format));
  }
  const auto [p, rows] = model.format == "idx"       ? predict_idx(model, o)
                         : model.format == "ratings" ? predict_ratings(model, o)
                                                     : predict_libsvm(model, o);
  std::string text;
  text.reserve(rows * 12);
  for (std::size_t i = 0; i < p.values.size(); ++i) {
    text += p.scores.empty() ? fmt::format("{}\n", p.values[i])
                             : fmt::format("{} {}\n", p.values[i], p.scores[i]);
  }
  if (out.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  } else {
    write_text(out, text);
  }
  std::string summary =
      fmt::format("{} predictions with the {} model of epoch {}", rows, model.model, model.epoch);
  if (p.loss) summary += fmt::format(", loss {:.6f}", *p.loss);
  if (p.accuracy) summary += fmt::format(", accuracy {:.2f}%", 100 * *p.accuracy);
  if (p.rmse) summary += fmt::format(", rmse {:.5f}", *p.rmse);
  fmt::print(stderr, "{}\n", summary);
  return 0;
}

}  // namespace hogwild_cli
