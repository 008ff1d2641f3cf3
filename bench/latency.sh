#!/usr/bin/env bash
# Communication latency in virtual time: 16 equal workers (1us a sample), sparse logistic
# regression on the RCV1-like bench set, two epochs with 20 loss evaluations each, gradients
# summed, dynamic sharding. Single samples (fixed:1) and minibatches (fixed:16) under a write
# latency (an update lands that long after it is sent) and a read latency (a worker waits that
# long for the parameters after each update). Prints a markdown table; reports go to OUT
# (default data/generated/latency).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
out=${OUT:-data/generated/latency}
mkdir -p "$out"
data=$(bench_data 100000 47236 75 1 2>/dev/null).train.svm
target=${TARGET:-0.4}
to_target="next((p['virtual_seconds'] for p in r['curve'] if p['train_loss'] <= $target), None)"
staleness="'%.2f (%d)' % (r['staleness']['mean'], r['staleness']['p99'])"
micros="'%.1f (%.1f)' % (r['staleness']['micros']['mean'], r['staleness']['micros']['p99'])"
echo "| schedule | read latency | write latency | staleness mean (p99), updates | mean (p99), virtual us | virtual s to loss $target | virtual s, 2 epochs | final loss |"
echo "|---|---|---|---|---|---|---|---|"
run() {  # schedule read write
  local json="$out/$1-r$2-w$3.json"
  [[ -s $json ]] || "$hogwild" train --train "$data" --simulate 16 --clock virtual \
    --schedule "$1" --read-latency "$2" --write-latency "$3" --batch-reduce sum \
    --sharding dynamic --epochs 2 --evals-per-epoch 20 --step 0.5 --staleness-sample 1 \
    --quiet --json "$json" >/dev/null
  echo "| $1 | $2 | $3 | $(report_field "$json" "$staleness") | $(report_field "$json" "$micros") | $(report_field "$json" "'%.5f' % ($to_target or float('nan'))") | $(report_field "$json" "'%.5f' % r['final']['virtual_seconds']") | $(report_field "$json" "'%.4f' % r['final']['train_loss']") |"
}
for schedule in fixed:1 fixed:16; do
  for write in 0 1us 4us 16us 64us 256us; do run "$schedule" 0 "$write"; done
  for read in 4us 16us; do run "$schedule" "$read" 0; done
done
