#!/usr/bin/python3
"""hogwild against PyTorch's Hogwild recipe on Fashion-MNIST, side by side in one run.

PyTorch's recipe (pytorch/examples, mnist_hogwild): the model's tensors in shared memory
(model.share_memory()), one torch.multiprocessing process per core, each with one intra-op
thread (torch.set_num_threads(1)) and its own plain SGD optimiser over the shared parameters,
no locks. Both sides train the same model (softmax regression, or an MLP 784-H-10 with ReLU)
with the same batch size, the same per-epoch step decay, the same epochs and worker count;
each epoch's shuffle is split across workers. Training time excludes evaluation on both sides.

Prints, per side: samples/s and the training time until the test accuracy first reaches the
target, then the ratios. hogwild runs before and after PyTorch and the slower run is compared.
Run with Debian's interpreter (python3-torch) and an optimised BLAS for PyTorch, as users of its
wheels have (MKL or OpenBLAS); Debian's torch links the reference BLAS unless told otherwise, and
the script prints the BLAS library PyTorch loaded:

  export LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-serial
  /usr/bin/python3 bench/torch_hogwild.py --hogwild build/release/hogwild --model softmax
  /usr/bin/python3 bench/torch_hogwild.py --hogwild build/release/hogwild --model mlp --hidden 256
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

from fashion_mnist import DATA, read_idx


def load(split):
    images = read_idx(f"{DATA}/{split}-images-idx3-ubyte.gz")
    labels = read_idx(f"{DATA}/{split}-labels-idx1-ubyte.gz")
    x = torch.from_numpy(images.reshape(len(images), -1).astype(np.float32) / 255.0)
    y = torch.from_numpy(labels.astype(np.int64))
    return x, y


def make_model(kind, hidden):
    if kind == "softmax":
        model = nn.Linear(784, 10)
        nn.init.zeros_(model.weight)
        nn.init.zeros_(model.bias)
        return model
    layers, width = [], 784
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, 10))
    return nn.Sequential(*layers)


def worker(rank, workers, model, x, y, args, start, done):
    torch.set_num_threads(1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.step)
    for epoch in range(args.epochs):
        start.wait()
        lr = args.step * args.decay ** epoch
        for group in optimizer.param_groups:
            group["lr"] = lr
        generator = torch.Generator().manual_seed(args.seed * 1000 + epoch)
        order = torch.randperm(len(x), generator=generator)
        shard = order[len(x) * rank // workers:len(x) * (rank + 1) // workers]
        for b in range(0, len(shard), args.batch):
            index = shard[b:b + args.batch]
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x[index]), y[index])
            loss.backward()
            optimizer.step()
        done.wait()


def run_torch(args):
    torch.manual_seed(args.seed)
    x, y = load("train")
    x_test, y_test = load("t10k")
    model = make_model(args.model, args.hidden)
    model.share_memory()
    start, done = mp.Barrier(args.threads + 1), mp.Barrier(args.threads + 1)
    procs = [mp.Process(target=worker, args=(r, args.threads, model, x, y, args, start, done))
             for r in range(args.threads)]
    for p in procs:
        p.start()
    torch.set_num_threads(args.threads)
    epochs, elapsed = [], 0.0
    for epoch in range(1, args.epochs + 1):
        start.wait()
        t0 = time.perf_counter()
        done.wait()
        seconds = time.perf_counter() - t0
        elapsed += seconds
        with torch.no_grad():
            accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
        epochs.append({"epoch": epoch, "seconds": seconds, "elapsed": elapsed,
                       "test_accuracy": accuracy})
        print(f"torch   epoch {epoch:2d} {seconds:8.3f} s  test accuracy {100 * accuracy:.2f}%",
              flush=True)
    for p in procs:
        p.join()
    return {"epochs": epochs, "samples_per_second": len(x) * args.epochs / elapsed}


def run_hogwild(args):
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        command = [args.hogwild, "train", "--format", "idx",
                   "--train", f"{DATA}/train-images-idx3-ubyte.gz",
                   "--test", f"{DATA}/t10k-images-idx3-ubyte.gz",
                   "--model", args.model, "--optimizer", "sgd", "--step", str(args.step),
                   "--decay", str(args.decay), "--batch", str(args.batch),
                   "--epochs", str(args.epochs), "--threads", str(args.threads),
                   "--policy", "racy", "--seed", str(args.seed), "--quiet", "--json", report]
        if args.model == "mlp":
            command += ["--hidden", ",".join(map(str, args.hidden))]
        print("$ " + " ".join(command), flush=True)
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        with open(report) as f:
            data = json.load(f)
    epochs = [e for e in data["epochs"] if e["epoch"] > 0]
    for e in epochs:
        print(f"hogwild epoch {e['epoch']:2d} {e['seconds']:8.3f} s  test accuracy "
              f"{100 * e['test_accuracy']:.2f}%", flush=True)
    return {"epochs": epochs, "samples_per_second": data["samples_per_second"]}


def blas_library():
    """The BLAS shared library this process has loaded (PyTorch's), after one matrix product."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.lower() and "/" in line}
    return ", ".join(sorted(paths)) or "none found"


def time_to(result, target):
    for e in result["epochs"]:
        if e["test_accuracy"] >= target:
            return e["elapsed"]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hogwild", required=True, help="path to the hogwild executable")
    parser.add_argument("--model", choices=["softmax", "mlp"], default="softmax")
    parser.add_argument("--hidden", default="256", help="MLP hidden widths, comma-separated")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch", type=int, default=None, help="default: hogwild's for the model")
    parser.add_argument("--step", type=float, default=None, help="default: hogwild's for the model")
    parser.add_argument("--decay", type=float, default=0.9)
    parser.add_argument("--target", type=float, default=None,
                        help="test accuracy to time (default 0.83 softmax, 0.87 mlp)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.hidden = [int(h) for h in args.hidden.split(",")]
    defaults = {"softmax": (16, 0.1, 0.83), "mlp": (32, 0.2, 0.87)}[args.model]
    args.batch = args.batch or defaults[0]
    args.step = args.step or defaults[1]
    args.target = args.target or defaults[2]

    print(f"{args.model}{' ' + str(args.hidden) if args.model == 'mlp' else ''}: "
          f"{args.threads} workers, batch {args.batch}, step {args.step} x {args.decay}/epoch, "
          f"{args.epochs} epochs, torch {torch.__version__}, BLAS {blas_library()}", flush=True)
    # hogwild runs before and after torch; the slower of the two counts, so a change in the
    # machine's load during the run does not favour hogwild.
    load_before = os.getloadavg()[0]
    first = run_hogwild(args)
    ref = run_torch(args)
    second = run_hogwild(args)
    hog = min(first, second, key=lambda r: r["samples_per_second"])
    print(f"load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after "
          f"({os.cpu_count()} cores); hogwild runs: {first['samples_per_second']:,.0f} and "
          f"{second['samples_per_second']:,.0f} samples/s, the slower is compared")
    rows = []
    for name, r in (("hogwild", hog), ("torch", ref)):
        t = time_to(r, args.target)
        rows.append((name, r["samples_per_second"], t, r["epochs"][-1]["test_accuracy"]))
    print(f"\n| | samples/s | time to {100 * args.target:.0f}% test accuracy | final test accuracy |")
    print("|---|---|---|---|")
    for name, sps, t, acc in rows:
        shown = f"{t:.2f} s" if t is not None else "not reached"
        print(f"| {name} | {sps:,.0f} | {shown} | {100 * acc:.2f}% |")
    ratio = hog["samples_per_second"] / ref["samples_per_second"]
    t_hog, t_ref = rows[0][2], rows[1][2]
    print(f"\nhogwild / torch: {ratio:.1f}x samples/s"
          + (f", {t_ref / t_hog:.1f}x faster to {100 * args.target:.0f}%" if t_hog and t_ref else ""))


if __name__ == "__main__":
    mp.set_start_method("fork")
    sys.exit(main())
