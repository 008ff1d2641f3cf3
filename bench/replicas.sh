#!/usr/bin/env bash
# Per-worker replicas against plain shared Hogwild!, end to end, side by side in one run.
# MODEL=logistic (the default): RCV1-like data (100k rows, 47,236 features, 75 nonzeros per
# row, Zipf 1); MODEL=softmax or mlp: Fashion-MNIST (60k training, 10k test images). EPOCHS
# epochs; runs interleaved REPS times, medians of samples/s reported with the ratios to 1-thread
# serial and to the private bound, and the test accuracy of the last repetition. TRAIN_ARGS are
# added to every run (e.g. --step 0.001: a fixed step instead of the models' calibration).
#   serial 1        one worker, no synchronisation (the reference)
#   racy 1          one worker, plain loop
#   racy T off      T workers writing the shared model (plain Hogwild!)
#   racy T M        T workers with replicas merged every M samples
#   racy T private  T workers merging once per epoch: what the machine allows without
#                   sharing (the no-sharing bound, end to end)
#
#   REPS=5 EPOCHS=10 THREADS=2 MERGES="256 1024 4096 16384" bench/replicas.sh
#   MODEL=mlp EPOCHS=3 MERGES="64 256" TRAIN_ARGS="--step 0.001" bench/replicas.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
reps=${REPS:-5}
epochs=${EPOCHS:-10}
threads=${THREADS:-2}
model=${MODEL:-logistic}
case $model in
  logistic)
    merges=${MERGES:-256 1024 4096 16384}
    data=$(bench_data 100000 47236 75 1 2>/dev/null)
    data_args=(--train "$data.train.svm" --test "$data.test.svm")
    ;;
  softmax | mlp)
    merges=${MERGES:-64 256 1024}
    images=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
    data_args=(--model "$model" --format idx --train "$images/train-images-idx3-ubyte.gz"
      --test "$images/t10k-images-idx3-ubyte.gz")
    ;;
  *) echo "replicas.sh: MODEL: expected logistic, softmax or mlp, found '$model'" >&2; exit 2 ;;
esac
read -r -a train_args <<<"${TRAIN_ARGS:-}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { /usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

variants=("serial 1 off" "racy 1 off" "racy $threads off")
for m in $merges; do variants+=("racy $threads $m"); done
variants+=("racy $threads private")
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((r = 1; r <= reps; r++)); do
  for i in "${!variants[@]}"; do
    read -r policy t rep <<<"${variants[$i]}"
    merge=$rep
    [[ $rep == private ]] && merge=16777216
    "$hogwild" train "${data_args[@]}" "${train_args[@]}" --policy "$policy" \
      --threads "$t" --replicate "$merge" --epochs "$epochs" --quiet \
      --json "$tmp/$i-$r.json" >/dev/null
  done
  echo "repetition $r of $reps done" >&2
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
rate() { for ((r = 1; r <= reps; r++)); do field "$tmp/$1-$r.json" "d['samples_per_second']"; done | median; }
base=$(rate 0)
private=$(rate $((${#variants[@]} - 1)))  # the last variant: merging once per epoch
printf '| policy | threads | replicas (merge every) | samples/s (median of %s) | vs serial | vs private | test accuracy | staleness mean |\n' "$reps"
printf '|---|---|---|---|---|---|---|---|\n'
for i in "${!variants[@]}"; do
  read -r policy t rep <<<"${variants[$i]}"
  m=$(rate "$i")
  acc=$(field "$tmp/$i-$reps.json" "round(100*d['epochs'][-1]['test_accuracy'], 2)")
  stale=$(field "$tmp/$i-$reps.json" "round(d['staleness']['mean'], 1)")
  vs_private=-
  ((t > 1)) && vs_private=$(echo "$m $private" | awk '{printf "%.2f", $1/$2}')
  printf '| %s | %s | %s | %.0f | %.2f | %s | %s | %s |\n' "$policy" "$t" "$rep" "$m" \
    "$(echo "$m $base" | awk '{print $1/$2}')" "$vs_private" "$acc" "$stale"
done
