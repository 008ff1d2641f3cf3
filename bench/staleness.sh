#!/usr/bin/env bash
# Measured staleness against injected delay and thread count (threaded mode), and the same
# protocol in simulation mode for reference. Prints a markdown table.
#
#   bench/staleness.sh                  THREADS="1 2" DELAYS="none const:4 ..." to change
set -euo pipefail
cd "$(dirname "$0")/.."
hogwild=${HOGWILD:-build/release/hogwild}
[[ -x $hogwild ]] || { cmake --preset release >/dev/null && cmake --build --preset release --target hogwild_cli; }
threads_list=${THREADS:-"1 2"}
delays=${DELAYS:-"none const:4 const:16 uniform:16 geometric:0.1"}
epochs=${EPOCHS:-3}
data=data/generated/staleness-50000x47236
mkdir -p data/generated
if [[ ! -s $data.train.svm ]]; then
  "$hogwild" gen sparse --rows 50000 --features 47236 --nnz-per-row 75 --zipf 1 --seed 1 \
    --out "$data.train.svm" >/dev/null 2>&1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
get() { /usr/bin/env python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
printf '| mode | workers | delay | injected mean | staleness mean | p50 | p90 | p99 | max | micros mean | micros p99 | samples/s |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
run() {
  local mode=$1 workers=$2 delay=$3 out=$tmp/r.json
  # Plain shared Hogwild! (replicas would make a no-delay run's staleness their merge delay).
  # Rows in a fresh permutation per epoch, as when docs/staleness.md's figures were taken.
  local args=(--threads "$workers" --replicate "${REPLICATE:-off}" --order "${ORDER:-rows}")
  [[ $mode == simulate ]] && args=(--simulate "$workers" --order "${ORDER:-rows}")
  "$hogwild" train --train "$data.train.svm" --epochs "$epochs" --delay "$delay" \
    --staleness-sample 0.1 --quiet --json "$out" "${args[@]}" >/dev/null
  get "$out" "'| $mode | $workers | $delay | %.2f | %.2f | %g | %g | %g | %g | %.2f | %.2f | %.0f |' % (j['delay']['mean'], j['staleness']['mean'], j['staleness']['p50'], j['staleness']['p90'], j['staleness']['p99'], j['staleness']['max'], j['staleness']['micros']['mean'], j['staleness']['micros']['p99'], j['samples_per_second'])"
}
for t in $threads_list; do for d in $delays; do run threads "$t" "$d"; done; done
for d in $delays; do run simulate 2 "$d"; done
