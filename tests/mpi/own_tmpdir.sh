#!/bin/bash
# own_tmpdir.sh COMMAND...: runs COMMAND with a fresh directory of its own as TMPDIR, removed
# when it ends. Open MPI makes each job's session directory under TMPDIR (ompi.HOST.UID/...):
# jobs started at the same moment by `ctest -j` race to create and remove that shared parent,
# and the loser stops in orte_init ("A call to mkdir was unable to create the desired
# directory ... File exists", open-mpi/ompi#8510). A parent per test removes the race. The
# directory is made under /tmp whatever TMPDIR was: a short path keeps Open MPI's socket and
# shared-memory file names within their length limits.
set -euo pipefail
dir=$(mktemp -d /tmp/hogwild-mpi.XXXXXX)
trap 'rm -rf "$dir"' EXIT
code=0
TMPDIR=$dir "$@" || code=$?
exit "$code"
