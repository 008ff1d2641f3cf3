#!/usr/bin/env bash
# The main job, from a fresh Debian 12 machine: install what is missing, build (Release),
# generate the default RCV1-like data once, train with every core and compare with a serial
# run of the same data. Extra arguments go to `hogwild train` (e.g. --epochs 20).
set -euo pipefail
cd "$(dirname "$0")/.."

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

build/release/hogwild train --train "$data/rcv1like.train.svm" --test "$data/rcv1like.test.svm" \
  --model logistic --threads "$(nproc)" --epochs 10 --compare-serial \
  --json "$data/demo-report.json" "$@"
echo "report: $data/demo-report.json"
