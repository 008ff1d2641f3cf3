"""Figures of bench/simulated_workers.sh: staleness (mean and p99, in updates and in virtual
microseconds) and virtual time to the target loss against the number of workers, fixed-size
against fixed-time minibatches, identical and heterogeneous workers.

    /usr/bin/python3 bench/plot_workers.py REPORTS_DIR TARGET OUT.png
"""
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(directory, k, schedule, speeds):
    path = os.path.join(directory, f"k{k}-{schedule.replace(':', '')}-{speeds}.json")
    with open(path) as f:
        return json.load(f)


def to_target(report, target):
    return next((p["virtual_seconds"] for p in report["curve"] if p["train_loss"] <= target),
                math.nan)


def main():
    directory, target, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    workers = [2, 4, 8, 16, 32, 64, 128, 256]
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    for speeds, style in (("equal", ":"), ("mixed", "-")):
        for schedule, color in (("fixed:16", "tab:red"), ("time:16us", "tab:blue")):
            if speeds == "equal" and schedule == "time:16us":
                continue  # identical to fixed:16 with equal workers
            label = f"{schedule}, {speeds}" if speeds == "mixed" else "both schedules, equal"
            rows = [load(directory, k, schedule, speeds) for k in workers]
            mean = [r["staleness"]["mean"] for r in rows]
            p99 = [r["staleness"]["p99"] for r in rows]
            axes[0].plot(workers, mean, style, color=color, marker="o", label=label + " (mean)")
            axes[0].plot(workers, p99, style, color=color, marker="^", alpha=0.5,
                         label=label + " (p99)")
            axes[1].plot(workers, [r["staleness"]["micros"]["mean"] for r in rows], style,
                         color=color, marker="o", label=label + " (mean)")
            axes[1].plot(workers, [r["staleness"]["micros"]["p99"] for r in rows], style,
                         color=color, marker="^", alpha=0.5, label=label + " (p99)")
            axes[2].plot(workers, [to_target(r, target) for r in rows], style, color=color,
                         marker="o", label=label)
    axes[0].set_ylabel("staleness (updates by other workers)")
    axes[1].set_ylabel("staleness (virtual us, read to write)")
    axes[2].set_ylabel(f"virtual seconds to training loss {target}")
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("workers")
        ax.grid(alpha=0.3)
    axes[0].set_yscale("log")
    axes[2].set_yscale("log")
    axes[0].legend(fontsize=7)
    axes[2].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
