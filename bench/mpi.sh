#!/usr/bin/env bash
# Training across processes on MPI, on this machine (docs/distributed.md):
#   1. 2 processes x 1 thread against 1 process x 2 threads (and 1 x 1) on the RCV1-like data:
#      samples/s, test accuracy, staleness; REPS runs of each, alternated, medians;
#   2. the cost of one merge through MPI (rma, allreduce) against shared memory, by model size,
#      and the latency + bytes / bandwidth fit of each (hogwild_bench_merge);
#   3. the three ways processes share the model side by side at 2 and 3 processes: rma,
#      allreduce, rma with --sync-bound 2;
#   4. a projection to 8, 64 and 512 nodes from the measured costs: throughput from the cost
#      model (rma: K x latency / 2 + 2 x model bytes / bandwidth a merge; allreduce: a ring,
#      2 (K - 1) latencies and 2 (K - 1) / K model bytes each way), and the virtual-time
#      simulator (--simulate K --clock virtual) with the projected rma merge as its read and
#      write latency, for the throughput and staleness that timing implies.
#
#   bench/mpi.sh          REPS=5 EPOCHS=10 SYNC_EVERY=1024; reports in data/generated/mpi
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
reps=${REPS:-5}
epochs=${EPOCHS:-10}
every=${SYNC_EVERY:-1024}
out=${OUT:-data/generated/mpi}
mkdir -p "$out"
merge_bench=${MERGE_BENCH:-build/release/bench/hogwild_bench_merge}
[[ -x $merge_bench ]] || cmake --build --preset release --target hogwild_bench_merge >&2
base=$(bench_data 100000 47236 75 1 2>/dev/null)
train=(train --train "$base.train.svm" --test "$base.test.svm" --epochs "$epochs" --quiet)
# Processes are not bound to a core (each may run several threads); root may run mpirun.
mpirun=(mpirun --oversubscribe --bind-to none)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

echo "# bench/mpi.sh on $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "# $(mpirun --version | head -1), REPS=$reps EPOCHS=$epochs SYNC_EVERY=$every"

# run NAME ARGS...: one run's report, $out/NAME.json.
run() {
  local name=$1
  shift
  "$@" --json "$out/$name.json" >/dev/null
}
field() { report_field "$out/$1.json" "$2"; }
medians() {  # medians NAME EXPR: the median of EXPR over the NAME-1..REPS reports
  for ((i = 1; i <= reps; i++)); do field "$1-$i" "$2"; done | median
}

echo
echo "## 1. processes against threads (RCV1-like, $epochs epochs, medians of $reps alternated runs)"
for ((i = 1; i <= reps; i++)); do
  run "p1t1-$i" "$hogwild" "${train[@]}" --threads 1
  run "p1t2-$i" "$hogwild" "${train[@]}" --threads 2
  run "p2t1-$i" "${mpirun[@]}" -np 2 "$hogwild" "${train[@]}" --threads 1 --sync-every "$every"
done
echo "| run | samples/s | test accuracy | staleness mean (p99), within a process | across processes, samples: mean (p99) |"
echo "|---|---|---|---|---|"
for name in p1t1 p1t2 p2t1; do
  across=$(field "$name-1" "'%.0f (%d)' % (r['staleness']['across_processes']['mean'], r['staleness']['across_processes']['p99']) if 'across_processes' in r['staleness'] else '-'")
  echo "| $name | $(medians "$name" "r['samples_per_second']" | xargs printf '%.3g') | $(medians "$name" "100 * r['final']['test_accuracy']" | xargs printf '%.2f%%') | $(field "$name-1" "'%.2f (%d)' % (r['staleness']['mean'], r['staleness']['p99'])") | $across |"
done

echo
echo "## 2. one merge: MPI against shared memory (2 processes)"
"${mpirun[@]}" -np 2 "$merge_bench" | tee "$out/merge.txt"

echo
echo "## 3. rma, allreduce and bounded staleness across processes (1 thread each, --sync-every $every)"
echo "| processes | sync | samples/s | test accuracy | across processes, samples: mean (max) | merges | rank 0 merging s | waits |"
echo "|---|---|---|---|---|---|---|---|"
for np in 2 3; do
  for mode in rma allreduce bounded; do
    extra=(--sync "$mode")
    [[ $mode == bounded ]] && extra=(--sync rma --sync-bound 2)
    for ((i = 1; i <= reps; i++)); do
      run "np$np-$mode-$i" "${mpirun[@]}" -np "$np" "$hogwild" "${train[@]}" --threads 1 \
        --sync-every "$every" "${extra[@]}"
    done
    n="np$np-$mode"
    echo "| $np | $mode | $(medians "$n" "r['samples_per_second']" | xargs printf '%.3g') | $(medians "$n" "100 * r['final']['test_accuracy']" | xargs printf '%.2f%%') | $(field "$n-1" "'%.0f (%d)' % (r['staleness']['across_processes']['mean'], r['staleness']['across_processes']['max'])") | $(field "$n-1" "sum(r['processes']['merges_per_rank'])") | $(medians "$n" "r['processes']['merge_seconds']" | xargs printf '%.3f') | $(field "$n-1" "r['processes'].get('bound_waits', '-')") |"
  done
done

echo
echo "## 4. projection to 8, 64 and 512 nodes"
# The per-sample cost: one thread of one process (its samples/s), and the rma and allreduce
# merge costs fitted above.
sample_ns=$(medians p1t1 "1e9 / r['samples_per_second']")
dim=$(field p1t1-1 "r['dataset']['features'] + 1")
/usr/bin/python3 - "$out/merge.txt" "$sample_ns" "$dim" "$every" <<'PY' | tee "$out/projection.txt"
import math, sys
fits = {}
for line in open(sys.argv[1]):
    if line.startswith("fit "):
        _, name, _, latency, _, bandwidth = line.split()
        fits[name.rstrip(":")] = (float(latency), float(bandwidth))  # us, bytes per us
sample_us = float(sys.argv[2]) / 1e3
model_bytes = 4 * int(sys.argv[3])
m = int(sys.argv[4])
print(f"# a sample {sample_us * 1e3:.0f} ns, a model of {model_bytes} bytes, a merge every {m} samples")
print("| nodes | rma merge us | rma samples/s | allreduce us | allreduce samples/s | ideal samples/s |")
print("|---|---|---|---|---|---|")
la, ba = fits["rma"]
lr, br = fits["allreduce"]
for k in (8, 64, 512):
    # rma: a merge sends the changed blocks and reads every block, split over the k owners:
    # the same bytes whatever k, and one message per owner (the latency fitted on 2 owners).
    rma = la * k / 2 + 2 * model_bytes / ba
    # allreduce: a ring, 2 (k - 1) steps of latency and 2 (k - 1) / k of the model each way,
    # every node waiting for the slowest.
    ar = 2 * (k - 1) * (lr / 2) + 2 * (k - 1) / k * model_bytes / br
    ideal = k / sample_us * 1e6
    rate = lambda t: k * m / (m * sample_us + t) * 1e6
    print(f"| {k} | {rma:.0f} | {rate(rma):.3g} | {ar:.0f} | {rate(ar):.3g} | {ideal:.3g} |")
    print(f"rma_us_{k} {rma:.3f}", file=sys.stderr)
PY
echo
echo "Simulated rma at K nodes (--simulate K --clock virtual, a sample costing ${sample_ns%.*} ns, an update of $every samples, read latency = write latency = the projected rma merge; the timing and the staleness it implies, not the loss: a summed minibatch is not a merged replica):"
echo "| nodes | virtual samples/s | staleness across nodes, samples: mean (p99) |"
echo "|---|---|---|"
for k in 8 64 512; do
  merge_us=$(/usr/bin/python3 -c "
import sys
fits = {l.split()[1].rstrip(':'): (float(l.split()[3]), float(l.split()[5])) for l in open('$out/merge.txt') if l.startswith('fit ')}
la, ba = fits['rma']
print('%.0f' % (la * $k / 2 + 2 * 4 * $dim / ba))")
  run "sim-k$k" "$hogwild" train --train "$base.train.svm" --simulate "$k" --clock virtual \
    --sample-cost "${sample_ns%.*}ns" --schedule "fixed:$every" --batch-reduce sum \
    --read-latency "${merge_us}us" --write-latency "${merge_us}us" --epochs 1 --step 0.001 \
    --staleness-sample 1 --quiet
  echo "| $k | $(field "sim-k$k" "'%.3g' % (r['samples'] / r['final']['virtual_seconds'])") | $(field "sim-k$k" "'%.0f (%d)' % ($every * r['staleness']['mean'], $every * r['staleness']['p99'])") |"
done
