"""Figures from hogwild reports (JSON) and sweep results (CSV).

From reports, one curve per report (labelled by the options that differ between them):
  loss_vs_time.png, loss_vs_updates.png      training loss against wall-clock time and updates
  loss_vs_virtual_time.png                   ... and against virtual time (--clock virtual)
  staleness.png, batch_size.png              histograms of measured staleness and batch size
  coherence.png                              gradient coherence over training
  fixed_vs_time.png                          when the reports hold both fixed:B and time:W
                                             schedules: training loss against wall-clock time,
                                             fixed-size against fixed-time minibatches, one
                                             panel without and one with injected stragglers
  batch_per_worker.png                       (the same reports) each worker's mean batch size
From a sweep CSV (its grid columns come before `status`):
  <csv>_<metric>.png                          each result column against the first grid key,
                                              one line per value of the other keys
  <csv>_normalised.png                        with a `delay` key: updates (or seconds) to the
                                              target, divided by the run without delay in the
                                              same group (the Dai et al. figure style)
"""
import argparse
import csv
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ZERO_DELAYS = {"none", "const:0", "uniform:0"}


def fail(message):
    print(f"tools/plot: {message}", file=sys.stderr)
    sys.exit(2)


def load_reports(paths):
    reports = []
    for p in paths:
        try:
            with open(p) as f:
                reports.append((p, json.load(f)))
        except (OSError, json.JSONDecodeError) as e:
            fail(f"{p}: expected a hogwild JSON report, found an error: {e}")
    return reports


def labels_for(reports):
    """Label each report by the config values that differ between the reports."""
    configs = [r.get("config", {}) for _, r in reports]
    keys = sorted({k for c in configs for k in c})
    varying = [k for k in keys if len({json.dumps(c.get(k)) for c in configs}) > 1]
    out = []
    for (path, _), c in zip(reports, configs):
        parts = [f"{k}={c.get(k)}" for k in varying]
        out.append(", ".join(parts) if parts else os.path.basename(path))
    return out


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(path)


def plot_reports(reports, out):
    labels = labels_for(reports)
    for x_key, name, xlabel in (("seconds", "loss_vs_time.png", "training time (s)"),
                                ("updates", "loss_vs_updates.png", "updates applied"),
                                ("virtual_seconds", "loss_vs_virtual_time.png", "virtual time (s)")):
        if x_key == "virtual_seconds" and not any(
                "virtual_seconds" in p for _, r in reports for p in r.get("curve", [])):
            continue  # only simulations in virtual time (--clock virtual) have it
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for (_, r), label in zip(reports, labels):
            curve = [p for p in r.get("curve", []) if p.get("train_loss") is not None]
            if not curve:  # reports without a curve: per-epoch points
                curve = [{"seconds": e.get("elapsed", 0), "updates": None, "train_loss": e.get("train_loss")}
                         for e in r.get("epochs", []) if e.get("train_loss") is not None]
            pts = [(p[x_key], p["train_loss"]) for p in curve if p.get(x_key) is not None]
            if pts:
                ax.plot(*zip(*pts), marker=".", label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("training loss")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        save(fig, out, name)

    for key, name, xlabel in (("staleness", "staleness.png", "measured staleness (updates by other workers)"),
                              ("batch_size", "batch_size.png", "samples per update")):
        fig, ax = plt.subplots(figsize=(7, 4.5))
        drawn = False
        for (_, r), label in zip(reports, labels):
            hist = r.get(key, {}).get("histogram", {})
            if hist:
                xs = sorted(float(k) for k in hist)
                ys = [hist[k] for k in sorted(hist, key=float)]
                ax.step(xs, ys, where="post", label=f"{label} (mean {r[key].get('mean', 0):.2f})")
                drawn = True
        ax.set_xlabel(xlabel)
        ax.set_ylabel("count")
        if drawn:
            ax.set_yscale("log")
            ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        save(fig, out, name)

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (_, r), label in zip(reports, labels):
        pts = [(p["update"], p["cosine"]) for p in r.get("coherence", [])]
        if pts:
            ax.plot(*zip(*pts), marker=".", label=label)
    ax.set_xlabel("samples processed")
    ax.set_ylabel("cosine(gradient, earlier gradient)")
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    save(fig, out, "coherence.png")


def schedule_kind(report):
    return str(report.get("config", {}).get("schedule", "")).split(":")[0]


def schedule_label(report):
    c = report.get("config", {})
    return str(c.get("schedule", "")) + (" sum" if c.get("batch_reduce") == "sum" else "")


def has_stragglers(report):
    c = report.get("config", {})
    return bool(c.get("worker_speed") or c.get("straggler") or c.get("pause"))


def plot_fixed_vs_time(reports, out):
    """Fixed-size against fixed-time minibatches: loss against wall-clock time, one panel
    without and one with injected stragglers; and each worker's mean batch size."""
    kinds = {schedule_kind(r) for _, r in reports}
    if not {"fixed", "time"} <= kinds:
        return
    panels = [False, True] if any(has_stragglers(r) for _, r in reports) else [False]
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.5), sharey=True, squeeze=False)
    for ax, slow in zip(axes[0], panels):
        for _, r in reports:
            if has_stragglers(r) != slow or schedule_kind(r) not in ("fixed", "time"):
                continue
            pts = [(p["seconds"], p["train_loss"]) for p in r.get("curve", []) if p.get("train_loss") is not None]
            if pts:
                style = "-" if schedule_kind(r) == "fixed" else "--"
                ax.plot(*zip(*pts), style, marker=".", label=schedule_label(r))
        speeds = next((r["config"].get("worker_speed") for _, r in reports if has_stragglers(r) == slow), None)
        ax.set_title("with stragglers" + (f" (speeds {', '.join(f'{s:g}' for s in speeds)})" if speeds else "")
                     if slow else "workers at equal speed", fontsize=10)
        ax.set_xlabel("training time (s)")
        ax.set_yscale("log")
        ax.grid(alpha=0.3, which="both")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    axes[0][0].set_ylabel("training loss (log scale)")
    save(fig, out, "fixed_vs_time.png")

    names, width = [], 0.8
    series = [(i, r) for i, (_, r) in enumerate(reports) if r.get("batch_size", {}).get("per_worker")]
    fig, ax = plt.subplots(figsize=(max(7, 1.8 * len(series)), 4.5))
    workers = max((len(r["batch_size"]["per_worker"]) for _, r in series), default=0)
    for w in range(workers):
        xs = [i + (w - (workers - 1) / 2) * width / workers for i, _ in enumerate(series)]
        ys = [r["batch_size"]["per_worker"][w]["mean"] if w < len(r["batch_size"]["per_worker"]) else 0
              for _, r in series]
        ax.bar(xs, ys, width / workers, label=f"worker {w + 1}")
    for _, r in series:
        c = r["config"]
        names.append(schedule_label(r) + ("\nstragglers" if has_stragglers(r) else ""))
    ax.set_xticks(range(len(series)), names, fontsize=8)
    ax.set_ylabel("mean samples per update")
    ax.grid(alpha=0.3, axis="y")
    if workers:
        ax.legend(fontsize=8)
    save(fig, out, "batch_per_worker.png")


def as_number(text):
    try:
        v = float(text)
        return v if math.isfinite(v) else None
    except (TypeError, ValueError):
        return None


def plot_csv(path, out):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        fail(f"{path}: cannot read: {e}")
    if not rows or "status" not in rows[0]:
        fail(f"{path}:1: expected a hogwild sweep results.csv header with a status column")
    columns = list(rows[0].keys())
    grid = columns[:columns.index("status")]
    if not grid:
        fail(f"{path}:1: expected grid columns before status")
    results = [c for c in columns[columns.index("status") + 1:]
               if any(as_number(r[c]) is not None for r in rows)]
    stem = os.path.splitext(os.path.basename(path))[0]
    x_key, group_keys = grid[0], grid[1:]
    x_values = list(dict.fromkeys(r[x_key] for r in rows))
    numeric_x = all(as_number(v) is not None for v in x_values)

    def groups():
        g = {}
        for r in rows:
            g.setdefault(tuple(r[k] for k in group_keys), []).append(r)
        return g

    def x_of(v):
        return as_number(v) if numeric_x else x_values.index(v)

    for metric in results:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for key, members in groups().items():
            pts = sorted((x_of(r[x_key]), as_number(r[metric])) for r in members if as_number(r[metric]) is not None)
            if pts:
                label = ", ".join(f"{k}={v}" for k, v in zip(group_keys, key)) or metric
                ax.plot(*zip(*pts), marker="o", label=label)
        if not numeric_x:
            ax.set_xticks(range(len(x_values)), x_values, rotation=20)
        failed = sum(1 for r in rows if r["status"].startswith("failed"))
        ax.set_xlabel(x_key)
        ax.set_ylabel(metric)
        ax.set_title(f"{stem}: {metric}" + (f" ({failed} failed runs not shown)" if failed else ""), fontsize=9)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
        save(fig, out, f"{stem}_{metric}.png")

    # Dai et al. style: cost to reach the target relative to the same setting without delay.
    if "delay" in grid:
        metric = next((m for m in ("updates_to_target_loss", "seconds_to_target_loss",
                                   "epochs_to_target_accuracy", "seconds_to_target_accuracy")
                       if m in results), None)
        if metric:
            others = [k for k in grid if k != "delay"]
            base = {}
            for r in rows:
                if r["delay"] in ZERO_DELAYS and as_number(r[metric]):
                    base[tuple(r[k] for k in others)] = as_number(r[metric])
            delays = list(dict.fromkeys(r["delay"] for r in rows))
            fig, ax = plt.subplots(figsize=(7, 4.5))
            series, missed = {}, {}
            for r in rows:
                key = tuple(r[k] for k in others)
                if key not in base:
                    continue
                v = as_number(r[metric])
                ys = series.setdefault(key, [math.nan] * len(delays))
                if v is not None:
                    ys[delays.index(r["delay"])] = v / base[key]
                elif r["status"].startswith("ok"):
                    missed.setdefault(key, []).append(delays.index(r["delay"]))
            top = max([y for ys in series.values() for y in ys if not math.isnan(y)] + [1.0]) * 1.15
            for key, ys in series.items():
                label = ", ".join(f"{k}={v}" for k, v in zip(others, key))
                line, = ax.plot(range(len(delays)), ys, marker="o", label=label)
                xs = missed.get(key, [])
                if xs:
                    ax.plot(xs, [top] * len(xs), marker="x", linestyle="none", color=line.get_color(),
                            markersize=9)
            if missed:
                ax.text(0.01, 0.99, "x: target not reached", transform=ax.transAxes, va="top", fontsize=8)
            ax.set_xticks(range(len(delays)), delays, rotation=20)
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_xlabel("delay")
            ax.set_ylabel(f"{metric} / without delay")
            ax.grid(alpha=0.3)
            if series:
                ax.legend(fontsize=8)
            save(fig, out, f"{stem}_normalised.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="JSON reports and/or sweep results.csv files")
    ap.add_argument("--out", required=True, help="directory for the PNG files")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    reports = [p for p in a.inputs if p.endswith(".json")]
    csvs = [p for p in a.inputs if p.endswith(".csv")]
    other = [p for p in a.inputs if p not in reports and p not in csvs]
    if other:
        fail(f"{other[0]}: expected a .json report or a .csv sweep result")
    if reports:
        loaded = load_reports(reports)
        plot_reports(loaded, a.out)
        plot_fixed_vs_time(loaded, a.out)
    for c in csvs:
        plot_csv(c, a.out)


if __name__ == "__main__":
    main()
