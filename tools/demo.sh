#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install what is missing, build (Release),
# generate the default RCV1-like data once, train with every core and compare with a serial
# run of the same data. Extra arguments go to `hogwild train` (e.g. --epochs 20); an option given
# there (--epochs 20 or --epochs=20) replaces the script's default for it.
set -euo pipefail
cd "$(dirname "$0")/.."
args=("$@")

# given OPTION: whether the extra arguments give OPTION (as OPTION, OPTION VALUE or OPTION=VALUE).
given() {
  local arg
  for arg in "${args[@]}"; do
    [[ $arg == "$1" || $arg == "$1="* ]] && return 0
  done
  return 1
}

tools/setup-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target hogwild_cli

data=data/generated
mkdir -p "$data"
if [[ ! -s $data/rcv1like.test.svm ]]; then
  build/release/hogwild gen sparse --rows 100000 --features 47236 --nnz-per-row 75 --zipf 1 \
    --noise 0.05 --seed 1 --out "$data/rcv1like.train.svm.tmp" --test-rows 20000 \
    --test-out "$data/rcv1like.test.svm.tmp"
  mv "$data/rcv1like.train.svm.tmp" "$data/rcv1like.train.svm"
  mv "$data/rcv1like.test.svm.tmp" "$data/rcv1like.test.svm"
fi

# The script's defaults, each left out where the extra arguments give its option.
defaults=()
given --train || defaults+=(--train "$data/rcv1like.train.svm")
given --test || defaults+=(--test "$data/rcv1like.test.svm")
given --model || defaults+=(--model logistic)
given --epochs || defaults+=(--epochs 10)
given --compare-serial || defaults+=(--compare-serial)
given --json || defaults+=(--json "$data/demo-report.json")
build/release/hogwild train "${defaults[@]}" "$@"
given --json || echo "report: $data/demo-report.json"
