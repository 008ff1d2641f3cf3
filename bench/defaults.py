#!/usr/bin/env python3
"""The defaults against the best of a grid, on data sets of different shapes.

For every data set: `hogwild train` with nothing but the data, the model and --threads (the
defaults), and a grid of at least 24 configurations (step x minibatch x optimiser x step
schedule, each for a fixed number of epochs with the test metric recorded after every one).
The grid's best is the best test metric of any configuration after any epoch. The defaults and
that configuration (its whole grid run) are then timed side by side, alternated, and the
medians compared: the bar is the defaults within 1 point of the best accuracy (5% of the best
RMSE or loss) in at most 1.5x the best configuration's run; the table also gives the ratio to
the time that configuration took to reach its best epoch.

Writes the table (markdown) to --table and one JSON report per run under --out. Grid runs whose
report exists are not run again; the defaults and the side-by-side runs always are.

  bench/defaults.py [--out DIR] [--table FILE] [--only NAME,...] [--repeats N] [--threads N]

Needs only the standard library and the CLI ($HOGWILD, else build/release/hogwild).
"""
import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

FMNIST = Path("/usr/share/datasets/fashion-mnist")
LINEAR_STEPS = {"sgd": [0.1, 0.316, 1, 3.16]}
LINEAR_SCHEDULES = ["epoch", "inverse-sqrt", "constant"]


@dataclass
class DataSet:
    """One data set of the benchmark: how to make it, how to train on it, what to compare."""

    name: str
    shape: str  # what the row of the table says about it
    gen: list  # argv lists that write the files (skipped when the files exist)
    files: list  # paths the generators write, relative to the output directory
    train: list  # `hogwild train` arguments naming the data and the model
    metric: str  # accuracy (higher is better), rmse or loss (lower is better)
    epochs: int  # the grid's epochs
    steps: dict  # optimiser -> steps
    batches: list
    schedules: list = field(default_factory=lambda: ["epoch", "inverse-sqrt"])
    averages: list = field(default_factory=lambda: [None])  # --average values, None: the default


def sparse(name, shape, args, train_extra=(), metric="accuracy", steps=None, batches=(1, 8),
           schedules=None, epochs=20, generator="sparse", averages=(None,)):
    """LIBSVM rows from `hogwild gen GENERATOR` (sparse, or ctr)."""
    return DataSet(
        name, shape,
        [["gen", generator, *args, "--seed", "1", "--out", f"{name}.svm", "--test-out",
          f"{name}.test.svm"]],
        [f"{name}.svm", f"{name}.test.svm"],
        ["--train", f"{name}.svm", "--test", f"{name}.test.svm", *train_extra], metric, epochs,
        steps or LINEAR_STEPS, list(batches), schedules or LINEAR_SCHEDULES, list(averages))


def ratings(name, shape, args):
    return DataSet(
        name, shape,
        [["gen", "ratings", *args, "--rank", "10", "--seed", "1", "--test-fraction", "0.1",
          "--out", f"{name}.txt", "--test-out", f"{name}.test.txt"]],
        [f"{name}.txt", f"{name}.test.txt"],
        ["--format", "ratings", "--train", f"{name}.txt", "--test", f"{name}.test.txt"], "rmse",
        100, {"sgd": [0.01, 0.0316, 0.1], "adam": [0.001, 0.00316, 0.01]}, [1, 8],
        ["epoch", "inverse-sqrt", "constant"])


def fashion(model, batches, steps, epochs):
    idx = ["--format", "idx", "--train", str(FMNIST / "train-images-idx3-ubyte.gz"), "--test",
           str(FMNIST / "t10k-images-idx3-ubyte.gz"), "--model", model]
    return DataSet(f"fmnist-{model}", f"Fashion-MNIST (60k x 784 dense), {model}", [], [], idx,
                   "accuracy", epochs, steps, batches)


TEXT = ["--rows", "40000", "--test-rows", "10000", "--features", "100000", "--nnz-per-row", "40",
        "--noise", "0"]
BINARY = ["--rows", "50000", "--test-rows", "10000", "--features", "20000", "--nnz-per-row", "75"]
SOFTMAX_STEPS = {"sgd": [0.0316, 0.1, 0.316, 1], "adam": [0.001, 0.00316, 0.01]}

DATASETS = [
    fashion("softmax", [1, 16], SOFTMAX_STEPS, 20),
    fashion("mlp", [8, 32], {"sgd": [0.0316, 0.1, 0.316, 1], "adam": [0.000316, 0.001, 0.00316]},
            12),
    sparse("zipf0", "sparse binary, uniform features (Zipf 0), 50k x 20k, 75 nnz/row",
           [*BINARY, "--zipf", "0"]),
    sparse("zipf1", "sparse binary, Zipf 1 (RCV1-like), 50k x 20k, 75 nnz/row",
           [*BINARY, "--zipf", "1"]),
    sparse("zipf1.5", "sparse binary, Zipf 1.5, 50k x 20k, 75 nnz/row", [*BINARY, "--zipf", "1.5"]),
    sparse("counts", "sparse binary, Zipf 1, unnormalised term counts, 50k x 20k",
           [*BINARY, "--zipf", "1", "--counts", "--no-normalize"]),
    sparse("text20", "text-like, 20 classes, 40k x 100k, 40 nnz/row, L2-normalised",
           [*TEXT, "--classes", "20"], ["--model", "softmax"], steps=SOFTMAX_STEPS,
           batches=(1, 16), schedules=["epoch", "inverse-sqrt"]),
    sparse("text200", "text-like, 200 classes, 40k x 100k, 40 nnz/row, L2-normalised",
           [*TEXT, "--classes", "200"], ["--model", "softmax"], steps=SOFTMAX_STEPS,
           batches=(1, 16), schedules=["epoch", "inverse-sqrt"], epochs=15),
    ratings("ratings-sparse", "ratings 5000 x 2000, density 0.01, noise 0.1, rank 10",
            ["--users", "5000", "--items", "2000", "--density", "0.01", "--noise", "0.1"]),
    ratings("ratings-dense", "ratings 2000 x 1000, density 0.2, noise 1, rank 10",
            ["--users", "2000", "--items", "1000", "--density", "0.2", "--noise", "1"]),
    sparse("regression", "least squares, Zipf 1, 50k x 20k, noise deviation 0.5",
           [*BINARY, "--zipf", "1", "--regression", "--noise", "0.5"], ["--model", "squared"],
           metric="loss", averages=("off", "epochs")),
    # Judged on the test log loss: with 5% clicks, predicting no click everywhere is already
    # 95% accurate.
    sparse("ctr", "CTR-like, 200k x 4M hashed, 26 one-hot fields, 5% clicks, logistic",
           ["--rows", "200000", "--test-rows", "50000"], metric="loss",
           steps={"sgd": [0.01, 0.0316, 0.1, 0.316]}, generator="ctr"),
]

HIGHER_IS_BETTER = {"accuracy": True, "rmse": False, "loss": False}
REPORT_KEY = {"accuracy": "test_accuracy", "rmse": "test_rmse", "loss": "test_loss"}


def grid(ds):
    """Every configuration of the grid as (label, arguments)."""
    points = []
    for optimizer, steps in ds.steps.items():
        for step, batch, schedule, average in itertools.product(steps, ds.batches, ds.schedules,
                                                                ds.averages):
            args = ["--step", str(step), "--batch", str(batch), "--step-schedule", schedule,
                    "--decay", "0.9", "--optimizer", optimizer, "--epochs", str(ds.epochs),
                    "--patience", "0"]
            label = f"{optimizer} step {step} batch {batch} {schedule}"
            if average:
                args += ["--average", average]
                label += f" average {average}"
            points.append((label, args))
    return points


def run(hogwild, ds, args, report, threads):
    cmd = [hogwild, "train", *ds.train, *args, "--threads", str(threads), "--quiet", "--json",
           str(report)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode not in (0, 3):
        sys.exit(f"defaults.py: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    if done.returncode == 3:
        return None  # diverged: the grid point has no result
    return json.loads(report.read_text())


def metric_of(epoch, ds):
    return epoch.get(REPORT_KEY[ds.metric])


def better(a, b, ds):
    if b is None:
        return True
    return a > b if HIGHER_IS_BETTER[ds.metric] else a < b


def best_of_grid(hogwild, ds, out, threads):
    """The best (configuration, epoch count) of the grid and the fastest within the bar."""
    best = None
    results = []
    for label, args in grid(ds):
        key = label.replace(" ", "_")
        report_path = out / ds.name / f"grid_{key}.json"
        if report_path.exists():
            report = json.loads(report_path.read_text())
        else:
            report = run(hogwild, ds, args, report_path, threads)
            if report is None:
                report_path.write_text("null")
        if report is None:
            results.append((label, None))
            continue
        epochs = [e for e in report["epochs"] if e["epoch"] > 0 and metric_of(e, ds) is not None]
        results.append((label, epochs))
        for e in epochs:
            value = metric_of(e, ds)
            if best is None or better(value, best["value"], ds):
                best = {"label": label, "args": args, "epoch": e["epoch"], "value": value,
                        "seconds": e["seconds"]}
    return best, results


def within_bar(value, best, ds):
    """True when `value` meets the issue's bar against the grid's best `best`."""
    if ds.metric == "accuracy":
        return value >= best - 0.01
    return value <= best * 1.05


def side_by_side(hogwild, ds, best, out, threads, repeats, candidate):
    """Defaults and the best configuration (its whole grid run) alternated, `repeats` times."""
    runs = {"defaults": [], "best": []}
    for r in range(repeats):
        for who in ("defaults", "best"):
            args = candidate if who == "defaults" else best["args"]
            report = run(hogwild, ds, args, out / ds.name / f"{who}_{r}.json", threads)
            if report is None:
                sys.exit(f"defaults.py: {ds.name}: the {who} run diverged")
            runs[who].append(report)
    worst = min if HIGHER_IS_BETTER[ds.metric] else max
    d = runs["defaults"]
    values = [metric_of(r["epochs"][-1], ds) for r in d]
    defaults = {"seconds": statistics.median(r["train_seconds"] for r in d),
                "value": statistics.median(values), "worst": worst(values),
                "epochs": [len(r["epochs"]) - 1 for r in d], "stopped": d[0].get("stopped"),
                "step": d[0]["config"].get("step")}
    b = runs["best"]
    at_best = [r["epochs"][best["epoch"]] for r in b]
    best_run = {"seconds": statistics.median(r["train_seconds"] for r in b),
                "to_best": statistics.median(e["elapsed"] for e in at_best),
                "value": statistics.median(metric_of(e, ds) for e in at_best)}
    return defaults, best_run


def fmt_value(value, ds):
    return f"{100 * value:.2f}%" if ds.metric == "accuracy" else f"{value:.4f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="data/generated/defaults", type=Path)
    parser.add_argument("--table", default="docs/defaults-table.md", type=Path)
    parser.add_argument("--only", default="", help="comma-separated data set names")
    parser.add_argument("--repeats", default=3, type=int, help="side-by-side runs of each")
    parser.add_argument("--threads", default=2, type=int)
    parser.add_argument("--candidate", default="",
                        help="options added to the defaults' runs, to try other defaults")
    a = parser.parse_args()
    hogwild = str(Path(os.environ.get("HOGWILD", "build/release/hogwild")).resolve())
    chosen = [d for d in DATASETS if not a.only or d.name in a.only.split(",")]
    rows = []
    for ds in chosen:
        (a.out / ds.name).mkdir(parents=True, exist_ok=True)
        for argv in ds.gen:
            if not all((a.out / f).exists() for f in ds.files):
                subprocess.run([hogwild, *argv], cwd=a.out, check=True, capture_output=True)
        ds.train = [str(a.out / x) if x in ds.files else x for x in ds.train]
        best, results = best_of_grid(hogwild, ds, a.out, a.threads)
        configs = len(results)
        diverged = sum(1 for _, e in results if e is None)
        defaults, best_run = side_by_side(hogwild, ds, best, a.out, a.threads, a.repeats,
                                          a.candidate.split())
        ratio = defaults["seconds"] / best_run["seconds"]
        strict = defaults["seconds"] / best_run["to_best"]
        ok = within_bar(defaults["value"], best["value"], ds) and ratio <= 1.5
        rows.append((ds, best, best_run, defaults, ratio, strict, ok, configs, diverged))
        print(f"{ds.name}: best {best['label']} @{best['epoch']} {fmt_value(best['value'], ds)};"
              f" defaults {fmt_value(defaults['value'], ds)} in {defaults['seconds']:.2f} s,"
              f" epochs {defaults['epochs']}; time / best's run {ratio:.2f}, / best's time to"
              f" its best epoch {strict:.2f}: {'met' if ok else 'MISSED'}", flush=True)
    write_table(a, rows)


def write_table(a, rows):
    lines = [
        "| data set | test metric | grid: configs (diverged), epochs | best configuration @ its "
        "best epoch | best | defaults: median (worst of 3) | defaults: step, epochs, stopped | "
        "time: defaults / best's run (/ to its best epoch) | bar met |",
        "|---|---|---|---|---|---|---|---|---|"]
    for ds, best, best_run, d, ratio, strict, ok, configs, diverged in rows:
        lines.append(
            f"| {ds.shape} | {ds.metric} | {configs} ({diverged}), {ds.epochs} | {best['label']} "
            f"@ {best['epoch']} | {fmt_value(best['value'], ds)} | {fmt_value(d['value'], ds)} "
            f"({fmt_value(d['worst'], ds)}) | {d['step']:.3g}, "
            f"{'/'.join(map(str, d['epochs']))}, {d['stopped']} | {d['seconds']:.2f} s / "
            f"{best_run['seconds']:.2f} s = {ratio:.2f} ({strict:.2f}) | "
            f"{'yes' if ok else '**no**'} |")
    a.table.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
