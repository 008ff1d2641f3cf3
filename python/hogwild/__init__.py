"""hogwild: lock-free parallel SGD (Hogwild!) from Python.

    model, report = hogwild.train(X, y, model="logistic", epochs=10, threads=0)
    model.predict(X_test)

`train` takes numpy arrays and scipy.sparse matrices and the options of `hogwild train` as
keyword arguments (`--step-schedule` is `step_schedule=`); HogwildClassifier and HogwildRegressor
are scikit-learn estimators. Training releases the GIL; Ctrl-C stops it cleanly and raises
KeyboardInterrupt.
"""

import json
import time

import numpy as np

from . import _arrays
from . import _hogwild
from ._hogwild import Control, DivergenceError
from .model import Model, load

__all__ = ["train", "load", "Model", "Control", "DivergenceError", "HogwildClassifier",
           "HogwildRegressor", "options", "kept_memory", "release_memory"]

# Options of `hogwild train` that name files or control its output: in Python the data are
# arguments, the model is returned (Model.save writes it) and so is the report. Training across
# processes (sync, sync_every, sync_bound) is the command line's, under mpirun.
_COMMAND_LINE_ONLY = {"train", "test", "train_labels", "test_labels", "format", "limit", "json",
                      "csv", "checkpoint", "resume", "quiet", "zero_based", "compare_serial",
                      "sync", "sync_every", "sync_bound"}
_LINEAR = {"logistic", "hinge", "squared"}


def options():
    """The keyword options `train` takes: those of `hogwild train` (see its --help)."""
    names = (name[2:].replace("-", "_") for name in _hogwild.option_names())
    return sorted(name for name in names if name not in _COMMAND_LINE_ONLY)


def kept_memory():
    """Bytes of storage kept from the last two copies of sparse rows (a training copy's and a
    prediction's or test set's) for the next ones to write into, rather than returned to the
    system: memory taken back from the system costs page faults, many times more on virtual
    machines that hand idle free memory back to their host (docs/python.md). At most 512 MiB is
    kept in all; `release_memory` frees it."""
    return _hogwild.kept_row_bytes()


def release_memory():
    """Frees the storage `kept_memory` counts; returns how many bytes it held."""
    return _hogwild.release_row_buffers()


def _arguments(options):
    """Keyword options as `hogwild train` arguments: step=0.1 -> --step 0.1; lists joined by
    commas (hidden=[256, 128] -> --hidden 256,128); True -> the flag; None and False omitted."""
    known = set(globals()["options"]())
    args = []
    for key, value in options.items():
        if key not in known:
            raise ValueError(f"{key}: expected one of the options of hogwild train "
                             f"({', '.join(sorted(known))}), found '{key}'")
        if value is None or value is False:
            continue
        name = "--" + key.replace("_", "-")
        if value is True:
            args.append(name)
        elif isinstance(value, (list, tuple)):
            args += [name, ",".join(str(v) for v in value)]
        else:
            args += [name, str(value)]
    return args


def train(X, y, *, X_test=None, y_test=None, intercept=False, control=None, verbose=False,
          **options):
    """Trains a model on X (rows) and y (labels or values); returns (Model, report dict).

    X: a numpy array or scipy.sparse matrix, one example per row. Linear models (logistic, the
    default; hinge; squared) and softmax on sparse X train on rows as LIBSVM data does; softmax
    and mlp on a dense X train on dense rows, with integer class labels. mf takes X as (user,
    item) pairs, a matrix of two integer columns, and y the ratings.
    X_test, y_test: evaluated after every epoch (the report's test loss and accuracy).
    intercept: linear models; every row gets one more feature of value 1 (a bias, regularised
    as the other weights are, as LIBLINEAR's -B 1 does), its weight the model's last, and the
    model's predictions append it too.
    control: a hogwild.Control, to stop the run from another thread or follow its epochs.
    verbose: print one line per epoch on standard error.
    options: those of `hogwild train`, by name (`hogwild.options()` lists them).

    The report is the CLI's JSON report as a dict, plus `conversion_seconds`: the time spent
    putting the arrays in the library's layouts, which its training time does not include.
    Raises ValueError for bad data or options (the CLI's messages), DivergenceError when the loss
    diverges, KeyboardInterrupt on Ctrl-C once the workers have stopped.
    """
    start = time.perf_counter()
    if (X_test is None) != (y_test is None):
        raise ValueError("X_test: expected X_test and y_test together, found only "
                         + ("y_test" if X_test is None else "X_test"))
    model = options.get("model", "logistic")
    args = _arguments(options)
    test = None
    if intercept and model not in _LINEAR:
        raise ValueError(f"intercept: expected a linear model ({', '.join(sorted(_LINEAR))}), "
                         f"found {model}, which has biases of its own")
    if model == "mf":
        users, items = _arrays.pairs(X)
        values = _arrays.labels_of(y, users.shape[0], np.float32)
        if X_test is not None:
            test_users, test_items = _arrays.pairs(X_test, "X_test")
            if test_users.shape[0] == 0:
                raise ValueError("X_test: expected at least one test example, found none")
            test = (test_users, test_items,
                    _arrays.labels_of(y_test, test_users.shape[0], np.float32, "y_test"))
        run = lambda: _hogwild.train_ratings(users, items, values, test, args, control, verbose)
    else:
        X = _arrays.matrix(X)
        rows = model in _LINEAR or (model == "softmax" and _arrays.is_sparse(X))
        if rows:
            parts = _arrays.csr_parts(X)
            labels = _arrays.labels_of(y, X.shape[0], np.float32)
            if model in ("logistic", "hinge"):
                _check_binary(labels)
            if X_test is not None:
                X_test = _arrays.matrix(X_test, "X_test")
                _check_width(X_test, X)
                test = (*_arrays.csr_parts(X_test),
                        _arrays.labels_of(y_test, X_test.shape[0], np.float32, "y_test"))
            run = lambda: _hogwild.train_sparse(*parts, labels, X.shape[1], intercept, test, args,
                                                control, verbose)
        else:
            features = _arrays.dense_rows(X)
            labels = _arrays.labels_of(y, X.shape[0], np.int32)
            if X_test is not None:
                X_test = _arrays.matrix(X_test, "X_test")
                _check_width(X_test, X)
                test = (_arrays.dense_rows(X_test),
                        _arrays.labels_of(y_test, X_test.shape[0], np.int32, "y_test"))
            run = lambda: _hogwild.train_dense(features, labels, test, args, control, verbose)
    converted = time.perf_counter() - start
    native, report_json, native_conversion = run()
    report = json.loads(report_json)
    report["conversion_seconds"] = converted + native_conversion
    return Model(native), report


def _check_binary(y):
    """A binary model's labels take two values (the library checks too, but in storage order,
    where row numbers would not be the caller's)."""
    # Two linear passes: np.unique would sort the labels.
    if y.size == 0:
        return
    other = y != y[0]
    if not other.any():
        return
    b = int(np.argmax(other))
    third = other & (y != y[b])
    if third.any():
        c = int(np.argmax(third))
        raise ValueError(f"y: expected two label classes for a binary model, found a third, "
                         f"{y[c]:g}, in row {c} (after {min(y[0], y[b]):g} and "
                         f"{max(y[0], y[b]):g})")


def _check_width(X_test, X):
    """X_test fits X's model and holds examples: an empty one would report a test loss of 0."""
    if X_test.shape[0] == 0:
        raise ValueError("X_test: expected at least one test example, found none")
    if X_test.shape[1] != X.shape[1]:
        raise ValueError(f"X_test: expected {X.shape[1]} features (as X), found "
                         f"{X_test.shape[1]}")


from .estimators import HogwildClassifier, HogwildRegressor  # noqa: E402
