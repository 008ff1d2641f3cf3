#!/usr/bin/env bash
# Runs the update-path microbenchmarks (bench/bench_updates.cc) REPS times, repetitions
# interleaved in random order so that outside load hits every variant alike, and prints the
# ratio tables of bench/micro_summary.py from the medians. Extra arguments go to the
# benchmark binary (e.g. --benchmark_filter='sparse/.*d:47236').
#
#   bench/micro.sh                      BUILD=build/release REPS=3 OUT=<tmp>/micro.json
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD:-build/release}
reps=${REPS:-3}
bin=$build/bench/hogwild_bench_updates
if [[ ! -x $bin ]]; then
  [[ -f $build/build.ninja || -f $build/Makefile ]] || cmake --preset release >/dev/null
  cmake --build "$build" --target hogwild_bench_updates
fi
out=${OUT:-$(mktemp -d)/micro.json}
"$bin" --benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true \
  --benchmark_out="$out" --benchmark_out_format=json \
  "$@" >&2
echo "raw results: $out" >&2
python3 bench/micro_summary.py "$out"
