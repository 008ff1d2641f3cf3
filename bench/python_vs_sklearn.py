#!/usr/bin/python3
"""hogwild's scikit-learn estimator against scikit-learn's own models, in one Python process,
and hogwild's Python path against its command line on the same data.

Data: the demo's RCV1-like set (gen sparse, 100k rows, 47,236 features, 75 nonzeros per row)
and Fashion-MNIST (60k images; pixels scaled to [0, 1]).

Part 1, estimators as their users run them (defaults, every core where the estimator has a
switch for it): HogwildClassifier(); SGDClassifier() (log loss; n_jobs=-1 runs its one-vs-rest
classes in parallel); LogisticRegression() (lbfgs; liblinear's is slower on these). Each fit is
timed on the wall clock, --reps rounds (6 or a multiple: round r fits the contenders in the r-th
of their six orders, so each follows each other as often), median and range reported.

Part 2, the Python path's overhead: hogwild.train(X, y, **options) against `hogwild train` with
the same options on the files the arrays were read from, alternated. Python: the call's wall time
less its conversion_seconds (putting the arrays in the library's layouts); command line: the
process's wall time less that of `hogwild info` on the same files (reading them). What remains
on both sides is training, evaluation after each epoch, and set-up.

Part 3, where a default HogwildClassifier fit on the RCV1-like data spends its time, and the fit
with one epoch.

  /usr/bin/python3 bench/python_vs_sklearn.py --hogwild build/release/hogwild [--reps 6]
(with PYTHONPATH=build/release/python). Prints markdown tables. scikit-learn's users of the
wheels have OpenBLAS: install libopenblas0-serial and prefix the command with
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-serial to run the peers as they do.
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier

import hogwild

from fashion_mnist import DATA as FASHION, read_idx


def fashion():
    def images(name):
        return read_idx(f"{FASHION}/{name}-images-idx3-ubyte.gz").reshape(-1, 784) / 255.0

    def labels(name):
        return read_idx(f"{FASHION}/{name}-labels-idx1-ubyte.gz").astype(np.int64)

    return images("train"), labels("train"), images("t10k"), labels("t10k")


def rcv1like(cli, root):
    train, test = f"{root}/rcv1like.train.svm", f"{root}/rcv1like.test.svm"
    if not os.path.exists(test):
        subprocess.run([cli, "gen", "sparse", "--rows", "100000", "--features", "47236",
                        "--nnz-per-row", "75", "--zipf", "1", "--noise", "0.05", "--seed", "1",
                        "--out", train, "--test-rows", "20000", "--test-out", test],
                       check=True, capture_output=True)
    X, y = load_svmlight_file(train)
    X_test, y_test = load_svmlight_file(test, n_features=X.shape[1])
    return (X, y, X_test, y_test), (train, test)


def timed(fit):
    start = time.perf_counter()
    model = fit()
    return time.perf_counter() - start, model


def estimators(data, reps):
    X, y, X_test, y_test = data
    contenders = {
        "hogwild HogwildClassifier()": lambda: hogwild.HogwildClassifier(),
        "scikit-learn SGDClassifier(n_jobs=-1)": lambda: SGDClassifier(n_jobs=-1),
        "scikit-learn LogisticRegression()": lambda: LogisticRegression(),
    }
    seconds = {name: [] for name in contenders}
    accuracy = {}
    # Round r fits the contenders in the r-th of their orders, so that over six rounds each
    # follows each of the others as often: a fit right after LogisticRegression's runs slower
    # than one after another fit (docs/python.md), and a fixed order would charge that to one.
    orders = list(itertools.permutations(contenders))
    for round_ in range(reps):
        for name in orders[round_ % len(orders)]:
            make = contenders[name]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                s, model = timed(lambda: make().fit(X, y))
            seconds[name].append(s)
            accuracy[name] = model.score(X_test, y_test)
    base = statistics.median(seconds["hogwild HogwildClassifier()"])
    rows = []
    for name in contenders:
        median = statistics.median(seconds[name])
        rows.append(f"| {name} | {median:.2f} | {min(seconds[name]):.2f}-"
                    f"{max(seconds[name]):.2f} | {median / base:.1f}x | "
                    f"{100 * accuracy[name]:.2f}% |")
    return rows


def overhead(cli, data, files, options, reps):
    X, y, X_test, y_test = data
    args = []
    for key, value in options.items():
        args += ["--" + key.replace("_", "-"), str(value)]
    python, command, read, train_seconds = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(reps):
            s, (_, report) = timed(lambda: hogwild.train(X, y, X_test=X_test, y_test=y_test,
                                                         **options))
            python.append(s - report["conversion_seconds"])
            conversion = report["conversion_seconds"]
            train_seconds.append(report["train_seconds"])
            s, _ = timed(lambda: subprocess.run(
                [cli, "train", "--train", files[0], "--test", files[1], "--quiet",
                 "--json", f"{tmp}/r.json", *args], check=True, capture_output=True))
            r, _ = timed(lambda: [subprocess.run([cli, "info", f], check=True,
                                                 capture_output=True) for f in files])
            command.append(s - r)
            read.append(r)
            cli_report = json.load(open(f"{tmp}/r.json"))
    p, c = statistics.median(python), statistics.median(command)
    return (f"| {statistics.median(train_seconds):.3f} | {cli_report['train_seconds']:.3f} | "
            f"{p:.3f} | {c:.3f} | {100 * (p - c) / c:+.1f}% | {conversion:.3f} | "
            f"{statistics.median(read):.3f} |")


def breakdown(data, reps):
    """Where a default HogwildClassifier fit spends its time, and the fit with one epoch."""
    from hogwild import estimators
    X, y, X_test, y_test = data
    parts = {k: [] for k in ("scikit-learn's input validation and the class labels",
                             "the default step (row norms)", "copying the rows (conversion_seconds)",
                             "training (train_seconds)",
                             "the training loss after each epoch (10,000 examples), set-up")}
    one_epoch, accuracy = [], 0.0
    for _ in range(reps):
        clf = hogwild.HogwildClassifier()
        start = time.perf_counter()
        X2, y2 = clf._validated(X, y)  # as HogwildClassifier.fit checks and numbers the classes
        _, labels = estimators._classes_of(y2)
        validated = time.perf_counter()
        step = estimators._default_step(X2, "logistic", None, True)
        stepped = time.perf_counter()
        _, report = hogwild.train(X2, labels, intercept=True, step=step,
                                  train_loss_sample=estimators._TRAIN_LOSS_SAMPLE)
        total = time.perf_counter() - stepped
        values = (validated - start, stepped - validated, report["conversion_seconds"],
                  report["train_seconds"],
                  total - report["conversion_seconds"] - report["train_seconds"])
        for key, value in zip(parts, values):
            parts[key].append(value)
        s, model = timed(lambda: hogwild.HogwildClassifier(epochs=1).fit(X, y))
        one_epoch.append(s)
        accuracy = model.score(X_test, y_test)
    rows = [f"| {key} | {statistics.median(v):.3f} |" for key, v in parts.items()]
    rows.append(f"| HogwildClassifier(epochs=1): whole fit, test accuracy {100 * accuracy:.2f}% | "
                f"{statistics.median(one_epoch):.3f} |")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hogwild", default="build/release/hogwild", help="the CLI")
    parser.add_argument("--reps", type=int, default=6,
                        help="rounds, each contender once (6: every order once)")
    parser.add_argument("--data", default="data/generated", help="where generated data goes")
    a = parser.parse_args()
    os.makedirs(a.data, exist_ok=True)
    sparse, files = rcv1like(a.hogwild, a.data)
    dense = fashion()
    print(f"cores: {os.cpu_count()}, reps: {a.reps}\n")
    print("| data | estimator | fit seconds (median) | range | vs hogwild | test accuracy |")
    print("|---|---|---|---|---|---|")
    for name, data in (("RCV1-like", sparse), ("Fashion-MNIST", dense)):
        for row in estimators(data, a.reps):
            print(f"| {name} {row}")
        sys.stdout.flush()
    print("\n| options | train_seconds Python | train_seconds CLI | Python call less "
          "conversion | CLI less reading | overhead | conversion | reading |")
    print("|---|---|---|---|---|---|---|---|")
    for options in (dict(epochs=10), dict(epochs=10, policy="serial")):
        label = " ".join(f"{k}={v}" for k, v in options.items())
        print(f"| {label} " + overhead(a.hogwild, sparse, files, options, a.reps))
        sys.stdout.flush()
    print("\n| RCV1-like, a default fit's parts (medians) | seconds |\n|---|---|")
    for row in breakdown(sparse, a.reps):
        print(row)


if __name__ == "__main__":
    main()
