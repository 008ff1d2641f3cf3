#!/usr/bin/env bash
# Stale synchronous parallel against fully asynchronous and bulk-synchronous training, in
# virtual time: K = 16 and 64 workers, one of them a 4x straggler, fixed:16 minibatches at 1us
# a sample (every sample 0.5us plus an exponential 0.5us), gradients summed, workers claiming
# chunks as they go (dynamic sharding), sparse logistic regression on the RCV1-like bench set, three epochs with 20 loss evaluations each. S = -1 is asynchronous,
# S = 0 bulk-synchronous. Prints a markdown table; reports go to OUT (default
# data/generated/ssp).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
out=${OUT:-data/generated/ssp}
mkdir -p "$out"
data=$(bench_data 100000 47236 75 1 2>/dev/null).train.svm
target=${TARGET:-0.4}
to_target="next((p['virtual_seconds'] for p in r['curve'] if p['train_loss'] <= $target), None)"
waits="r.get('bounded_staleness', {}).get('waits', 0)"
echo "| workers | S | staleness mean (max), updates | waits | virtual s to loss $target | virtual s, 3 epochs | final loss |"
echo "|---|---|---|---|---|---|---|"
for k in 16 64; do
  for s in -1 0 1 4 16 64; do
    json="$out/k$k-s$s.json"
    [[ -s $json ]] || "$hogwild" train --train "$data" --simulate "$k" --clock virtual \
      --schedule fixed:16 --sample-cost 400ns --straggler shifted-exp:100ns:500ns \
      --worker-speed 0.25 --batch-reduce sum --sharding dynamic --bounded-staleness "$s" \
      --epochs 3 --evals-per-epoch 20 --step 0.5 --staleness-sample 1 --quiet \
      --json "$json" >/dev/null
    echo "| $k | $s | $(report_field "$json" "'%.2f (%d)' % (r['staleness']['mean'], r['staleness']['max'])") | $(report_field "$json" "$waits") | $(report_field "$json" "'%.5f' % ($to_target or float('nan'))") | $(report_field "$json" "'%.5f' % r['final']['virtual_seconds']") | $(report_field "$json" "'%.4f' % r['final']['train_loss']") |"
  done
done
