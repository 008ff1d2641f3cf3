#!/usr/bin/env python3
"""Fixed-size against fixed-time minibatches, with and without an injected straggler.

Runs `hogwild train` on the same data with the same sample budget (epochs) for
  fixed:B            every update has B samples
  time:W             every update holds the samples that fit in W (W calibrated by a fixed:B
                     run and a one-epoch time:W run so that without stragglers the mean batch
                     is about B)
  time:W sum         the same windows, each update the sum of its gradients at step/B
each without and with a straggler (--worker-speed 1,S), workers claiming samples dynamically
so a fast worker may take more. Prints wall-clock time and updates to a target training loss,
staleness (updates and microseconds) and batch sizes side by side, as a markdown table.

  bench/fixed_vs_time.py [--batch 16] [--straggler-speed 0.25] [--epochs 5] [--target LOSS]
  bench/fixed_vs_time.py --model mlp [--idx IMAGES.gz] [--limit 20000] [--hidden 128]

The default model is sparse logistic regression on generated RCV1-like data; --model softmax
or --model mlp runs the same comparison on Fashion-MNIST (IDX, Debian's dataset-fashion-mnist)
with the model trainer. Time windows run twice: updating with the mean of a window's gradients
(the default) and with their sum at step/B. --out DIR keeps the JSON reports (calibration
runs and the six compared) for tools/plot.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(hogwild, args, out):
    subprocess.run([hogwild, "train", *args, "--quiet", "--json", out], check=True,
                   stdout=subprocess.DEVNULL, cwd=ROOT)
    with open(out) as f:
        return json.load(f)


def time_to(curve, target):
    """First (seconds, updates) at which the training loss is at or below target."""
    for p in curve:
        if p["train_loss"] is not None and p["train_loss"] <= target:
            return p["seconds"], p["updates"]
    return None, None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hogwild", default=os.environ.get("HOGWILD", "build/release/hogwild"))
    ap.add_argument("--train", help="LIBSVM training file (default: generated RCV1-like data)")
    ap.add_argument("--model", default="logistic", choices=["logistic", "softmax", "mlp"],
                    help="logistic: sparse linear trainer; softmax, mlp: model trainer on IDX data")
    ap.add_argument("--idx", default="/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz",
                    help="IDX training images for --model softmax|mlp (labels found beside them)")
    ap.add_argument("--limit", type=int, default=20000, help="IDX: use the first N images")
    ap.add_argument("--hidden", default="128", help="MLP hidden layer widths")
    ap.add_argument("--evals", type=int, default=20, help="loss-curve points per epoch")
    ap.add_argument("--out", help="directory to keep the JSON reports in")
    ap.add_argument("--batch", type=int, help="fixed minibatch size (default: 16; 32 for models)")
    ap.add_argument("--window", type=float,
                    help="the time window in microseconds (default: calibrated to hold --batch samples)")
    ap.add_argument("--straggler-speed", type=float, default=0.25)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--step", type=float, help="step size (default: 2.0 for logistic, else the model's)")
    ap.add_argument("--target", type=float, help="target training loss (default: the worst final loss)")
    ap.add_argument("--extra", default="", help="more arguments for every run, e.g. '--l2 1e-5'")
    a = ap.parse_args()
    hogwild = os.path.join(ROOT, a.hogwild) if not os.path.isabs(a.hogwild) else a.hogwild
    dense = a.model != "logistic"
    if a.batch is None:
        a.batch = 32 if dense else 16
    if a.step is None:
        a.step = {"logistic": 2.0, "softmax": 0.1, "mlp": 0.2}[a.model]  # the trainers' defaults
    train = a.idx if dense else a.train
    if not train:
        train = os.path.join(ROOT, "data/generated/bench-100000x47236-k75-z1.train.svm")
        if not os.path.exists(train):
            subprocess.run([hogwild, "gen", "sparse", "--rows", "100000", "--features", "47236",
                            "--nnz-per-row", "75", "--zipf", "1", "--seed", "1", "--out", train,
                            "--test-rows", "20000", "--test-out", train.replace(".train.", ".test.")],
                           check=True, stderr=subprocess.DEVNULL)
    common = ["--train", train, "--threads", str(a.threads), "--epochs", str(a.epochs),
              "--sharding", "dynamic", "--evals-per-epoch", str(a.evals),
              "--staleness-sample", "0.2", *a.extra.split()]
    if dense:
        common += ["--format", "idx", "--model", a.model, "--limit", str(a.limit)]
        if a.model == "mlp":
            common += ["--hidden", a.hidden]
    else:
        common += ["--order", "rows"]  # as when docs/experiments.md's figures were taken
    load_before = os.getloadavg()
    slow = ",".join(["1"] * (a.threads - 1) + [str(a.straggler_speed)])
    with tempfile.TemporaryDirectory() as tmp:
        step = ["--step", str(a.step)]
        calib = run(hogwild, common + step + ["--schedule", f"fixed:{a.batch}"],
                    os.path.join(tmp, f"{a.model}-calibration.json"))
        window_ns = a.window and int(a.window * 1000)
        calibrated = not window_ns
        per_sample_ns = calib["train_seconds"] * a.threads / calib["samples"] * 1e9
        if calibrated:
            window_ns = max(1000, int(a.batch * per_sample_ns))
            # A one-epoch time-window run measures what such a window holds here and now (a
            # window's time per sample is not a fixed minibatch's: fewer updates, other
            # chunking, a machine whose load changes); the window is rescaled to hold B.
            probe_args = common + step + ["--schedule", f"time:{window_ns}ns"]
            probe_args[probe_args.index("--epochs") + 1] = "1"
            probe = run(hogwild, probe_args, os.path.join(tmp, f"{a.model}-calibration-time.json"))
            window_ns = max(1000, int(window_ns * a.batch / max(probe["batch_size"]["mean"], 1e-9)))
        window = f"time:{window_ns}ns"
        runs = []
        # Time windows twice: updates the mean of their samples' gradients at the step (every
        # update weighs the same, whatever its samples), and the sum at step/B (an update
        # weighs by its samples, as B-sample minibatches at the step do).
        variants = [(f"fixed:{a.batch}", "fixed", step),
                    (window, "time", step),
                    (window + " sum", "time-sum",
                     ["--batch-reduce", "sum", "--step", f"{a.step / a.batch:g}"])]
        for straggler in (False, True):
            for label, kind, extra in variants:
                args = (common + ["--schedule", label.split()[0]] + extra +
                        (["--worker-speed", slow] if straggler else []))
                name = f"{a.model}-{kind}-{'straggler' if straggler else 'even'}.json"
                r = run(hogwild, args, os.path.join(tmp, name))
                runs.append((label, straggler, r))
        if a.out:
            os.makedirs(a.out, exist_ok=True)
            for f in sorted(os.listdir(tmp)):
                shutil.copy(os.path.join(tmp, f), os.path.join(a.out, f))
    load_after = os.getloadavg()
    target = a.target
    if target is None:
        target = max(r["final"]["train_loss"] for _, _, r in runs)
    what = a.model + (f" (hidden {a.hidden})" if a.model == "mlp" else "")
    data = f"{train} (first {a.limit})" if dense else os.path.relpath(train, ROOT)
    print(f"model: {what}; data: {data}; {a.threads} threads, {a.epochs} epochs, "
          f"step {a.step} (sum: {a.step / a.batch:g}), "
          f"dynamic sharding; window {window_ns / 1000:.2f} us "
          f"{'calibrated to a mean batch of ' + str(a.batch) if calibrated else 'given (--window)'}; "
          f"straggler: --worker-speed {slow}; target training loss {target:.5f}")
    print(f"load average (1 min) before: {load_before[0]:.2f}, after: {load_after[0]:.2f} "
          f"on {os.cpu_count()} cores")
    print()
    print("| schedule | straggler | time to target (s) | updates to target | final loss | samples/s "
          "| staleness mean (updates) | p99 | staleness mean (us) | batch mean | batch per worker | samples per worker |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for schedule, straggler, r in runs:
        secs, upd = time_to(r["curve"], target)
        st = r["staleness"]
        per = ", ".join(f"{w['mean']:.1f}" for w in r["batch_size"]["per_worker"])
        samples = ", ".join(str(w["samples"]) for w in r["batch_size"]["per_worker"])
        print(f"| {schedule} | {'yes' if straggler else 'no'} | {secs if secs is None else f'{secs:.3f}'} "
              f"| {upd} | {r['final']['train_loss']:.5f} | {r['samples_per_second']:.0f} "
              f"| {st['mean']:.2f} | {st['p99']:g} | {st['micros']['mean']:.1f} "
              f"| {r['batch_size']['mean']:.1f} | {per} | {samples} |")


if __name__ == "__main__":
    sys.exit(main())
