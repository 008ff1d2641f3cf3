#!/usr/bin/env bash
# Cost of the delay layer and of staleness/coherence measurement, side by side in one run:
#   base     the CLI built from the commit before the delay layer existed (BASE_REV)
#   none     this build, --delay none, measurement off
#   default  this build, --delay none, default sampling (staleness 0.01, coherence 0.01)
#   full     this build, --delay none, every update measured (rate 1)
# Runs are interleaved REPS times; medians of samples/s are reported with ratios to base.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
base_rev=${BASE_REV:-7b9329f}
base_dir=${BASE_DIR:-build/base-$base_rev}
reps=${REPS:-7}
epochs=${EPOCHS:-5}
if [[ ! -x $base_dir/build/hogwild ]]; then
  rm -rf "$base_dir" && mkdir -p "$base_dir"
  git archive "$base_rev" | tar -x -C "$base_dir"
  cmake -S "$base_dir" -B "$base_dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DHOGWILD_BUILD_TESTS=OFF -DHOGWILD_BUILD_BENCHES=OFF >/dev/null
  cmake --build "$base_dir/build" --target hogwild_cli >/dev/null
fi
data=$(bench_data 100000 47236 75 1 2>/dev/null)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rate() { grep -o '"samples_per_second": [-0-9.e+]*' "$1" | awk '{print $2}'; }
configs=(base none default full)
for policy_threads in "serial 1" "racy 2"; do
  read -r policy threads <<<"$policy_threads"
  for ((r = 1; r <= reps; r++)); do
    for c in "${configs[@]}"; do
      common=(train --train "$data.train.svm" --policy "$policy" --threads "$threads" --epochs "$epochs" --quiet --json "$tmp/$c-$policy-$r.json")
      # The base build only knows a fresh permutation of rows per epoch: this build does the same.
      [[ $c == base ]] || common+=(--order rows)
      case $c in
        base) "$base_dir/build/hogwild" "${common[@]}" >/dev/null ;;
        none) "$hogwild" "${common[@]}" --staleness-sample 0 --coherence-sample 0 >/dev/null ;;
        default) "$hogwild" "${common[@]}" >/dev/null ;;
        full) "$hogwild" "${common[@]}" --staleness-sample 1 --coherence-sample 1 >/dev/null ;;
      esac
    done
  done
done
printf '| policy | threads | variant | samples/s (median of %s) | vs base |\n|---|---|---|---|---|\n' "$reps"
for policy_threads in "serial 1" "racy 2"; do
  read -r policy threads <<<"$policy_threads"
  b=$(for ((r = 1; r <= reps; r++)); do rate "$tmp/base-$policy-$r.json"; done | median)
  for c in "${configs[@]}"; do
    m=$(for ((r = 1; r <= reps; r++)); do rate "$tmp/$c-$policy-$r.json"; done | median)
    printf '| %s | %s | %s | %.0f | %.3f |\n' "$policy" "$threads" "$c" "$m" "$(echo "$m $b" | awk '{print $1/$2}')"
  done
done
