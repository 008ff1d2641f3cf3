#!/usr/bin/env bash
# The time --step auto takes before training (the report's step_calibration.seconds), two builds
# alternated REPS times on each data set, with the medians and the ladder each found (the same
# losses on both sides unless the builds calibrate differently). Data: Fashion-MNIST (softmax,
# MLP), the RCV1-like rows, 200k CTR-like rows, 20- and 200-class text-like rows and dense
# ratings, generated once under data/generated/calibration/.
#
#   HOGWILD_A=old/hogwild HOGWILD_B=build/release/hogwild bench/calibration_time.sh
#   THREADS (2), REPS (3), ONLY (a data set's name: fmnist-softmax, fmnist-mlp, rcv1, ctr, text20,
#   text200, ratings)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
a=${HOGWILD_A:-$hogwild} b=${HOGWILD_B:-$hogwild}
threads=${THREADS:-2} reps=${REPS:-3}
dir=data/generated/calibration
images=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
mkdir -p "$dir"
text() { # NAME CLASSES
  [[ -s $dir/$1.svm ]] || "$hogwild" gen sparse --rows 40000 --features 100000 \
    --nnz-per-row 40 --noise 0 --classes "$2" --seed 1 --out "$dir/$1.svm" >&2
}
[[ -s $dir/ctr.svm ]] || "$hogwild" gen ctr --rows 200000 --seed 1 --out "$dir/ctr.svm" >&2
[[ -s $dir/ratings.txt ]] || "$hogwild" gen ratings --users 2000 --items 1000 --density 0.2 \
  --noise 1 --rank 10 --seed 1 --out "$dir/ratings.txt" >&2
text text20 20
text text200 200
rcv1=$(bench_data 100000 47236 75 1)
idx="--format idx --train $images/train-images-idx3-ubyte.gz"
declare -A runs=(
  [fmnist-softmax]="$idx --model softmax"
  [fmnist-mlp]="$idx --model mlp"
  [rcv1]="--train $rcv1.train.svm"
  [ctr]="--train $dir/ctr.svm"
  [text20]="--train $dir/text20.svm --model softmax"
  [text200]="--train $dir/text200.svm --model softmax"
  [ratings]="--format ratings --train $dir/ratings.txt --step auto"
)
report=$(mktemp --suffix=.json)
trap 'rm -f "$report"' EXIT
seconds() { # BINARY ARGS...: the calibration's seconds and its ladder's losses
  "$@" --epochs 1 --threads "$threads" --quiet --json "$report" >/dev/null
  report_field "$report" "' '.join(map(str, [r['step_calibration']['seconds'], *r['step_calibration']['losses']]))"
}
echo "| data | A seconds (median of $reps) | B seconds | B / A | same ladder |"
echo "|---|---|---|---|---|"
for name in fmnist-softmax fmnist-mlp rcv1 ctr text20 text200 ratings; do
  [[ -z ${ONLY:-} || $ONLY == "$name" ]] || continue
  read -ra args <<<"${runs[$name]}"
  as=() bs=() same=yes
  for ((r = 0; r < reps; ++r)); do
    out_a=$(seconds "$a" train "${args[@]}")
    out_b=$(seconds "$b" train "${args[@]}")
    as+=("${out_a%% *}") bs+=("${out_b%% *}")
    [[ ${out_a#* } == "${out_b#* }" ]] || same=no
  done
  ma=$(printf '%s\n' "${as[@]}" | median)
  mb=$(printf '%s\n' "${bs[@]}" | median)
  printf '| %s | %.3f | %.3f | %.2f | %s |\n' "$name" "$ma" "$mb" \
    "$(/usr/bin/python3 -c "print($mb / $ma)")" "$same"
done
