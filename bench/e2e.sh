#!/usr/bin/env bash
# End-to-end epoch benchmark: logistic regression on the RCV1-like data (100k rows, 47,236
# features, 75 nonzeros per row, Zipf(1) feature frequencies; 20k test rows), 10 epochs,
# with every hogwild policy at 1 and 2 threads, and in the same run the same files trained
# by LIBLINEAR (`liblinear-train -s 0`, L2-regularised logistic regression, primal trust
# region Newton) and by scikit-learn's SGDClassifier (log loss, 10 epochs, tol=None).
# Each configuration runs REPS times, interleaved with the others; medians are printed.
#
#   bench/e2e.sh                       defaults: HOGWILD=build/release/hogwild REPS=3
#   REPS=5 THREADS="1 2" EPOCHS=10 SKLEARN_ALPHA="0.0001 0.00001 0.000001" bench/e2e.sh
#
# Columns: train s = time in the training loop only (hogwild: sum of epoch times from the
# JSON report; sklearn: fit() alone); wall s = the whole command as a user runs it (hogwild:
# parse + 10 epochs + the per-epoch train and test evaluation the CLI always does; LIBLINEAR:
# liblinear-train, i.e. parse + train, which it does not separate; sklearn: load + fit).
# Installs liblinear-tools and python3-sklearn with apt-get when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh

rows=${ROWS:-100000}
features=${FEATURES:-47236}
nnz=${NNZ:-75}
zipf=${ZIPF:-1}
epochs=${EPOCHS:-10}
reps=${REPS:-3}
threads_list=${THREADS:-"1 2"}
seed=${SEED:-1}
# SGDClassifier L2 strengths: its default, and the best of 1e-4..1e-7 on the default data
sk_alphas=${SKLEARN_ALPHA:-"0.0001 0.00001"}
py=/usr/bin/python3  # Debian's interpreter, where python3-sklearn lives

install_missing liblinear-tools python3-sklearn

data=$(bench_data "$rows" "$features" "$nnz" "$zipf")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }

configs=("serial 1")
for t in $threads_list; do
  for p in racy atomic striped locked; do configs+=("$p $t"); done
done

for ((r = 1; r <= reps; r++)); do
  echo "round $r of $reps" >&2
  for c in "${configs[@]}"; do
    read -r policy threads <<<"$c"
    t0=$(now)
    "$hogwild" train --train "$data.train.svm" --test "$data.test.svm" --model logistic \
      --policy "$policy" --threads "$threads" --epochs "$epochs" --seed "$seed" --quiet \
      --json "$tmp/hogwild-$policy-$threads-$r.json" >/dev/null
    echo "$(now) $t0" | awk '{print $1 - $2}' >"$tmp/hogwild-$policy-$threads-$r.wall"
  done

  t0=$(now)
  liblinear-train -s 0 -q "$data.train.svm" "$tmp/liblinear.model" >/dev/null
  echo "$(now) $t0" | awk '{print $1 - $2}' >"$tmp/liblinear-$r.wall"
  liblinear-predict "$data.test.svm" "$tmp/liblinear.model" "$tmp/liblinear.pred" >"$tmp/liblinear-$r.out"

  for a in $sk_alphas; do
    t0=$(now)
    "$py" bench/sklearn_sgd.py "$data.train.svm" "$data.test.svm" "$epochs" "$seed" "$a" "$tmp/sklearn-$a-$r.json"
    echo "$(now) $t0" | awk '{print $1 - $2}' >"$tmp/sklearn-$a-$r.wall"
  done
done

"$py" - "$tmp" "$reps" "$epochs" "$rows" "$sk_alphas" "${configs[@]}" <<'EOF'
import json, re, statistics, sys
tmp, reps, epochs, rows, configs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[6:]
alphas = sys.argv[5].split()
med = statistics.median
def wall(name): return float(open(f"{tmp}/{name}.wall").read())

results = []  # (method, threads, train_s, wall_s, test_acc)
for c in configs:
    policy, threads = c.split()
    runs = [json.load(open(f"{tmp}/hogwild-{policy}-{threads}-{r}.json")) for r in range(1, reps + 1)]
    results.append((f"hogwild {policy}", threads, med(j["train_seconds"] for j in runs),
                    med(wall(f"hogwild-{policy}-{threads}-{r}") for r in range(1, reps + 1)),
                    med(j["final"]["test_accuracy"] for j in runs)))
acc = [float(re.search(r"Accuracy = ([0-9.]+)%", open(f"{tmp}/liblinear-{r}.out").read()).group(1)) / 100
       for r in range(1, reps + 1)]
results.append(("LIBLINEAR -s 0", "1", None, med(wall(f"liblinear-{r}") for r in range(1, reps + 1)), med(acc)))
sk_load = []
for a in alphas:
    sk = [json.load(open(f"{tmp}/sklearn-{a}-{r}.json")) for r in range(1, reps + 1)]
    results.append((f"sklearn SGDClassifier alpha={a}", "1", med(j["train_seconds"] for j in sk),
                    med(wall(f"sklearn-{a}-{r}") for r in range(1, reps + 1)),
                    med(j["test_accuracy"] for j in sk)))
    sk_load += [j["load_seconds"] for j in sk]
sk_load = med(sk_load)

serial_train, serial_wall = results[0][2], results[0][3]
print(f"data: {rows} rows, logistic regression, {epochs} epochs (LIBLINEAR: to its default tolerance); "
      f"median of {reps}; sklearn load_svmlight_files: {sk_load:.2f} s (in its wall s, not its train s)")
print("| method | threads | train s | s/epoch | samples/s | wall s | test acc | train s / hogwild serial's | wall s / hogwild serial's |")
print("|---|---|---|---|---|---|---|---|---|")
for method, threads, train_s, wall_s, a in results:
    if train_s is None:
        cells = ["-", "-", "-"]
        ratio = "-"
    else:
        cells = [f"{train_s:.3f}", f"{train_s / epochs:.4f}", f"{rows * epochs / train_s:,.0f}"]
        ratio = f"{train_s / serial_train:.2f}x"
    print(f"| {method} | {threads} | " + " | ".join(cells) +
          f" | {wall_s:.2f} | {100 * a:.2f}% | {ratio} | {wall_s / serial_wall:.2f}x |")
EOF
