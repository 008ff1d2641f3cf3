#!/usr/bin/env bash
# The defaults against the best of a grid of at least 24 configurations on twelve data sets of
# different shapes; the table goes to docs/defaults-table.md (docs/defaults.md explains it).
#   bench/defaults.sh [--only NAME,...] [--repeats N] [--candidate "OPTIONS"] [--table FILE]
# About 45 minutes on 2 cores the first time; grid runs are kept in data/generated/defaults and
# not run again, so later runs take a few minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
HOGWILD=$hogwild exec python3 bench/defaults.py "$@"
