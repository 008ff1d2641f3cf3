#!/usr/bin/env bash
# Simulation in virtual time and bounded staleness, measured side by side (bench/interleave.sh,
# alternated runs, medians):
#   1. samples/s a virtual-time simulation of K = 8 and K = 1,024 workers reaches on one core
#      (sparse logistic regression, RCV1-like data), against one serial thread on the same data;
#   2. the cost of --bounded-staleness S in 2 threads against the same loop unbounded
#      (replicas off on both sides: bounded staleness turns them off).
#
#   bench/simulate.sh                    # REPS (default 5) and EPOCHS (default 5) as interleave.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export REPS=${REPS:-5} EPOCHS=${EPOCHS:-5}
echo "## 1. virtual-time simulation on one core against one serial thread"
for k in 8 1024; do
  bench/interleave.sh "--policy serial" "--simulate $k --clock virtual"
done
echo
echo "## 2. bounded staleness in 2 threads against the same loop unbounded"
for s in 8 64; do
  bench/interleave.sh "--threads 2 --replicate off" "--threads 2 --bounded-staleness $s"
done
