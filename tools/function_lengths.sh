#!/usr/bin/env bash
# The longest functions of the library, the CLI and the public headers (src/, tools/,
# include/), by their definitions' first and last lines as Universal Ctags finds them (a
# lambda counts within the function that holds it). Prints every function of more than LIMIT
# lines (default 120, the design's bound), longest first, then the TOP (default 5) longest;
# exits 1 when any is over the limit.
#
#   tools/function_lengths.sh            # LIMIT=120 TOP=5
#
# Needs universal-ctags (Debian package universal-ctags: apt-get install universal-ctags).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${LIMIT:-120}
top=${TOP:-5}
if ! ctags --version 2>/dev/null | grep -q "Universal Ctags"; then
  echo "function_lengths.sh: expected Universal Ctags as ctags, found none" \
    "(apt-get install universal-ctags)" >&2
  exit 2
fi
tags=$(mktemp)
trap 'rm -f "$tags"' EXIT
find src tools include \( -name '*.cc' -o -name '*.h' \) -print0 | sort -z |
  xargs -0 ctags --languages=C++ --c++-kinds=f --fields=+ne -o "$tags"
lengths=$(awk -F'\t' '!/^!_TAG/ {
    first = ""; last = ""
    for (i = 4; i <= NF; ++i) {
      if ($i ~ /^line:/) first = substr($i, 6)
      if ($i ~ /^end:/) last = substr($i, 5)
    }
    if (first != "" && last != "") printf "%d %s:%s %s\n", last - first + 1, $2, first, $1
  }' "$tags" | sort -rn)
over=$(awk -v limit="$limit" '$1 > limit' <<<"$lengths")
if [[ -n $over ]]; then
  echo "functions over $limit lines:"
  echo "$over"
fi
echo "the $top longest (lines, place, name):"
head -n "$top" <<<"$lengths"
[[ -z $over ]]
