#!/usr/bin/env bash
# Staleness against the number of workers K in virtual time (Al-Lawati et al. 2021's claim:
# with fixed-time minibatches staleness stops growing with K, with fixed-size ones it grows
# linearly). Sparse logistic regression on the RCV1-like bench set, two epochs per run, every
# update measured, minibatch gradients summed (a step per sample, as with single samples),
# workers claiming chunks as they go (dynamic sharding), 20 loss evaluations per epoch for the
# virtual time to a training loss of TARGET (default 0.4); K = 2, 4, ..., 256 virtual workers,
# fixed:16 against time:16us (a sample costs 1us, so a full-speed worker's window holds 16
# samples), with identical workers and with heterogeneous ones (every sample 0.5us plus an
# exponential 0.5us, worker 0 a 4x straggler). Prints a markdown table; the runs' reports go to OUT (default
# data/generated/simulated-workers).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
out=${OUT:-data/generated/simulated-workers}
mkdir -p "$out"
data=$(bench_data 100000 47236 75 1 2>/dev/null).train.svm
target=${TARGET:-0.4}
to_target="next((p['virtual_seconds'] for p in r['curve'] if p['train_loss'] <= $target), None)"
echo "| workers | schedule | speeds | staleness mean (p99), updates | mean (p99), virtual us | mean batch | virtual s to loss $target | final loss |"
echo "|---|---|---|---|---|---|---|---|"
for speeds in equal mixed; do
  for schedule in fixed:16 time:16us; do
    for k in 2 4 8 16 32 64 128 256; do
      extra=()
      [[ $speeds == mixed ]] && extra=(--sample-cost 400ns --straggler shifted-exp:100ns:500ns
        --worker-speed 0.25)
      json="$out/k$k-${schedule//:/}-$speeds.json"
      [[ -s $json ]] || "$hogwild" train --train "$data" --simulate "$k" --clock virtual \
        --schedule "$schedule" --batch-reduce sum --sharding dynamic --epochs 2 \
        --evals-per-epoch 20 --step 0.5 --staleness-sample 1 --quiet "${extra[@]}" \
        --json "$json" >/dev/null
      echo "| $k | $schedule | $speeds | $(report_field "$json" "'%.2f (%d)' % (r['staleness']['mean'], r['staleness']['p99'])") | $(report_field "$json" "'%.1f (%.1f)' % (r['staleness']['micros']['mean'], r['staleness']['micros']['p99'])") | $(report_field "$json" "'%.1f' % r['batch_size']['mean']") | $(report_field "$json" "'%.5f' % ($to_target or float('nan'))") | $(report_field "$json" "'%.4f' % r['final']['train_loss']") |"
    done
  done
done
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 bench/plot_workers.py "$out" "$target" "$out/workers-staleness.png" >/dev/null
fi
