#!/usr/bin/python3
"""One hogwild module's HogwildClassifier fit on the RCV1-like rows, in parts: run it once per
build with that build's module on PYTHONPATH, alternating the builds, to compare them.

  fit:       6 default fits (the first left out as the process's warm-up); medians of the
             whole fit, conversion_seconds, train_seconds and the rest.
  copy:      7 calls of hogwild.train(X, y, epochs=1); median conversion_seconds (the copy of
             the rows and its checks), with the default order and with order="rows" (no
             permutation into the command line's storage order).
  first:     the first and the second fit of a fresh process.
  alternate: 4 rounds of HogwildClassifier, SGDClassifier(n_jobs=-1) and LogisticRegression
             fitted in turn; each hogwild fit's parts (the first round is the warm-up).
  after:     4 rounds in which a hogwild fit follows, in turn, nothing, SGDClassifier(n_jobs=-1),
             SGDClassifier() and LogisticRegression(); medians of the parts after each.

The rows: data/generated/rcv1like.train.svm (bench/python_vs_sklearn.py writes it), read with
load_svmlight_file (float64 CSR). E.g., two builds alternated five times:

  for i in 1 2 3 4 5; do for b in /tmp/old build/release; do
    PYTHONPATH=$b/python /usr/bin/python3 bench/python_fit_parts.py fit --label $b; done; done
"""
import argparse
import statistics
import time
import warnings

import numpy as np
from sklearn.datasets import load_svmlight_file

import hogwild


def parts(clf, seconds):
    r = clf.report_
    return seconds, r["conversion_seconds"], r["train_seconds"], \
        seconds - r["conversion_seconds"] - r["train_seconds"]


def fitted(make, X, y):
    clf = make()
    start = time.perf_counter()
    clf.fit(X, y)
    return clf, time.perf_counter() - start


def line(label, values):
    names = ("fit", "conversion", "train", "rest")
    return label + " " + " ".join(f"{n} {v:.3f}" for n, v in zip(names, values))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("fit", "copy", "first", "alternate", "after"))
    parser.add_argument("--label", default="", help="printed first on each line")
    parser.add_argument("--data", default="data/generated/rcv1like.train.svm")
    args = parser.parse_args()
    X, y = load_svmlight_file(args.data)
    if args.mode == "fit":
        runs = [parts(*fitted(hogwild.HogwildClassifier, X, y)) for _ in range(6)][1:]
        print(line(args.label, [statistics.median(v) for v in zip(*runs)]))
    elif args.mode == "copy":
        for order in ("blocks", "rows"):
            copies = [hogwild.train(X, y, epochs=1, train_loss_sample=1000,
                                    order=order)[1]["conversion_seconds"] for _ in range(7)]
            print(f"{args.label} order {order} conversion {statistics.median(copies):.4f}")
    elif args.mode == "first":
        for which in ("first", "second"):
            print(line(f"{args.label} {which}", parts(*fitted(hogwild.HogwildClassifier, X, y))))
    elif args.mode == "after":
        from sklearn.linear_model import LogisticRegression, SGDClassifier
        warnings.simplefilter("ignore")
        fitted(hogwild.HogwildClassifier, X, y)  # the process's first fit
        peers = {"nothing": None, "SGDClassifier(n_jobs=-1)": lambda: SGDClassifier(n_jobs=-1),
                 "SGDClassifier()": SGDClassifier, "LogisticRegression()": LogisticRegression}
        runs = {name: [] for name in peers}
        for _ in range(4):
            for name, make in peers.items():
                if make is not None:
                    make().fit(X, y)
                runs[name].append(parts(*fitted(hogwild.HogwildClassifier, X, y)))
        for name, values in runs.items():
            print(line(f"{args.label} after {name}", [statistics.median(v) for v in zip(*values)]))
    else:
        from sklearn.linear_model import LogisticRegression, SGDClassifier
        warnings.simplefilter("ignore")
        for round_ in range(4):
            print(line(f"{args.label} round {round_}",
                       parts(*fitted(hogwild.HogwildClassifier, X, y))))
            SGDClassifier(n_jobs=-1).fit(X, y)
            LogisticRegression().fit(X, y)


if __name__ == "__main__":
    main()
