#!/usr/bin/env python3
"""Ratio tables from a hogwild_bench_updates JSON file (--benchmark_out=FILE).

Every figure is a ratio of two rates from the same file, i.e. the same run. With
--benchmark_repetitions the median aggregate is used, otherwise the single run.

    bench/micro_summary.py RESULTS.json
"""
import json
import re
import statistics
import sys
from collections import defaultdict


def share(b, threads):
    """Share of wall time the benchmark's threads were on a CPU (1 = undisturbed)."""
    return b["cpu_time"] / (b["real_time"] * threads) if b.get("real_time") else 1.0


def load(path):
    """{(name without threads/min_time/real_time, threads): counters}.

    Each benchmark's repetitions are reduced to their median, taken over the repetitions
    that ran undisturbed (CPU share >= 0.9; `locked` threads sleep on the mutex by design,
    so all of its repetitions count) or over all of them when none did. A file written
    with --benchmark_report_aggregates_only holds only medians: those are used as they are.
    """
    runs = json.load(open(path))["benchmarks"]
    groups = defaultdict(list)
    medians = {}
    for b in runs:
        name = b.get("run_name", b["name"])
        threads = int(re.search(r"/threads:(\d+)", name).group(1))
        key = (re.sub(r"/(min_time:[0-9.]+|real_time|threads:\d+)", "", name), threads)
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") == "median":
                medians[key] = dict(b, kept=None)
        else:
            groups[key].append(b)
    out = {}
    for key, reps in groups.items():
        good = [b for b in reps if "/locked/" in key[0] or share(b, key[1]) >= 0.9]
        kept = good or reps
        merged = {}
        for field in set().union(*(b.keys() for b in kept)):
            values = [b[field] for b in kept if isinstance(b.get(field), (int, float))]
            if values and len(values) == len(kept):
                merged[field] = statistics.median(values)
        merged["kept"] = (len(good), len(reps))
        out[key] = merged
    for key, b in medians.items():
        out.setdefault(key, b)
    return out


def rate(results, name, threads, counter):
    b = results.get((name, threads))
    return b[counter] if b and counter in b else None


def ratio(a, b):
    return f"{a / b:.2f}" if a and b else "n/a"


def si(x):
    if x is None:
        return "n/a"
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.2f}{unit}"
    return f"{x:.0f}"


def main(path):
    r = load(path)
    threads = sorted({t for (_, t) in r})
    tmax = max(threads)
    sparse = sorted({n.split("/", 2)[2] for (n, _) in r if n.startswith("sparse/serial/")},
                    key=lambda s: (int(re.search(r"d:(\d+)", s).group(1)), s.split("/")[2],
                                   int(re.search(r"k:(\d+)", s).group(1))))
    sizes = sorted({int(n.split("n:")[1]) for (n, _) in r if n.startswith("triad/")})
    policies = ["racy", "atomic", "striped", "locked"]

    print("## Sparse updates: nonzeros/s relative to serial (1 thread), same run\n")
    head = [f"{p} {t}T" for t in threads for p in policies]
    print("| workload | serial nnz/s | " + " | ".join(head) + f" | private racy {tmax}T |")
    print("|---" * (3 + len(head)) + "|")
    for w in sparse:
        s = rate(r, f"sparse/serial/{w}", 1, "nnz/s")
        cells = [ratio(rate(r, f"sparse/{p}/{w}", t, "nnz/s"), s) for t in threads for p in policies]
        priv = ratio(rate(r, f"private/racy/{w}", tmax, "nnz/s"), s)
        print(f"| {w} | {si(s)} | " + " | ".join(cells) + f" | {priv} |")

    print(f"\n## No-sharing bound: shared racy / private racy at each thread count\n")
    print("| workload | " + " | ".join(f"{t}T shared/private" for t in threads) +
          f" | shared {tmax}T / 1T | private {tmax}T / 1T |")
    print("|---" * (3 + len(threads)) + "|")
    for w in sparse:
        cells = [ratio(rate(r, f"sparse/racy/{w}", t, "nnz/s"), rate(r, f"private/racy/{w}", t, "nnz/s"))
                 for t in threads]
        sh = ratio(rate(r, f"sparse/racy/{w}", tmax, "nnz/s"), rate(r, f"sparse/racy/{w}", 1, "nnz/s"))
        pr = ratio(rate(r, f"private/racy/{w}", tmax, "nnz/s"), rate(r, f"private/racy/{w}", 1, "nnz/s"))
        print(f"| {w} | " + " | ".join(cells) + f" | {sh} | {pr} |")

    print("\n## Dense axpy (w += a x, 12 bytes/element) and triad (12 bytes/element), 1 thread\n")
    print("| floats | triad bytes/s | serial/triad | racy/triad | racy/serial | atomic/serial | "
          f"striped/serial | locked/serial | triad {tmax}T bytes/s | racy {tmax}T/triad {tmax}T |")
    print("|---" * 10 + "|")
    for n in sizes:
        tr = rate(r, f"triad/n:{n}", 1, "bytes/s")
        se = rate(r, f"dense/serial/n:{n}", 1, "bytes/s")
        cells = [si(tr), ratio(se, tr), ratio(rate(r, f"dense/racy/n:{n}", 1, "bytes/s"), tr)]
        cells += [ratio(rate(r, f"dense/{p}/n:{n}", 1, "bytes/s"), se) for p in policies]
        trm = rate(r, f"triad/n:{n}", tmax, "bytes/s")
        cells += [si(trm), ratio(rate(r, f"dense/racy/n:{n}", tmax, "bytes/s"), trm)]
        print(f"| {n} | " + " | ".join(cells) + " |")

    print("\n## Staleness bookkeeping: updates/s relative to no bookkeeping (same workload, threads)\n")
    modes = ["shared_atomic", "padded_per_thread", "sampled_every_64"]
    print("| workload | threads | none updates/s | " + " | ".join(modes) + " |")
    print("|---" * (3 + len(modes)) + "|")
    works = sorted({n.split("/", 2)[2] for (n, _) in r if n.startswith("bookkeeping/")})
    for w in works:
        for t in threads:
            none = rate(r, f"bookkeeping/none/{w}", t, "updates/s")
            cells = []
            for m in modes:
                x = rate(r, f"bookkeeping/{m}/{w}", t, "updates/s")
                if none:
                    cells.append(ratio(x, none))
                else:  # no reference: raw nanoseconds per update per thread
                    cells.append(f"{t / x * 1e9:.2f} ns" if x else "n/a")
            print(f"| {w} | {t} | {si(none) if none else '-'} | " + " | ".join(cells) + " |")


    # Outside load: repetitions whose threads spent under 90% of the wall time on a CPU
    # were left out of the medians above; list the results where every repetition was.
    total = len(r)
    disturbed = sorted((n, t) for (n, t), b in r.items() if b.get("kept") and b["kept"][0] == 0)
    kept = sum(b["kept"][0] for b in r.values() if b.get("kept"))
    reps = sum(b["kept"][1] for b in r.values() if b.get("kept"))
    print(f"\nRepetitions kept (CPU share >= 0.9, i.e. undisturbed by other load): {kept} of "
          f"{reps}; results with no undisturbed repetition (median of all, read with care): "
          f"{len(disturbed)} of {total}")
    for n, t in disturbed:
        print(f"  {n} threads:{t}")


if __name__ == "__main__":
    main(sys.argv[1])
