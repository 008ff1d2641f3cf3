#!/usr/bin/env bash
# Fewer bytes: --data-precision f32, f16 and u8 (or, --compare weights, --weights f32 and bf16)
# alternated on the RCV1-like bench data and every linear data set of bench/defaults.py (and,
# for the weights, two wider models); samples/s and test metric side by side (bench/precision.py
# says more). A few minutes at the defaults.
#
#   bench/precision.sh                      (2 threads, the defaults, 5 repetitions)
#   bench/precision.sh --serial --only rcv1like --repeats 9
#   bench/precision.sh --compare weights --serial
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
rcv1=$(bench_data 100000 47236 75 1)
HOGWILD=$hogwild exec python3 bench/precision.py --rcv1 "$rcv1" "$@"
