#!/usr/bin/env python3
"""Fixed-size against fixed-time minibatches, with and without an injected straggler.

Runs `hogwild train` on the same data with the same sample budget (epochs) for
  fixed:B            every update has B samples
  time:W             every update holds the samples that fit in W (W calibrated so that
                     without stragglers the mean batch is about B)
each without and with a straggler (--worker-speed 1,S), workers claiming samples dynamically
so a fast worker may take more. Prints wall-clock time and updates to a target training loss,
staleness (updates and microseconds) and batch sizes side by side, as a markdown table.

  bench/fixed_vs_time.py [--batch 16] [--straggler-speed 0.25] [--epochs 5] [--target LOSS]
"""
import argparse
import json
import os
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
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--straggler-speed", type=float, default=0.25)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--step", type=float, default=2.0)
    ap.add_argument("--target", type=float, help="target training loss (default: the worst final loss)")
    ap.add_argument("--extra", default="", help="more arguments for every run, e.g. '--l2 1e-5'")
    a = ap.parse_args()
    hogwild = os.path.join(ROOT, a.hogwild) if not os.path.isabs(a.hogwild) else a.hogwild
    train = a.train
    if not train:
        train = os.path.join(ROOT, "data/generated/bench-100000x47236-k75-z1.train.svm")
        if not os.path.exists(train):
            subprocess.run([hogwild, "gen", "sparse", "--rows", "100000", "--features", "47236",
                            "--nnz-per-row", "75", "--zipf", "1", "--seed", "1", "--out", train,
                            "--test-rows", "20000", "--test-out", train.replace(".train.", ".test.")],
                           check=True, stderr=subprocess.DEVNULL)
    common = ["--train", train, "--threads", str(a.threads), "--epochs", str(a.epochs),
              "--step", str(a.step), "--sharding", "dynamic", "--evals-per-epoch", "20",
              "--staleness-sample", "0.2", *a.extra.split()]
    slow = ",".join(["1"] * (a.threads - 1) + [str(a.straggler_speed)])
    with tempfile.TemporaryDirectory() as tmp:
        calib = run(hogwild, common + ["--schedule", f"fixed:{a.batch}"], os.path.join(tmp, "c.json"))
        per_sample_ns = calib["train_seconds"] * a.threads / calib["samples"] * 1e9
        window_ns = max(1000, int(a.batch * per_sample_ns))
        window = f"time:{window_ns}ns"
        runs = []
        for straggler in (False, True):
            for schedule in (f"fixed:{a.batch}", window):
                args = common + ["--schedule", schedule] + (["--worker-speed", slow] if straggler else [])
                r = run(hogwild, args, os.path.join(tmp, f"{len(runs)}.json"))
                runs.append((schedule, straggler, r))
    target = a.target
    if target is None:
        target = max(r["final"]["train_loss"] for _, _, r in runs)
    print(f"data: {os.path.relpath(train, ROOT)}; {a.threads} threads, {a.epochs} epochs, step {a.step}, "
          f"dynamic sharding; window {window_ns / 1000:.2f} us calibrated to a mean batch of {a.batch}; "
          f"straggler: --worker-speed {slow}; target training loss {target:.5f}")
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
