// The native part of the Python package (hogwild._hogwild): training on arrays already in the
// library's layouts (hogwild/_arrays.py converts numpy and scipy inputs to them), the trained
// model, and its predictions. Options arrive as the command line's own arguments and are read by
// its option table (tools/train_options.h), so names, defaults, checks and messages are the
// CLI's.

#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "arrays.h"
#include "hogwild/hogwild.h"
#include "row_buffers.h"
#include "train_options.h"

namespace py = pybind11;

namespace {

using hogwild_python::Array;
using hogwild_python::dense_data;
using hogwild_python::ratings_data;
using hogwild_python::sparse_data;

/// Stops a run from another thread and tells how far it got: hogwild.Control.
struct Control {
  std::atomic<bool> stop{false};  ///< set: workers stop within a few thousand samples
  std::atomic<int> epochs{0};     ///< epochs completed so far
};

// How often a training call looks for a pending signal (Ctrl-C) while the GIL is released.
constexpr auto kSignalPoll = std::chrono::milliseconds(50);

// The options as `hogwild train` reads them, for data of `format`.
hogwild_cli::TrainArgs parse_options(const std::vector<std::string>& options,
                                     const std::string& format) {
  CLI::App app;
  hogwild_cli::TrainArgs args;
  auto* train = hogwild_cli::add_train(app, args);
  std::vector<std::string> argv{"train", "--train", "arrays", "--format", format};
  argv.insert(argv.end(), options.begin(), options.end());
  std::reverse(argv.begin(), argv.end());  // CLI11 takes them last first
  try {
    app.parse(argv);
  } catch (const CLI::ConversionError& e) {
    throw hogwild::InputError(hogwild_cli::conversion_message(*train, e.what()));
  } catch (const CLI::ParseError& e) {
    throw hogwild::InputError(e.what());
  }
  hogwild_cli::apply(args);
  return args;
}

// Lines for Python's sys.stderr, written from the training thread and printed by the caller's.
class Lines {
 public:
  void add(std::string line) {
    const std::lock_guard lock(mutex_);
    lines_.push_back(std::move(line));
  }
  // Writes the lines so far to sys.stderr (where notebooks and pytest see them); needs the GIL.
  void print() {
    std::vector<std::string> lines;
    {
      const std::lock_guard lock(mutex_);
      lines.swap(lines_);
    }
    if (lines.empty()) return;
    const auto stderr_ = py::module_::import("sys").attr("stderr");
    for (const auto& line : lines) stderr_.attr("write")(line + "\n");
    stderr_.attr("flush")();
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

// Runs `run` on a thread of its own with the GIL released, so that other Python threads go on;
// meanwhile the calling thread prints `lines` and looks for signals. A signal whose handler
// raises (Ctrl-C's KeyboardInterrupt) stops the workers through `control`, and the exception is
// raised once they have stopped.
hogwild::Report run_without_gil(const std::function<hogwild::Report()>& run, Control& control,
                                Lines& lines) {
  std::optional<hogwild::Report> report;
  std::exception_ptr error;
  std::optional<py::error_already_set> raised;
  {
    py::gil_scoped_release release;
    std::mutex mutex;
    std::condition_variable finished;
    bool done = false;
    std::thread worker([&] {
      try {
        report = run();
      } catch (...) {
        error = std::current_exception();
      }
      const std::lock_guard lock(mutex);
      done = true;
      finished.notify_one();
    });
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, kSignalPoll, [&] { return done; })) {
      if (raised) continue;
      lock.unlock();
      {
        const py::gil_scoped_acquire gil;
        lines.print();
        if (PyErr_CheckSignals() != 0) {
          raised.emplace();
          control.stop = true;
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  lines.print();
  if (raised) throw *raised;
  if (error) std::rethrow_exception(error);
  return std::move(*report);
}

// The line of one epoch (verbose=True).
std::string epoch_line(const hogwild::EpochRecord& r) {
  std::string line =
      fmt::format("epoch {}: {:.4f} s, train loss {:.6f}", r.epoch, r.seconds, r.train.loss);
  if (r.test) line += fmt::format(", test loss {:.6f}", r.test->loss);
  if (r.test && r.test->accuracy) {
    line += fmt::format(", test accuracy {:.2f}%", 100 * *r.test->accuracy);
  }
  if (r.test && r.test->rmse) line += fmt::format(", test rmse {:.5f}", *r.test->rmse);
  return line;
}

// Seconds since `start`.
double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The order to store `rows` training examples in: where the run reads runs of stored rows, the
// order the CLI shuffles its data's storage into (shuffle_rows), so that a run here is the CLI's
// run on the same data; else as given.
std::vector<std::size_t> storage_for(const hogwild_cli::TrainArgs& args, std::size_t rows) {
  if (args.config.block_rows == 0) return {};
  return hogwild::storage_order(rows, args.config.seed);
}

// Trains on `train` (stored in storage_for's order) and evaluates on `test`; returns the model,
// the report as JSON text and `conversion_seconds` (the time it took to copy the arrays into
// `train` and `test`).
template <class Data>
py::tuple train_on(const hogwild_cli::TrainArgs& args, Data train, const std::optional<Data>& test,
                   Control* given, bool verbose, double conversion_seconds,
                   bool intercept = false) {
  Control own;
  Control& control = given ? *given : own;
  control.epochs = 0;
  const auto& config = args.config;
  const Data* test_data = test ? &*test : nullptr;
  auto checkpoint = hogwild::checkpoint_for(config, train, test_data);
  checkpoint.intercept = intercept;
  if (const auto parameters = hogwild::checkpoint_parameters(checkpoint);
      parameters > args.max_parameters) {
    throw hogwild::InputError(fmt::format(
        "X: expected a model of at most {} parameters (max_parameters), found one of "
        "{} ({:.1f} GiB of floats)",
        args.max_parameters, parameters, static_cast<double>(parameters) * 4 / (1 << 30)));
  }
  // A stop asked for before the run or during it ends with it, however it ends.
  struct ClearStop {
    Control& control;
    ~ClearStop() { control.stop = false; }
  } clear_stop{control};
  Lines lines;
  hogwild::Callbacks callbacks;
  callbacks.stop = &control.stop;
  callbacks.on_epoch = [&](const hogwild::EpochRecord& r) {
    control.epochs = r.epoch;
    if (verbose) lines.add(epoch_line(r));
  };
  callbacks.on_epoch_state = [&](const hogwild::TrainState& state) {
    hogwild::record_state(checkpoint, state);
  };
  const auto report = run_without_gil(
      [&] { return hogwild::train(config, train, test_data, callbacks); }, control, lines);
  // A stopped run's model holds the parameters the workers stopped at.
  checkpoint.weights = report.weights;
  if constexpr (std::is_same_v<Data, hogwild::Dataset>) {
    hogwild_python::keep_row_buffers(std::move(train));
  }
  return py::make_tuple(checkpoint, hogwild::to_json(report), conversion_seconds);
}

template <class T>
py::array_t<T> to_array(const std::vector<T>& values) {
  return py::array_t<T>(static_cast<py::ssize_t>(values.size()), values.data());
}

// The predictions of model `c` as a dict of arrays: values; binary models' scores and margins;
// softmax and MLP models' class_scores (examples x classes).
py::dict prediction_dict(const hogwild::Predictions& p, const hogwild::Checkpoint& c) {
  py::dict out;
  out["values"] = to_array(p.values);
  if (c.model == "logistic" || c.model == "hinge") {
    out["scores"] = to_array(p.scores);
    out["margins"] = to_array(p.margins);
  }
  if (c.model == "softmax" || c.model == "mlp") {
    const auto k = static_cast<py::ssize_t>(c.classes);
    out["class_scores"] =
        to_array(p.class_scores).reshape({static_cast<py::ssize_t>(p.values.size()), k});
  }
  return out;
}

void translate_errors(py::module_& m) {
  static py::exception<hogwild::DivergenceError> diverged(m, "DivergenceError",
                                                          PyExc_ArithmeticError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hogwild::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const hogwild::SystemError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const hogwild::DivergenceError& e) {
      diverged(e.what());
    }
  });
}

// The largest and the mean squared L2 norm of CSR rows (indptr of I, values of V), in one
// parallel pass over the values as they are (no converted copy), summed in the same order every
// run so that a default step made from them is reproducible.
template <class I, class V>
py::tuple squared_norms(const py::array_t<I, py::array::c_style>& indptr,
                        const py::array_t<V, py::array::c_style>& values) {
  const std::size_t rows = indptr.size() > 0 ? indptr.size() - 1 : 0;
  const I* offsets = indptr.data();
  const V* v = values.data();
  if (rows > 0 && (offsets[0] != 0 || static_cast<std::size_t>(offsets[rows]) != values.size())) {
    throw hogwild::InputError("X: expected CSR arrays, found indptr not ending at the nonzeros");
  }
  struct Sums {
    double max = 0, total = 0;
  };
  const py::gil_scoped_release release;
  const Sums sums = tbb::parallel_deterministic_reduce(
      tbb::blocked_range<std::size_t>(0, rows, 4096), Sums{},
      [&](const auto& range, Sums acc) {
        for (std::size_t i = range.begin(); i < range.end(); ++i) {
          double sum = 0;
          for (auto k = offsets[i]; k < offsets[i + 1]; ++k) sum += double{v[k]} * double{v[k]};
          acc.max = std::max(acc.max, sum);
          acc.total += sum;
        }
        return acc;
      },
      [](Sums a, const Sums& b) {
        return Sums{std::max(a.max, b.max), a.total + b.total};
      });
  const py::gil_scoped_acquire gil;
  return py::make_tuple(sums.max, rows > 0 ? sums.total / static_cast<double>(rows) : 0.0);
}

std::vector<std::string> option_names() {
  std::vector<std::string> names;
  for (const auto& option : hogwild_cli::train_options()) names.emplace_back(option.name);
  return names;
}

using Checkpoint = hogwild::Checkpoint;

void bind_model(py::module_& m) {
  py::class_<Checkpoint>(m, "Model", "A trained model: its shape, labels and parameters.")
      .def_readonly("model", &Checkpoint::model, "logistic, hinge, squared, softmax, mlp or mf")
      .def_readonly("format", &Checkpoint::format,
                    "the training data's form: libsvm (rows), "
                    "idx (dense rows) or ratings")
      .def_readonly("features", &Checkpoint::features, "input dimension")
      .def_readonly("classes", &Checkpoint::classes, "softmax and mlp: number of classes")
      .def_readonly("hidden", &Checkpoint::hidden, "mlp: hidden layer widths")
      .def_readonly("users", &Checkpoint::users, "mf: rows of the user factors")
      .def_readonly("items", &Checkpoint::items, "mf: rows of the item factors")
      .def_readonly("rank", &Checkpoint::rank, "mf: factorisation rank")
      .def_readonly("labels", &Checkpoint::labels, "the label value of each class index")
      .def_readonly("epoch", &Checkpoint::epoch, "epochs completed")
      .def_readonly("intercept", &Checkpoint::intercept,
                    "linear models: the last weight is a bias, and predictions append the "
                    "constant feature to each row")
      .def(
          "with_intercept",
          [](const Checkpoint& c) {
            Checkpoint with = c;
            with.intercept = true;
            // The same checks as a file's (a linear model only).
            return hogwild::parse_checkpoint(serialize_checkpoint(with), "model");
          },
          "A copy whose last weight is taken as a bias (files written before checkpoints "
          "recorded it)")
      .def_property_readonly(
          "weights", [](const Checkpoint& c) { return to_array(c.weights); },
          "a copy of the parameters, in the model's layout")
      .def(
          "predict_sparse",
          [](const Checkpoint& c, const Array<std::uint64_t>& indptr, const py::array& indices,
             const py::array& values, std::size_t features) {
            const std::size_t rows = indptr.size() > 0 ? indptr.size() - 1 : 0;
            // An intercept model's predict() appends the constant feature itself.
            auto data =
                sparse_data(indptr, indices, values, Array<float>(static_cast<py::ssize_t>(rows)),
                            features, false, "X");
            const py::gil_scoped_release release;
            auto p = hogwild::predict(c, data, false);
            const py::gil_scoped_acquire gil;
            hogwild_python::keep_row_buffers(std::move(data));
            return prediction_dict(p, c);
          },
          py::arg("indptr"), py::arg("indices"), py::arg("values"), py::arg("features"),
          "Predictions for CSR rows (uint64 indptr, int32 or int64 indices, float32 or "
          "float64 values); an "
          "intercept model appends its constant feature to each row, as in training.")
      .def(
          "predict_dense",
          [](const Checkpoint& c, const Array<float>& features) {
            const auto rows = features.ndim() == 2 ? features.shape(0) : 0;
            const auto data = dense_data(features, Array<std::int32_t>(rows), "X");
            const py::gil_scoped_release release;
            auto p = hogwild::predict(c, data, false);
            const py::gil_scoped_acquire gil;
            return prediction_dict(p, c);
          },
          "Predictions for a row-major float32 matrix.")
      .def(
          "predict_ratings",
          [](const Checkpoint& c, const Array<std::uint32_t>& users,
             const Array<std::uint32_t>& items) {
            const auto data = ratings_data(users, items, Array<float>(users.size()), "X");
            return prediction_dict(hogwild::predict(c, data, false), c);
          },
          "Predicted ratings of (user, item) pairs.")
      .def(
          "serialize", [](const Checkpoint& c) { return py::bytes(serialize_checkpoint(c)); },
          "The model in the checkpoint file format (hogwild predict and --resume read it).")
      .def(
          "save",
          [](const Checkpoint& c, const std::filesystem::path& path) {
            hogwild::save_checkpoint(path, c);
          },
          "Writes the model to `path` atomically, as a checkpoint file.")
      .def(py::pickle([](const Checkpoint& c) { return py::bytes(serialize_checkpoint(c)); },
                      [](const py::bytes& bytes) {
                        return hogwild::parse_checkpoint(std::string(bytes), "pickled model");
                      }));
  m.def(
      "load", [](const std::filesystem::path& path) { return hogwild::load_checkpoint(path); },
      "Reads a model (a checkpoint file of `hogwild train --checkpoint` or Model.save).");
}

void bind_training(py::module_& m) {
  py::class_<Control>(m, "Control",
                      "Stops a training run from another thread and tells how far it got.")
      .def(py::init<>())
      .def(
          "stop", [](Control& c) { c.stop = true; },
          "Asks the run to stop: workers stop within a few thousand samples.")
      .def_property_readonly(
          "epochs", [](const Control& c) { return c.epochs.load(); }, "epochs completed so far");
  m.def(
      "train_sparse",
      [](const Array<std::uint64_t>& indptr, const py::array& indices, const py::array& values,
         const Array<float>& labels, std::size_t features, bool intercept,
         const std::optional<py::tuple>& test, const std::vector<std::string>& options,
         Control* control, bool verbose) {
        const auto args = parse_options(options, "libsvm");
        const auto start = std::chrono::steady_clock::now();
        auto train = sparse_data(indptr, indices, values, labels, features, intercept, "X",
                                 storage_for(args, labels.size()));
        std::optional<hogwild::Dataset> test_data;
        if (test) {
          const auto& t = *test;
          test_data = sparse_data(t[0].cast<Array<std::uint64_t>>(), t[1].cast<py::array>(),
                                  t[2].cast<py::array>(), t[3].cast<Array<float>>(), features,
                                  intercept, "X_test");
        }
        auto result = train_on(args, std::move(train), test_data, control, verbose,
                               seconds_since(start), intercept);
        if (test_data) hogwild_python::keep_row_buffers(std::move(*test_data));
        return result;
      },
      py::arg("indptr"), py::arg("indices"), py::arg("values"), py::arg("labels"),
      py::arg("features"), py::arg("intercept"), py::arg("test"), py::arg("options"),
      py::arg("control"), py::arg("verbose"));
  m.def(
      "train_dense",
      [](const Array<float>& features, const Array<std::int32_t>& labels,
         const std::optional<py::tuple>& test, const std::vector<std::string>& options,
         Control* control, bool verbose) {
        const auto args = parse_options(options, "idx");
        const auto start = std::chrono::steady_clock::now();
        auto train = dense_data(features, labels, "X", storage_for(args, labels.size()));
        std::optional<hogwild::DenseDataset> test_data;
        if (test) {
          test_data = dense_data((*test)[0].cast<Array<float>>(),
                                 (*test)[1].cast<Array<std::int32_t>>(), "X_test");
        }
        return train_on(args, std::move(train), test_data, control, verbose, seconds_since(start));
      },
      py::arg("features"), py::arg("labels"), py::arg("test"), py::arg("options"),
      py::arg("control"), py::arg("verbose"));
  m.def(
      "train_ratings",
      [](const Array<std::uint32_t>& users, const Array<std::uint32_t>& items,
         const Array<float>& values, const std::optional<py::tuple>& test,
         const std::vector<std::string>& options, Control* control, bool verbose) {
        const auto args = parse_options(options, "ratings");
        const auto start = std::chrono::steady_clock::now();
        auto train = ratings_data(users, items, values, "X", storage_for(args, values.size()));
        std::optional<hogwild::Ratings> test_data;
        if (test) {
          const auto& t = *test;
          test_data =
              ratings_data(t[0].cast<Array<std::uint32_t>>(), t[1].cast<Array<std::uint32_t>>(),
                           t[2].cast<Array<float>>(), "X_test");
        }
        return train_on(args, std::move(train), test_data, control, verbose, seconds_since(start));
      },
      py::arg("users"), py::arg("items"), py::arg("values"), py::arg("test"), py::arg("options"),
      py::arg("control"), py::arg("verbose"));
  m.def("option_names", &option_names, "The options of `hogwild train`, as --name.");
  m.def("kept_row_bytes", &hogwild_python::kept_row_bytes,
        "Bytes of row storage kept from the last run's copy of the rows for the next.");
  m.def("release_row_buffers", &hogwild_python::release_row_buffers,
        "Frees the kept row storage; returns how many bytes it held.");
  constexpr const char* kNorms =
      "(largest, mean) squared L2 norm of the rows of CSR arrays (the same sums every run).";
  m.def("squared_norms", &squared_norms<std::int32_t, double>, kNorms);
  m.def("squared_norms", &squared_norms<std::int32_t, float>, kNorms);
  m.def("squared_norms", &squared_norms<std::int64_t, double>, kNorms);
  m.def("squared_norms", &squared_norms<std::int64_t, float>, kNorms);
  m.def("squared_norms", &squared_norms<std::uint64_t, float>, kNorms);
}

}  // namespace

PYBIND11_MODULE(_hogwild, m) {
  m.doc() = "hogwild's native part: training and prediction on arrays (see the hogwild package).";
  translate_errors(m);
  bind_model(m);
  bind_training(m);
}
