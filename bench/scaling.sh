#!/usr/bin/env bash
# Thread scaling end to end, side by side in one run: logistic regression on the RCV1-like
# data (100k rows, 47,236 features, 75 nonzeros per row, Zipf 1) and on the 10M-feature
# uniform data, 10 epochs, at each thread count of THREADS:
#   serial 1         one worker, no synchronisation (the reference)
#   racy 1 rows      one worker, rows in a fresh permutation each epoch (--order rows)
#   racy 1           one worker, the default order (--order blocks)
#   racy T shared    T workers writing the shared model (plain Hogwild!, --replicate off)
#   racy T auto      T workers with the default --replicate (47k data only: auto replicates
#                    models of up to 1M weights with 2 to 17 workers, beyond that it shares)
#   racy T M         T workers with replicas merged every M samples, for each M in MERGES
#                    (47k data only; none by default)
#   racy T private   T workers merging once per epoch: the no-sharing bound, end to end (47k
#                    data only: on the 10M-feature model a merge scans 40 MB, so the bound there
#                    is the microbenchmark's private/racy, bench/micro.sh)
# Runs are interleaved REPS times; the table gives medians of samples/s, the ratio to serial
# and to the private bound at the same thread count, and the last repetition's test accuracy.
#
#   THREADS="1 2 4 8 16" REPS=3 bench/scaling.sh        (HOGWILD=path/to/hogwild, PYTHON=...)
#   DATASETS=47k bench/scaling.sh                        (47k, 10m or "47k 10m", the default)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
python=${PYTHON:-/usr/bin/python3}
[[ -x $python ]] || python=python3
reps=${REPS:-3}
epochs=${EPOCHS:-10}
threads=${THREADS:-1 2}
datasets=${DATASETS:-47k 10m}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" >&2
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ds in $datasets; do
  case $ds in
    47k) data=$(bench_data 100000 47236 75 1) ;;
    10m) data=$(bench_data 100000 10000000 75 0) ;;
    *) echo "scaling.sh: DATASETS: expected 47k or 10m, found '$ds'" >&2; exit 2 ;;
  esac
  variants=("serial 1 off blocks" "racy 1 off rows" "racy 1 off blocks")
  for t in $threads; do
    [[ $t == 1 ]] && continue
    variants+=("racy $t off blocks")
    [[ $ds == 47k ]] || continue
    variants+=("racy $t auto blocks")
    for m in ${MERGES:-}; do variants+=("racy $t $m blocks"); done
    variants+=("racy $t private blocks")
  done
  for ((r = 1; r <= reps; r++)); do
    for i in "${!variants[@]}"; do
      read -r policy t rep order <<<"${variants[$i]}"
      merge=$rep
      [[ $rep == private ]] && merge=16777216
      "$hogwild" train --train "$data.train.svm" --test "$data.test.svm" --policy "$policy" \
        --threads "$t" --replicate "$merge" --order "$order" --epochs "$epochs" --quiet \
        --json "$tmp/$ds-$i-$r.json" >/dev/null
    done
    echo "$ds: repetition $r of $reps done" >&2
  done
  rate() {
    for ((r = 1; r <= reps; r++)); do field "$tmp/$ds-$1-$r.json" "d['samples_per_second']"; done |
      median
  }
  base=$(rate 0)
  declare -A private_rate=()
  for i in "${!variants[@]}"; do
    read -r policy t rep order <<<"${variants[$i]}"
    [[ $rep == private ]] && private_rate[$t]=$(rate "$i")
  done
  echo
  echo "$ds ($data), $epochs epochs, medians of $reps"
  echo
  printf '| policy | threads | replicas | order | samples/s | vs serial | vs private bound | test accuracy |\n'
  printf '|---|---|---|---|---|---|---|---|\n'
  for i in "${!variants[@]}"; do
    read -r policy t rep order <<<"${variants[$i]}"
    m=$(rate "$i")
    resolved=$(field "$tmp/$ds-$i-$reps.json" "d['config']['replicate']")
    shown=$rep
    [[ $rep == off ]] && shown=shared
    [[ $rep == off && $t == 1 ]] && shown=off
    [[ $rep == auto ]] && shown="auto ($resolved)"
    bound=-
    [[ -n ${private_rate[$t]:-} ]] && bound=$(echo "$m ${private_rate[$t]}" | awk '{printf "%.2f", $1/$2}')
    acc=$(field "$tmp/$ds-$i-$reps.json" "round(100*d['epochs'][-1]['test_accuracy'], 2)")
    printf '| %s | %s | %s | %s | %.0f | %.2f | %s | %s%% |\n' "$policy" "$t" "$shown" "$order" \
      "$m" "$(echo "$m $base" | awk '{print $1/$2}')" "$bound" "$acc"
  done
  unset private_rate
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
