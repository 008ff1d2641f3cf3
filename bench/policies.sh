#!/usr/bin/env bash
# samples/s of each update policy relative to `serial` on the same data, at 1 and 2 threads
# (or THREADS="1 2 4 ..."), measured side by side in one run. Each configuration runs REPS
# times, interleaved with the others, and the median is reported.
#
#   bench/policies.sh [DATA_ARGS...]     default data: the RCV1-like demo set
#   FEATURES=10000000 ZIPF=0 bench/policies.sh   the 10M-feature uniform set
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh

features=${FEATURES:-47236}
zipf=${ZIPF:-1}
rows=${ROWS:-100000}
nnz=${NNZ:-75}
epochs=${EPOCHS:-10}
reps=${REPS:-3}
threads_list=${THREADS:-"1 2"}
data=$(bench_data "$rows" "$features" "$nnz" "$zipf")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
configs=("serial 1")
for t in $threads_list; do
  for p in racy atomic striped locked; do configs+=("$p $t"); done
done

for ((r = 1; r <= reps; r++)); do
  for c in "${configs[@]}"; do
    read -r policy threads <<<"$c"
    "$hogwild" train --train "$data.train.svm" --test "$data.test.svm" --policy "$policy" \
      --threads "$threads" --epochs "$epochs" --quiet --json "$tmp/$policy-$threads-$r.json" >/dev/null
  done
done

field() { grep -o "\"$2\": [-0-9.e+]*" "$1" | head -1 | awk '{print $2}'; }
rate() { for ((r = 1; r <= reps; r++)); do field "$tmp/$1-$2-$r.json" samples_per_second; done | median; }

serial=$(rate serial 1)
echo "data: $rows rows x $features features, $nnz nonzeros/row, zipf $zipf; $epochs epochs; median of $reps"
printf '| %-8s | %7s | %14s | %10s | %13s |\n' policy threads samples/s "vs serial" test_accuracy
printf '|----------|---------|----------------|------------|---------------|\n'
for c in "${configs[@]}"; do
  read -r policy threads <<<"$c"
  rt=$(rate "$policy" "$threads")
  acc=$(grep -o '"test_accuracy": [0-9.e+-]*' "$tmp/$policy-$threads-1.json" | tail -1 | awk '{print $2}')
  printf '| %-8s | %7s | %14.0f | %9.2fx | %12.2f%% |\n' "$policy" "$threads" "$rt" \
    "$(echo "$rt $serial" | awk '{print $1 / $2}')" "$(echo "$acc" | awk '{print 100 * $1}')"
done
