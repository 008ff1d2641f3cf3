#!/usr/bin/env bash
# Thread scaling end to end, side by side in one run: logistic regression, 10 epochs, at each
# thread count of THREADS, on each data set of DATASETS:
#   47k   the RCV1-like data (100k rows, 47,236 features, 75 nonzeros per row, Zipf 1)
#   10m   100k rows of uniform features over 10M
#   2m    the RCV1-like data with 2M rows (an epoch long enough that per-epoch costs vanish on
#         many cores; 2.2 GB of text, generated once)
#   ctr   CTR-like data, 2M rows: 26 one-hot categorical fields with power-law categories
#         hashed into 4,194,304 features, 5% clicks (`gen ctr`; the first fields have a few
#         categories, so a handful of weights are written by nearly every row)
# Variants:
#   serial 1         one worker, no synchronisation (the reference)
#   racy 1 rows      one worker, rows in a fresh permutation each epoch (--order rows)
#   racy 1           one worker, the default order (--order blocks)
#   racy T shared    T workers writing the shared model (plain Hogwild!, --replicate off)
#   racy T auto      T workers with the default --replicate (auto replicates models of up
#                    to 1M weights with 2 to 17 workers, and of wider ones the 4096 hottest
#                    features where they hold a quarter of the nonzeros: on ctr, not on 10m)
#   racy T hot       T workers with replicas of the HOT (default 4096) features the most rows
#                    hold, merged every 2048 / (T - 1) samples (auto's interval), the other
#                    features shared (--hot-features; not on 47k, whose whole model auto
#                    replicates)
#   racy T M         T workers with replicas merged every M samples, for each M in MERGES
#                    (47k and 2m data; none by default)
#   racy T private   T workers merging once per epoch: the no-sharing bound, end to end (not
#                    on 10m: there a merge scans 40 MB every 100k rows, so the bound is the
#                    microbenchmark's private/racy, bench/micro.sh; the others' epochs are
#                    long enough for a merge a epoch to cost little)
# Runs are interleaved REPS times; the table gives medians of samples/s, the ratio to serial
# and to the private bound at the same thread count, and the last repetition's test accuracy
# and test loss (on ctr, where 95% of the rows are no click, the loss is the figure to read).
#
#   THREADS="1 2 4 8 16" REPS=3 bench/scaling.sh        (HOGWILD=path/to/hogwild, PYTHON=...,
#                                                        HOT=4096)
#   DATASETS=47k bench/scaling.sh        (any of 47k 10m 2m ctr; the default is "47k 10m", and
#                                         "47k 10m 2m ctr" on machines of 8 or more cores)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
python=${PYTHON:-/usr/bin/python3}
[[ -x $python ]] || python=python3
reps=${REPS:-3}
hot=${HOT:-4096}
epochs=${EPOCHS:-10}
threads=${THREADS:-1 2}
default_datasets="47k 10m"
(($(nproc) >= 8)) && default_datasets="47k 10m 2m ctr"
datasets=${DATASETS:-$default_datasets}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { "$python" -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')" >&2
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ds in $datasets; do
  case $ds in
    47k) data=$(bench_data 100000 47236 75 1) ;;
    10m) data=$(bench_data 100000 10000000 75 0) ;;
    2m) data=$(bench_data 2000000 47236 75 1) ;;
    ctr) data=$(ctr_data 2000000) ;;
    *) echo "scaling.sh: DATASETS: expected 47k, 10m, 2m or ctr, found '$ds'" >&2; exit 2 ;;
  esac
  variants=("serial 1 off blocks" "racy 1 off rows" "racy 1 off blocks")
  for t in $threads; do
    [[ $t == 1 ]] && continue
    variants+=("racy $t off blocks")
    [[ $ds != 47k ]] && variants+=("racy $t hot blocks")
    [[ $ds == 10m ]] && continue
    variants+=("racy $t auto blocks")
    if [[ $ds == 47k || $ds == 2m ]]; then
      for m in ${MERGES:-}; do variants+=("racy $t $m blocks"); done
    fi
    variants+=("racy $t private blocks")
  done
  # Every variant trains with the step --step auto picks on this data, given explicitly: the
  # calibration is serial, and counted in a run's training time it would cap the speed-up.
  "$hogwild" train --train "$data.train.svm" --epochs 1 --quiet --json "$tmp/$ds-step.json" \
    >/dev/null
  step=$(field "$tmp/$ds-step.json" "d['step_calibration']['chosen']")
  echo "$ds: step $step (--step auto's choice)" >&2
  for ((r = 1; r <= reps; r++)); do
    for i in "${!variants[@]}"; do
      read -r policy t rep order <<<"${variants[$i]}"
      merge=$rep
      extra=()
      [[ $rep == private ]] && merge=16777216
      if [[ $rep == hot ]]; then
        merge=$((2048 / (t - 1) > 128 ? 2048 / (t - 1) : 128))
        extra=(--hot-features "$hot")
      fi
      "$hogwild" train --train "$data.train.svm" --test "$data.test.svm" --policy "$policy" \
        --threads "$t" --replicate "$merge" "${extra[@]}" --order "$order" --epochs "$epochs" \
        --quiet --step "$step" --json "$tmp/$ds-$i-$r.json" >/dev/null
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
  echo "$ds ($data), $epochs epochs, step $step, medians of $reps"
  echo
  printf '| policy | threads | replicas | order | samples/s | vs serial | vs private bound | test accuracy | test loss |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
  for i in "${!variants[@]}"; do
    read -r policy t rep order <<<"${variants[$i]}"
    m=$(rate "$i")
    resolved=$(field "$tmp/$ds-$i-$reps.json" "d['config']['replicate']")
    shown=$rep
    [[ $rep == off ]] && shown=shared
    [[ $rep == off && $t == 1 ]] && shown=off
    if [[ $rep == auto ]]; then
      auto_hot=$(field "$tmp/$ds-$i-$reps.json" "d['config'].get('hot_features', 0)")
      shown="auto ($resolved$( ((auto_hot)) && echo ", hot $auto_hot"))"
    fi
    [[ $rep == hot ]] && shown="hot $hot ($resolved)"
    bound=-
    [[ -n ${private_rate[$t]:-} ]] && bound=$(echo "$m ${private_rate[$t]}" | awk '{printf "%.2f", $1/$2}')
    acc=$(field "$tmp/$ds-$i-$reps.json" "round(100*d['epochs'][-1]['test_accuracy'], 2)")
    loss=$(field "$tmp/$ds-$i-$reps.json" "round(d['epochs'][-1]['test_loss'], 4)")
    printf '| %s | %s | %s | %s | %.0f | %.2f | %s | %s%% | %s |\n' "$policy" "$t" "$shown" \
      "$order" "$m" "$(echo "$m $base" | awk '{print $1/$2}')" "$bound" "$acc" "$loss"
  done
  unset private_rate
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
