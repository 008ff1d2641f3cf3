#!/usr/bin/env bash
# Static against dynamic sharding with a slow worker: how many samples each worker takes, a
# question of wall-clock speed (the tests check only that every sample is taken once). Two
# threads, the second at SPEED of the first (--worker-speed 1,SPEED, busy-waiting), on the
# RCV1-like data (logistic) and, with IDX=..., Fashion-MNIST softmax; prints per-worker sample
# counts, their ratio and samples/s, REPS runs each.
#
#   REPS=3 EPOCHS=2 SPEED=0.25 bench/dynamic_sharding.sh
#   IDX=/usr/share/datasets/fashion-mnist bench/dynamic_sharding.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
reps=${REPS:-3}
epochs=${EPOCHS:-2}
speed=${SPEED:-0.25}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [[ -n ${IDX:-} ]]; then
  data=(--model softmax --format idx --train "$IDX/train-images-idx3-ubyte.gz"
    --train-labels "$IDX/train-labels-idx1-ubyte.gz")
else
  base=$(bench_data 100000 47236 75 1 2>/dev/null)
  data=(--train "$base.train.svm")
fi
echo "| sharding | run | worker 0 samples | worker 1 samples | ratio | samples/s |"
echo "|---|---|---|---|---|---|"
for ((rep = 1; rep <= reps; rep++)); do
  for sharding in static dynamic; do
    "$hogwild" train "${data[@]}" --threads 2 --epochs "$epochs" --sharding "$sharding" \
      --worker-speed "1,$speed" --quiet --json "$tmp/r.json" >/dev/null
    /usr/bin/python3 - "$tmp/r.json" "$sharding" "$rep" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
w = [p["samples"] for p in r["batch_size"]["per_worker"]]
print(f"| {sys.argv[2]} | {sys.argv[3]} | {w[0]} | {w[1]} | {w[0] / max(w[1], 1):.2f} "
      f"| {r['samples_per_second']:.0f} |")
PY
  done
done
