#!/usr/bin/env bash
# Simulation in virtual time and bounded staleness, measured side by side (bench/interleave.sh,
# alternated runs, medians):
#   1. samples/s a virtual-time simulation of K = 8 and K = 1,024 workers reaches on one core
#      (sparse logistic regression, RCV1-like data), against one serial thread on the same data;
#   2. the cost of --bounded-staleness S in 2 threads against the same loop unbounded
#      (replicas off on both sides: bounded staleness turns them off), in both orders.
#
#   bench/simulate.sh      # REPS (default 5) and EPOCHS (default 5) as interleave.sh; part 2
#                          # runs SSP_REPS (default 15) pairs per order: its differences are
#                          # a few percent, within a short series' scatter on a shared machine
set -euo pipefail
cd "$(dirname "$0")/.."
export REPS=${REPS:-5} EPOCHS=${EPOCHS:-5}
echo "## 1. virtual-time simulation on one core against one serial thread"
for k in 8 1024; do
  bench/interleave.sh "--policy serial" "--simulate $k --clock virtual"
done
echo
echo "## 2. bounded staleness in 2 threads against the same loop unbounded"
# Each pair runs in both orders: on a shared machine the side that runs second can gain or
# lose several percent, and the geometric mean of the two ratios cancels that.
for s in 8 64; do
  plain="--threads 2 --replicate off" bounded="--threads 2 --bounded-staleness $s"
  first=$(REPS=${SSP_REPS:-15} bench/interleave.sh "$plain" "$bounded" | tee /dev/stderr | sed -n 's/^B\/A = //p')
  second=$(REPS=${SSP_REPS:-15} bench/interleave.sh "$bounded" "$plain" | tee /dev/stderr | sed -n 's/^B\/A = //p')
  /usr/bin/python3 -c "import sys; a, b = map(float, sys.argv[1:]); print(
    f'S = $s: bounded / unbounded {a:.3f} (bounded second), {1 / b:.3f} (bounded first), '
    f'both orders {(a / b) ** 0.5:.3f}: cost {100 * (1 - (a / b) ** 0.5):.1f}% (target <= 3%)')" \
    "$first" "$second"
done
