#!/usr/bin/env bash
# Dai et al. (2018) in simulation mode: 8 virtual workers, injected staleness 0/4/8/16 with
# uniform (0..2s, mean s) and geometric (mean s) delays, five optimisers, three models.
# Delays count each worker's own steps, or with UNIT=global every worker's steps, as the paper
# counts them (--delay-unit global). Reports go to OUT (default data/generated/dai, or
# data/generated/dai-global), figures beside them.
#   bench/dai_experiments.sh [softmax|mlp|mf]...     (default: all three)
#   UNIT=global bench/dai_experiments.sh softmax mf
set -euo pipefail
cd "$(dirname "$0")/.."
hogwild=${HOGWILD:-build/release/hogwild}
unit=${UNIT:-own}
out=${OUT:-data/generated/dai$([[ $unit == own ]] || echo "-$unit")}
limit=${LIMIT:-10000}
F=/usr/share/datasets/fashion-mnist
delays=none,uniform:8,uniform:16,uniform:32,geometric:0.2,geometric:0.111,geometric:0.0588
optimizers=sgd,momentum,adagrad,rmsprop,adam
models=("$@")
((${#models[@]})) || models=(softmax mlp mf)
mkdir -p "$out"
# A sweep exits 4 when some of its runs failed (diverged): those are results too, in results.csv.
sweep() { "$hogwild" sweep "$@" || (($? == 4)); }
common=(--simulate 8 --policy serial --delay-unit "$unit" --staleness-sample 0.05
        --coherence-sample 0.05 --seed 1)
for m in "${models[@]}"; do
  case $m in
    softmax)
      sweep --out "$out/softmax" --grid delay=$delays --grid optimizer=$optimizers \
        --target-loss 0.65 --format idx --train $F/train-images-idx3-ubyte.gz \
        --test $F/t10k-images-idx3-ubyte.gz --limit "$limit" --model softmax --epochs 10 "${common[@]}" ;;
    mlp)
      sweep --out "$out/mlp" --grid delay=$delays --grid optimizer=$optimizers \
        --target-loss 0.55 --format idx --train $F/train-images-idx3-ubyte.gz \
        --test $F/t10k-images-idx3-ubyte.gz --limit "$limit" --model mlp --hidden 128 --epochs 10 "${common[@]}" ;;
    mf)
      if [[ ! -s $out/ratings.test.txt ]]; then
        "$hogwild" gen ratings --users 1000 --items 800 --rank 8 --density 0.1 --noise 0.3 --seed 1 \
          --out "$out/ratings.txt" --test-out "$out/ratings.test.txt" --test-fraction 0.1
      fi
      sweep --out "$out/mf" --grid delay=$delays --grid optimizer=$optimizers \
        --target-loss 0.08 --format ratings --train "$out/ratings.txt" --test "$out/ratings.test.txt" \
        --model mf --rank 8 --epochs 10 "${common[@]}" ;;
    *) echo "dai_experiments.sh: unknown model '$m'; expected softmax, mlp or mf" >&2; exit 2 ;;
  esac
  mkdir -p "$out/figures-$m"
  tools/plot "$out/$m/results.csv" --out "$out/figures-$m" >/dev/null
done
