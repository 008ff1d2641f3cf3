#!/usr/bin/env bash
# Builds the libFuzzer targets (in the asan preset: clang, ASan + UBSan, the library's readers
# built with -fsanitize=fuzzer-no-link) and runs each one for SECONDS (default 60), starting from
# its seed corpus tests/fuzz/corpus/NAME/ and dictionary tests/fuzz/NAME.dict. Inputs it finds go
# to build/asan/fuzz/corpus/NAME/ (kept between runs); a crash or contract violation stops with a
# non-zero exit and its input saved under build/asan/fuzz/artifacts/NAME/. Add such an input to
# tests/test_fuzz_regressions.cc once fixed.
#
#   tools/fuzz.sh [SECONDS]
#   build/asan/tests/fuzz/fuzz_NAME FILE     replays one input
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
tools/setup-deps.sh clang
cmake --preset asan >/dev/null
cmake --build --preset asan --target fuzzers -j "$(nproc)"

status=0
for target in build/asan/tests/fuzz/fuzz_*; do
  [[ -f $target && -x $target ]] || continue
  name=${target##*/fuzz_}
  work=build/asan/fuzz/corpus/$name
  artifacts=build/asan/fuzz/artifacts/$name
  log=build/asan/fuzz/$name.log
  mkdir -p "$work" "$artifacts"
  options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1
    -artifact_prefix="$artifacts/")
  [[ -f tests/fuzz/$name.dict ]] && options+=(-dict="tests/fuzz/$name.dict")
  echo "fuzz: $name for ${seconds}s (log: $log)" >&2
  if "$target" "${options[@]}" "$work" "tests/fuzz/corpus/$name" >"$log" 2>&1; then
    # The last status line has the coverage; the final stats have the totals.
    grep -E '^#[0-9]+' "$log" | tail -n 1 >&2
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)' \
      "$log" >&2
  else
    status=1
    echo "fuzz: $name FAILED; the end of its log:" >&2
    tail -n 40 "$log" >&2
    ls -1 "$artifacts" >&2
  fi
done
exit $status
