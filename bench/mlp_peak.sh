#!/usr/bin/env bash
# The MLP's training FLOP rate against the machine's single-precision GEMM peak, both measured
# in this one run: Eigen's 1024 x 1024 products on THREADS threads at once (the best of 5: a
# shared machine's load only lowers a run)
# (build/release/bench/hogwild_bench_gemm, the same code generation as the models), then
# `hogwild train --model mlp` on Fashion-MNIST with THREADS racy workers. An MLP sample costs
# the useful FLOPs of its three products per layer: forward (2 x out x in), the weight
# gradient (2 x out x in) and, above the first layer, the input gradient (2 x out x in); biases,
# activations and the optimiser step are not counted. The rate is printed over the training
# passes (the epochs' seconds) and, where --step auto chose the step, also with the step search
# counted, as the report's samples/s counts it (its trials' FLOPs are not counted).
#
#   bench/mlp_peak.sh                  # THREADS (2), HIDDEN (256), BATCH (32), EPOCHS (3)
#   TRAIN_ARGS="--optimizer sgd --step 0.02" bench/mlp_peak.sh    # options added to the run
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
gemm=${GEMM:-build/release/bench/hogwild_bench_gemm}
[[ -x $gemm ]] || cmake --build --preset release --target hogwild_bench_gemm >&2
threads=${THREADS:-2} hidden=${HIDDEN:-256} batch=${BATCH:-32} epochs=${EPOCHS:-3}
images=${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}
report=$(mktemp --suffix=.json)
trap 'rm -f "$report"' EXIT

peak=$("$gemm" --benchmark_filter="^gemm/square/n:1024/real_time/threads:$threads\$" \
  --benchmark_format=json --benchmark_repetitions=5 |
  /usr/bin/python3 -c "import json, sys
rows = [b for b in json.load(sys.stdin)['benchmarks'] if b.get('run_type') == 'iteration']
print(max(b['FLOP/s'] for b in rows))")
"$hogwild" train --format idx --train "$images/train-images-idx3-ubyte.gz" \
  --test "$images/t10k-images-idx3-ubyte.gz" --model mlp --hidden "$hidden" --batch "$batch" \
  --threads "$threads" --epochs "$epochs" ${TRAIN_ARGS:-} --quiet --json "$report" >/dev/null
/usr/bin/python3 - "$report" "$peak" "$hidden" "$threads" <<'PY'
import json, sys
report, peak, hidden, threads = json.load(open(sys.argv[1])), float(sys.argv[2]), sys.argv[3], sys.argv[4]
widths = [784] + [int(h) for h in hidden.split(",")] + [10]
layers = [widths[i] * widths[i + 1] for i in range(len(widths) - 1)]
flops = 4 * sum(layers) + 2 * sum(layers[1:])
passes = sum(e["seconds"] for e in report["epochs"])
rate = report["samples"] / passes * flops
print(f"GEMM peak, {threads} threads at once (Eigen, 1024^3, best of 5): {peak / 1e9:.1f} GFLOP/s")
print(f"MLP 784-{hidden.replace(',', '-')}-10, {report['config']['optimizer']}, {threads} threads: "
      f"{report['samples'] / passes:,.0f} samples/s in the training passes x {flops:,} FLOPs = "
      f"{rate / 1e9:.1f} GFLOP/s, {100 * rate / peak:.0f}% of the peak (test accuracy "
      f"{100 * report['final']['test_accuracy']:.2f}%)")
calibration = report.get("step_calibration")
if calibration:
    whole = report["samples_per_second"] * flops
    print(f"  with the step search counted ({calibration['seconds']:.3f} s of "
          f"{report['train_seconds']:.3f} s): {report['samples_per_second']:,.0f} samples/s, "
          f"{whole / 1e9:.1f} GFLOP/s, {100 * whole / peak:.0f}% of the peak")
PY
