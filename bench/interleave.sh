#!/usr/bin/env bash
# Two `hogwild train` configurations on the same data, run alternately REPS times at
# real-time priority when allowed (chrt -f 50, as root; plain otherwise), A first in odd
# repetitions and B first in even ones: medians and ranges of the runs' samples/s and the ratio
# B/A of the medians, then the upper quartile of every epoch's samples/s on each side and their
# ratio (steadier on a shared machine). Each side may use its own CLI binary, to compare two
# builds.
#
#   REPS=12 bench/interleave.sh "--threads 2 --staleness-sample 0 --coherence-sample 0" "--threads 2"
#   HOGWILD_A=old/hogwild HOGWILD_B=build/release/hogwild bench/interleave.sh "--threads 2" "--threads 2"
#
# Data: the RCV1-like bench set (100k rows, 47,236 features, Zipf 1), or DATA_ARGS (the
# data options of both sides, e.g. DATA_ARGS="--model softmax --format idx --train
# /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"); EPOCHS (default 10).
# To build an older commit's CLI for one side:
#   git worktree add /tmp/old REV && cmake -S /tmp/old -B /tmp/old/build -G Ninja \
#     -DCMAKE_BUILD_TYPE=Release -DHOGWILD_BUILD_TESTS=OFF -DHOGWILD_BUILD_BENCHES=OFF &&
#   cmake --build /tmp/old/build --target hogwild_cli     # then HOGWILD_A=/tmp/old/build/hogwild
set -euo pipefail
cd "$(dirname "$0")/.."
(($# == 2)) || { echo "usage: bench/interleave.sh 'OPTIONS A' 'OPTIONS B'" >&2; exit 2; }
source bench/common.sh
bin_a=${HOGWILD_A:-$hogwild}
bin_b=${HOGWILD_B:-$hogwild}
reps=${REPS:-9}
epochs=${EPOCHS:-10}
if [[ -n ${DATA_ARGS:-} ]]; then
  read -r -a data_args <<<"$DATA_ARGS"
else
  data_args=(--train "$(bench_data 100000 47236 75 1 2>/dev/null).train.svm")
fi
priority=()
chrt -f 50 true 2>/dev/null && priority=(chrt -f 50)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rate() { grep -o '"samples_per_second": [-0-9.e+]*' "$1" | awk '{print $2}'; }
summary() { sort -g | awk '{a[NR]=$1} END {printf "%.0f %.0f %.0f\n", a[int((NR+1)/2)], a[1], a[NR]}'; }
# run_side SIDE REP: one run of side a or b, its report in $tmp/SIDE-REP.json.
run_side() {
  local bin=$bin_a options=$options_a
  [[ $1 == b ]] && bin=$bin_b options=$options_b
  # shellcheck disable=SC2086
  "${priority[@]}" "$bin" train "${data_args[@]}" --epochs "$epochs" --quiet \
    --json "$tmp/$1-$2.json" $options >/dev/null
}
options_a=$1
options_b=$2
for ((r = 1; r <= reps; r++)); do
  # A first in odd repetitions, B first in even ones: back-to-back runs on a shared virtual
  # machine were seen to alternate between fast and slow whichever build ran.
  order=(a b)
  ((r % 2)) || order=(b a)
  for side in "${order[@]}"; do run_side "$side" "$r"; done
done
# epoch_quartile SIDE: the upper quartile of the samples/s of every full epoch of SIDE's runs.
# Other work on the machine slows some epochs and never speeds one up, so this is steadier than
# the runs' medians where the machine is shared.
epoch_quartile() {
  /usr/bin/python3 - "$tmp"/"$1"-*.json <<'PY'
import json, sys
rates = []
for path in sys.argv[1:]:
    report = json.load(open(path))
    trained = [e for e in report["epochs"] if e["epoch"] >= 1]  # epoch 0: the initial model
    per_epoch = report["samples"] / max(1, len(trained))
    rates += [per_epoch / e["seconds"] for e in trained if e["seconds"] > 0]
rates.sort()
print(f"{rates[(3 * (len(rates) - 1)) // 4]:.0f} {len(rates)}" if rates else "0 0")
PY
}
read -r ma la ha < <(for ((r = 1; r <= reps; r++)); do rate "$tmp/a-$r.json"; done | summary)
read -r mb lb hb < <(for ((r = 1; r <= reps; r++)); do rate "$tmp/b-$r.json"; done | summary)
printf '| side | options | samples/s (median of %s) | range |\n|---|---|---|---|\n' "$reps"
printf '| A | %s | %s | %s-%s |\n| B | %s | %s | %s-%s |\n' "$1" "$ma" "$la" "$ha" "$2" "$mb" "$lb" "$hb"
echo "B/A = $(echo "$mb $ma" | awk '{printf "%.3f", $1/$2}')"
read -r qa na < <(epoch_quartile a)
read -r qb nb < <(epoch_quartile b)
echo "epochs' upper quartile: A $qa ($na epochs), B $qb ($nb epochs), B/A = $(echo "$qb $qa" |
  awk '{printf "%.3f", ($2 > 0 ? $1 / $2 : 0)}')"
