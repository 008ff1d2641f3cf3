#!/usr/bin/env python3
"""Fewer bytes, side by side in one run: the training rows (--data-precision f32 | f16 | u8)
or the shared weights (--compare weights: --weights f32 | bf16).

For the RCV1-like bench data and every linear data set of bench/defaults.py (generated there,
under --out, when missing), and for the weights two wider models (text1m: 1M features, Zipf 1;
wide8m: 8M features, uniform): `hogwild train` at the defaults (or --serial: one serial thread)
with each precision, the precisions alternated --repeats times; the table gives each one's
training rows (index bits, values, bytes per nonzero), the median samples/s and its ratio to
f32's, and the median test metric beside f32's. u8 refuses data with negative values.

  bench/precision.sh [--compare data|weights] [--serial] [--repeats N] [--threads N]
                     [--only NAME,...] [--table FILE]

Needs only the standard library and the CLI ($HOGWILD, else build/release/hogwild).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import defaults  # noqa: E402  (the data sets and how to make them)

PRECISIONS = {"data": ["f32", "f16", "u8"], "weights": ["f32", "bf16"]}
OPTION = {"data": "--data-precision", "weights": "--weights"}
# Models too wide for the caches, where bf16 weights are meant to pay: (name, shape, gen sparse
# arguments).
WIDE = [("text1m", "text-like, 100k x 1M, 75 nnz/row, Zipf 1", ["--features", "1048576"]),
        ("wide8m", "uniform, 200k x 8M, 75 nnz/row, Zipf 0",
         ["--rows", "200000", "--features", "8388608", "--zipf", "0"])]


def linear_data_sets(rcv1, out, hogwild, wide):
    """(name, shape, train arguments, metric) of every data set measured."""
    sets = [("rcv1like", "RCV1-like bench data, 100k x 47k, 75 nnz/row, Zipf 1",
             ["--train", f"{rcv1}.train.svm", "--test", f"{rcv1}.test.svm"], "accuracy")]
    for name, shape, gen in WIDE if wide else []:
        files = [out / name / f"{name}.svm", out / name / f"{name}.test.svm"]
        if not all(f.exists() for f in files):
            files[0].parent.mkdir(parents=True, exist_ok=True)
            subprocess.run([hogwild, "gen", "sparse", *gen, "--test-rows", "20000", "--out",
                            str(files[0]), "--test-out", str(files[1])], check=True,
                           capture_output=True)
        sets.append((name, shape, ["--train", str(files[0]), "--test", str(files[1])],
                     "accuracy"))
    for ds in defaults.DATASETS:
        if "--format" in ds.train or "softmax" in ds.train:
            continue  # --data-precision is for the linear models (IDX pixels are bytes already)
        (out / ds.name).mkdir(parents=True, exist_ok=True)
        if not all((out / f).exists() for f in ds.files):
            for argv in ds.gen:
                subprocess.run([hogwild, *argv], cwd=out, check=True, capture_output=True)
        train = [str(out / x) if x in ds.files else x for x in ds.train]
        sets.append((ds.name, ds.shape, train, ds.metric))
    return sets


def run(hogwild, train, option, precision, options, report):
    cmd = [hogwild, "train", *train, option, precision, *options, "--quiet",
           "--json", str(report)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode == 2 and precision == "u8":
        return {"refused": done.stderr.strip().splitlines()[-1]}
    if done.returncode != 0:
        sys.exit(f"precision.py: {' '.join(cmd)} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(report.read_text())


def metric(report, kind):
    final = report["epochs"][-1]
    return final["test_accuracy"] if kind == "accuracy" else final["test_loss"]


def fmt_metric(value, kind):
    return f"{100 * value:.2f}%" if kind == "accuracy" else f"{value:.4f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rcv1", required=True, help="path prefix of the RCV1-like bench data")
    parser.add_argument("--out", default="data/generated/defaults", type=Path)
    parser.add_argument("--table", type=Path, help="also write the table (markdown) here")
    parser.add_argument("--only", default="", help="comma-separated data set names")
    parser.add_argument("--repeats", default=5, type=int)
    parser.add_argument("--threads", default=2, type=int)
    parser.add_argument("--serial", action="store_true", help="one serial thread")
    parser.add_argument("--compare", default="data", choices=["data", "weights"],
                        help="--data-precision (data) or --weights (weights)")
    a = parser.parse_args()
    precisions, option = PRECISIONS[a.compare], OPTION[a.compare]
    hogwild = str(Path(os.environ.get("HOGWILD", "build/release/hogwild")).resolve())
    options = ["--threads", "1", "--policy", "serial"] if a.serial else ["--threads",
                                                                          str(a.threads)]
    scratch = a.out / "precision"
    scratch.mkdir(parents=True, exist_ok=True)
    lines = [f"`hogwild train` at the defaults with {' '.join(options)}, {option} compared, "
             f"medians of "
             f"{a.repeats} alternated runs", "",
             "| data set | precision | index bits | values | bytes / nonzero | samples/s | vs f32 "
             "| test metric | f32's |", "|---|---|---|---|---|---|---|---|---|"]
    for name, shape, train, kind in linear_data_sets(a.rcv1, a.out, hogwild,
                                                     a.compare == "weights"):
        if a.only and name not in a.only.split(","):
            continue
        runs = {p: [] for p in precisions}
        for r in range(a.repeats):
            order = precisions if r % 2 == 0 else precisions[::-1]
            for p in order:
                runs[p].append(run(hogwild, train, option, p, options,
                                   scratch / f"{name}_{p}_{r}.json"))
        f32_speed = statistics.median(x["samples_per_second"] for x in runs["f32"])
        f32_metric = statistics.median(metric(x, kind) for x in runs["f32"])
        for p in precisions:
            if "refused" in runs[p][0]:
                lines.append(f"| {name} | {p} | | | | refused: {runs[p][0]['refused']} | | | |")
                continue
            layout = runs[p][0]["training_rows"]
            speed = statistics.median(x["samples_per_second"] for x in runs[p])
            value = statistics.median(metric(x, kind) for x in runs[p])
            lines.append(
                f"| {name} | {p} | {layout['index_bits']} | {layout['values']} | "
                f"{layout['bytes_per_nonzero']} | {speed / 1e6:.2f}M | {speed / f32_speed:.2f} | "
                f"{fmt_metric(value, kind)} | {fmt_metric(f32_metric, kind)} |")
        print(*lines[-len(precisions):], sep="\n", flush=True)
    table = "\n".join(lines) + "\n"
    print(table)
    if a.table:
        a.table.write_text(table)


if __name__ == "__main__":
    main()
