#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest. Idempotent; CI runs it.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/setup-deps.sh
jobs=$(nproc)
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"
