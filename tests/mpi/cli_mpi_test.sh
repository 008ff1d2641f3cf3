#!/usr/bin/env bash
# `hogwild train` across processes under mpirun, one case per ctest test:
#
#   cli_mpi_test.sh CASE HOGWILD WORK_DIR MPIRUN [MPIRUN_FLAGS...]
#
#   accuracy      2 and 3 processes, rma and allreduce, reach the test accuracy of one process
#                 within 1 point on the RCV1-like data; the report counts staleness across them.
#                 rma runs with --sync-bound 2: unbounded, how stale a process's reads get
#                 depends on the scheduler (3 processes on 2 loaded cores once lost 5 points),
#                 and only the bound makes the accuracy a property of the run, not of the load
#   reproducible  allreduce with one thread per process and a fixed seed: two runs agree to the
#                 last digit of every loss
#   bad_input     a missing or malformed training file (the line of the whole file from the
#                 process whose part holds it), an unwritable report, a bad option, or data
#                 that differs between processes: every process exits 2 and the message is
#                 printed once
#   parts         each process reads its own part of the file: together the parts hold every
#                 row once, plain or compressed, and agree on the index base and the dimension;
#                 a part without a class or without examples exits 2, printed once
#   bounded       --sync-bound S: the samples other processes merge between a process's read and
#                 its write stay within (processes - 1) x 2 (S + 1) x --sync-every
#   rank_dies     a process killed mid-run: mpirun exits non-zero (the job ends, no hang)
#   interrupt     SIGINT to mpirun: every process stops cleanly, rank 0 says where, its checkpoint
#                 holds the last completed epoch and resumes on another process count
#
# No assertion reads the clock: waits poll for a file or a process, under a generous bound that
# only turns a hang into a failure.
set -euo pipefail
case_name=$1 hogwild=$2 work=$3
shift 3
mpirun=("$@")

fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}
# json FILE EXPR: a value of a JSON report (python3: any build reads JSON).
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
# Polls until the command succeeds, at most $1 seconds (a hang guard, not a timing check).
wait_for() {
  local limit=$1
  shift
  for ((i = 0; i < limit * 10; i++)); do
    if "$@"; then return 0; fi
    sleep 0.1
  done
  fail "waited ${limit}s for: $*"
}

expect_once() {  # expect_once PATTERN MPIRUN_ARGS...: exit 2, PATTERN printed once
  local pattern=$1 code=0
  shift
  "${mpirun[@]}" "$@" >out.txt 2>err.txt || code=$?
  [[ $code == 2 ]] || fail "exit $code, expected 2: $(cat err.txt)"
  local count
  count=$(grep -c "^hogwild: .*$pattern" err.txt || true)
  [[ $count == 1 ]] || fail "'$pattern' printed $count times: $(cat err.txt)"
  echo "exit 2, printed once: $(grep "^hogwild: " err.txt)"
}
# Process counts of the cases that run at several (HOGWILD_MPI_NPS; the sanitizer builds run 2).
read -r -a nps <<<"${HOGWILD_MPI_NPS:-2 3}"

rm -rf "$work"
mkdir -p "$work"
cd "$work"

# A small data set for the failure cases: 20000 rows, many epochs when a run must last.
small() {
  "$hogwild" gen sparse --rows 20000 --features 5000 --nnz-per-row 20 --seed 3 \
    --out small.svm 2>/dev/null
}

case $case_name in
  accuracy)
    "$hogwild" gen sparse --rows 100000 --features 47236 --nnz-per-row 75 --zipf 1 --noise 0.05 \
      --seed 1 --out rcv1.svm --test-rows 20000 --test-out rcv1.test.svm 2>/dev/null
    common=(train --train rcv1.svm --test rcv1.test.svm --threads 1 --epochs 10 --quiet)
    "$hogwild" "${common[@]}" --json single.json >/dev/null
    single=$(json single.json "r['final']['test_accuracy']")
    for np in 2 3; do
      for sync in rma allreduce; do
        bound=()
        [[ $sync == rma ]] && bound=(--sync-bound 2)
        "${mpirun[@]}" -np "$np" "$hogwild" "${common[@]}" --sync "$sync" "${bound[@]}" \
          --json "$np-$sync.json" >/dev/null
        accuracy=$(json "$np-$sync.json" "r['final']['test_accuracy']")
        echo "$np processes, $sync: test accuracy $accuracy (one process: $single)"
        python3 -c "import sys; sys.exit(abs($accuracy - $single) > 0.01)" ||
          fail "$np processes, $sync: test accuracy $accuracy, one process $single"
        [[ $(json "$np-$sync.json" "r['processes']['ranks']") == "$np" ]] ||
          fail "$np-$sync.json: processes.ranks is not $np"
        [[ $(json "$np-$sync.json" "r['processes']['sync']") == "$sync" ]] ||
          fail "$np-$sync.json: processes.sync is not $sync"
        # Every sample merged counts once in the staleness across processes.
        merged=$(json "$np-$sync.json" "r['staleness']['across_processes']['samples']")
        samples=$(json "$np-$sync.json" "r['samples']")
        [[ $merged == "$samples" ]] || fail "$np $sync: $merged samples merged of $samples"
      done
    done
    ;;
  reproducible)
    small
    for np in "${nps[@]}"; do
      for run in 1 2; do
        "${mpirun[@]}" -np "$np" "$hogwild" train --train small.svm --threads 1 --epochs 2 \
          --evals-per-epoch 2 --seed 7 --sync allreduce --sync-every 100 --quiet \
          --json "$np-$run.json" >/dev/null
      done
      losses="[(e['epoch'], repr(e['train_loss'])) for e in r['epochs']], repr(r['final'])"
      first=$(json "$np-1.json" "$losses")
      second=$(json "$np-2.json" "$losses")
      [[ $first == "$second" ]] || fail "$np processes: two runs differ: $first vs $second"
      echo "$np processes: two runs agree: ${first:0:120}..."
    done
    ;;
  bad_input)
    small
    printf '1 1:0.5\n-1 3:x\n' >bad.svm
    run=("$hogwild" train --threads 1 --epochs 1 --quiet)
    # The file is missing on rank 1 alone (mpirun's MPMD form gives each rank its command).
    expect_once "missing.svm: cannot open" -np 1 "${run[@]}" --train small.svm : \
      -np 1 "${run[@]}" --train missing.svm
    # The same after the parts are read, where a checkpoint's fingerprint is gathered: rank 1's
    # test file is missing.
    expect_once "missing.svm: cannot open" -np 1 "${run[@]}" --train small.svm --test small.svm \
      --checkpoint c.bin : -np 1 "${run[@]}" --train small.svm --test missing.svm --checkpoint c.bin
    # Each process reads its own part of the file: the last process alone meets the bad last
    # line, and names it as a line of the whole file.
    { cat small.svm && echo '1 3:x'; } >bad_end.svm
    expect_once "bad_end.svm:20001: expected a numeric value" -np 3 "${run[@]}" \
      --train bad_end.svm
    expect_once "bad.svm:2: expected a numeric value" -np 3 "${run[@]}" --train bad.svm
    expect_once "no/such/dir/r.json: cannot write" -np 2 "${run[@]}" --train small.svm \
      --json no/such/dir/r.json
    expect_once "--sync: expected rma or allreduce" -np 2 "${run[@]}" --train small.svm \
      --sync gossip
    expect_once "--weights: expected f32 across processes" -np 2 "${run[@]}" --train small.svm \
      --weights bf16
    expect_once "--limit: expected a single process for LIBSVM data" -np 2 "${run[@]}" \
      --train small.svm --limit 10
    # Copies of the data that differ between nodes.
    "$hogwild" gen sparse --rows 200 --features 900 --nnz-per-row 5 --seed 4 --out other.svm \
      2>/dev/null
    expect_once "expected the same data on every process" -np 1 "${run[@]}" --train small.svm : \
      -np 1 "${run[@]}" --train other.svm
    ;;
  parts)
    small
    # An index 0 in the last line alone: the first parts read themselves 1-based.
    { cat small.svm && echo '1 0:1 7:1'; } >zero.svm
    gzip -c small.svm >small.svm.gz
    for file in small.svm zero.svm small.svm.gz; do
      args=(train --train "$file" --threads 1 --epochs 1 --quiet)
      "$hogwild" "${args[@]}" --json "one-$file.json" >/dev/null
      whole="r['dataset']['rows'], r['dataset']['features'], r['dataset']['zero_based'], \
r['dataset']['labels'], r['samples']"
      expected=$(json "one-$file.json" "$whole")
      for np in 2 3; do
        "${mpirun[@]}" -np "$np" "$hogwild" "${args[@]}" --json "$np-$file.json" >/dev/null
        found=$(json "$np-$file.json" "$whole")
        [[ $found == "$expected" ]] || fail "$file, $np processes: $found, one process: $expected"
      done
      echo "$file in 2 and 3 parts: rows, features, index base, labels, samples: $expected"
    done
    # A file sorted by label leaves parts of one class; a file of fewer lines than processes
    # leaves a part of none.
    sort -n small.svm >sorted.svm
    run=("$hogwild" train --threads 1 --epochs 1 --quiet)
    expect_once "expected every label class in every process's part" -np 2 "${run[@]}" \
      --train sorted.svm
    printf '1 1:0.5\n0.5 2:1\n' >two_lines.svm
    expect_once "expected examples in every process's part" -np 3 "${run[@]}" \
      --train two_lines.svm --model squared
    ;;
  bounded)
    small
    every=128
    for np in "${nps[@]}"; do
      for bound in 0 2; do
        "${mpirun[@]}" -np "$np" "$hogwild" train --train small.svm --threads 1 --epochs 1 \
          --sync-every $every --sync-bound $bound --quiet --json "$np-$bound.json" >/dev/null
        most=$(json "$np-$bound.json" "r['staleness']['across_processes']['max']")
        limit=$(((np - 1) * 2 * (bound + 1) * every))
        [[ $(json "$np-$bound.json" "r['processes']['bound']") == "$bound" ]] ||
          fail "$np-$bound.json: processes.bound is not $bound"
        python3 -c "import sys; sys.exit(not $most <= $limit)" ||
          fail "$np processes, bound $bound: staleness across processes reached $most > $limit"
        echo "$np processes, bound $bound: staleness across processes at most $most (limit $limit)"
      done
    done
    ;;
  rank_dies)
    small
    "${mpirun[@]}" -np 3 "$hogwild" train --train "$work/small.svm" --threads 1 --epochs 1000000 \
      --quiet --checkpoint ck.bin >out.txt 2>err.txt &
    job=$!
    wait_for 120 test -s ck.bin  # every rank is training
    ranks() { pgrep -f "^$hogwild train --train $work/small.svm" || true; }
    victim=$(ranks | tail -n 1)
    [[ -n $victim ]] || fail "no rank process found"
    kill -9 "$victim"
    code=0
    timeout 120 tail --pid="$job" -f /dev/null || fail "mpirun still runs 120 s after a rank died"
    wait "$job" || code=$?
    [[ $code != 0 ]] || fail "mpirun exited 0 after a rank was killed"
    [[ -z $(ranks) ]] || fail "ranks left running: $(ranks)"
    echo "a rank killed: mpirun exited $code, no rank left"
    ;;
  interrupt)
    small
    args=(train --train small.svm --threads 1 --seed 5)
    # Each rank writes its own stderr (exec: the signal reaches hogwild itself), so what rank 0
    # says does not depend on mpirun forwarding output while it ends the job.
    # On SIGINT mpirun sends every process SIGTERM after a grace period and SIGKILL after a
    # second one (odls_base_sigkill_timeout, 1 s by default); a clean stop on a loaded machine,
    # or under a sanitizer, needs a longer second period (HOGWILD_MPI_GRACE seconds).
    "${mpirun[@]}" --mca odls_base_sigkill_timeout "${HOGWILD_MPI_GRACE:-5}" -np 2 \
      bash -c 'exec "$0" "$@" 2>"stderr.$OMPI_COMM_WORLD_RANK"' "$hogwild" \
      "${args[@]}" --epochs 1000000 --quiet --checkpoint ck.bin >mpirun.txt 2>&1 &
    job=$!
    wait_for 120 test -s ck.bin
    kill -INT "$job"
    code=0
    timeout 120 tail --pid="$job" -f /dev/null || fail "mpirun still runs 120 s after SIGINT"
    wait "$job" || code=$?
    [[ $code != 0 ]] || fail "mpirun exited 0 after SIGINT"
    # mpirun passes SIGINT on to every process as SIGTERM; each stops cleanly (no kill, which
    # would leave rank 0 silent), rank 0 printing where it stopped and why: its own signal, or
    # the other process's stop where that one's signal came first and they met at a merge.
    said=$(cat stderr.0)
    [[ $said =~ interrupted\ by\ (SIG(TERM|INT)|another\ process\'s\ stop)\ after\ epoch\ ([0-9]+)\;\ ck.bin\ holds\ epoch\ ([0-9]+) ]] ||
      fail "rank 0 did not report a clean stop: $said"
    epoch=${BASH_REMATCH[3]}
    [[ ${BASH_REMATCH[4]} == "$epoch" ]] || fail "$said"
    echo "mpirun exited $code; rank 0: $said"
    # The checkpoint continues on three processes.
    "${mpirun[@]}" -np 3 "$hogwild" "${args[@]}" --epochs $((epoch + 2)) --resume ck.bin --quiet \
      --json resumed.json >/dev/null
    [[ $(json resumed.json "r['resumed_from']") == "$epoch" ]] || fail "resumed_from is not $epoch"
    [[ $(json resumed.json "r['final']['epoch']") == $((epoch + 2)) ]] ||
      fail "the resumed run did not end at epoch $((epoch + 2))"
    echo "resumed from epoch $epoch on 3 processes"
    # The same rows with one label flipped are other data: refused before training.
    sed '1s/^1 /-1 /;t;1s/^-1 /1 /' small.svm >other.svm
    expect_once "ck.bin: expected the training data the checkpoint was written on" -np 2 \
      "$hogwild" train --train other.svm --threads 1 --seed 5 --epochs $((epoch + 2)) \
      --resume ck.bin --quiet
    ;;
  *)
    fail "unknown case"
    ;;
esac
