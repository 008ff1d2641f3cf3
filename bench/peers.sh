#!/usr/bin/env bash
# hogwild against its peers for sparse binary classification, each run as its users run it, in
# one run: the same training and test files, the whole command timed (reading the data
# included), every contender once a round, REPS rounds, medians.
#
#   bench/peers.sh                  defaults: DATASETS="rcv1 binary ctr" REPS=3 THREADS=$(nproc)
#   DATASETS=ctr CTR_ROWS=2000000 REPS=5 bench/peers.sh
#
# Data sets (seeded, generated once under data/generated/):
#   rcv1    the RCV1-like rows: ROWS (100,000) training rows, 20,000 test rows, 47,236 power-law
#           features, 75 nonzeros a row, real values.
#   binary  the same rows with every value 1 (written once beside them).
#   ctr     `hogwild gen ctr`: CTR_ROWS (1,000,000) rows of 26 one-hot categorical fields hashed
#           into 2^22 features, 5% clicks; a tenth as many test rows.
# Contenders (alternatives separated by '|'):
#   hogwild   HOGWILD_ARGS, default "--threads THREADS|--threads 1 --policy serial" (the rest of
#             its options at their defaults: logistic loss, 10 epochs, --step auto);
#   fastText  `fasttext supervised` (lock-free Hogwild! SGD over bags of tokens, 5 epochs, lr 0.1,
#             softmax loss), FASTTEXT_ARGS, default "-thread THREADS|-thread THREADS -dim 10"
#             (dim 100 is its default); it reads `__label__Y fINDEX ...` lines written from the
#             LIBSVM files (not timed) and reads no values, so it runs on binary and ctr only;
#   LIBLINEAR `liblinear-train -s 0` (L2 logistic regression, trust-region Newton to its default
#             tolerance, C=1, one thread); LIBLINEAR=0 leaves it out;
#   sklearn   SGDClassifier(loss="log_loss", max_iter=10, tol=None) at each alpha of
#             SKLEARN_ALPHA (default "0.0001 0.00001": its default and the best on rcv1,
#             docs/benchmarks.md (d)), loaded with load_svmlight_files (bench/sklearn_sgd.py).
#
# Columns: wall s, the whole command; train s, the training alone where the contender reports it
# (hogwild's epochs from its JSON report, SGDClassifier's fit); test accuracy; test log loss
# (fastText's and LIBLINEAR's probabilities clipped to [1e-15, 1 - 1e-15]); wall s against the
# first hogwild configuration's. Installs fasttext, liblinear-tools and python3-sklearn (Debian
# packages) with apt-get when they are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh

datasets=${DATASETS:-"rcv1 binary ctr"}
rows=${ROWS:-100000}
ctr_rows=${CTR_ROWS:-1000000}
reps=${REPS:-3}
threads=${THREADS:-$(nproc)}
use_liblinear=${LIBLINEAR:-1}
sk_alphas=${SKLEARN_ALPHA:-"0.0001 0.00001"}
IFS='|' read -r -a hogwild_configs <<<"${HOGWILD_ARGS:-"--threads $threads|--threads 1 --policy serial"}"
IFS='|' read -r -a fasttext_configs <<<"${FASTTEXT_ARGS:-"-thread $threads|-thread $threads -dim 10"}"
py=/usr/bin/python3  # Debian's interpreter, where python3-sklearn lives

install_missing fasttext liblinear-tools python3-sklearn

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
# timed STEM COMMAND...: runs COMMAND, its wall seconds to $tmp/STEM.wall.
timed() {
  local stem=$1 t0
  shift
  t0=$(now)
  "$@"
  echo "$(now) $t0" | awk '{print $1 - $2}' >"$tmp/$stem.wall"
}

# binary_data: the RCV1-like rows with every value 1, written once beside them.
binary_data() {
  local source base part
  source=$(bench_data "$rows" 47236 75 1)
  base=$source-binary
  if [[ ! -s $base.test.svm ]]; then
    for part in train test; do
      sed -E 's/:[^ ]+/:1/g' "$source.$part.svm" >"$base.$part.svm.tmp"
      mv "$base.$part.svm.tmp" "$base.$part.svm"
    done
  fi
  echo "$base"
}

# as_tokens FILE: FILE's LIBSVM rows as fastText lines (the label a token, a token a feature).
as_tokens() { sed -E 's/^([^ ]+)/__label__\1/; s/ ([0-9]+):[^ ]+/ f\1/g' "$1"; }

for name in $datasets; do
  case $name in
    rcv1) data=$(bench_data "$rows" 47236 75 1) ;;
    binary) data=$(binary_data) ;;
    ctr) data=$(ctr_data "$ctr_rows") ;;
    *) echo "bench/peers.sh: unknown data set '$name' (expected rcv1, binary or ctr)" >&2; exit 2 ;;
  esac
  echo "$data" >"$tmp/$name.data"
  if [[ $name != rcv1 ]]; then
    as_tokens "$data.train.svm" >"$tmp/$name.train.txt"
    as_tokens "$data.test.svm" >"$tmp/$name.test.txt"
  fi
  for ((r = 1; r <= reps; r++)); do
    echo "$name: round $r of $reps" >&2
    for h in "${!hogwild_configs[@]}"; do
      # shellcheck disable=SC2086 # the configuration's options, split as a user types them
      timed "$name-hogwild-$h-$r" "$hogwild" train --train "$data.train.svm" \
        --test "$data.test.svm" ${hogwild_configs[$h]} --quiet \
        --json "$tmp/$name-hogwild-$h-$r.json" >/dev/null
    done
    if [[ $name != rcv1 ]]; then
      for f in "${!fasttext_configs[@]}"; do
        # shellcheck disable=SC2086
        timed "$name-fasttext-$f-$r" fasttext supervised -input "$tmp/$name.train.txt" \
          -output "$tmp/fasttext" ${fasttext_configs[$f]} -verbose 0 >/dev/null
        fasttext predict-prob "$tmp/fasttext.bin" "$tmp/$name.test.txt" 2 \
          >"$tmp/$name-fasttext-$f-$r.pred"
      done
    fi
    if ((use_liblinear)); then
      timed "$name-liblinear-$r" liblinear-train -s 0 -q "$data.train.svm" "$tmp/liblinear.model"
      liblinear-predict -b 1 "$data.test.svm" "$tmp/liblinear.model" \
        "$tmp/$name-liblinear-$r.pred" >/dev/null
    fi
    for a in $sk_alphas; do
      timed "$name-sklearn-$a-$r" "$py" bench/sklearn_sgd.py "$data.train.svm" "$data.test.svm" \
        10 1 "$a" "$tmp/$name-sklearn-$a-$r.json"
    done
  done
done

"$py" bench/peers_table.py "$tmp" "$reps" "$datasets" "$use_liblinear" "$sk_alphas" \
  "${#hogwild_configs[@]}" "${hogwild_configs[@]}" "${fasttext_configs[@]}"
