#!/usr/bin/env bash
# The SIGINT scenario of test_cli_checkpoint in a loop, outside ctest: start a serial softmax
# run with --checkpoint, send SIGINT when the first checkpoint appears, and count the runs that
# exit 130 and those still alive 60 s later (their stacks go to hung_LOOP_RUN.txt via gdb).
#   tools/sigint_loop.sh BINARY LOOP RUNS    (run several LOOPs at once, with busy loops, for load)
#   data: hogwild gen sparse --rows 20000 --features 3000 --nnz-per-row 20 --seed 4 \
#           --out /tmp/c_train.svm --test-rows 2000 --test-out /tmp/c_test.svm
set -u
bin=$1 loop=$2 runs=$3
dir=$(mktemp -d)
for ((r = 1; r <= runs; r++)); do
  rm -f "$dir/s.ckpt"
  "$bin" train --train /tmp/c_train.svm --test /tmp/c_test.svm --policy serial --quiet --seed 7 \
    --model softmax --optimizer adam --step 0.005 --batch 8 --epochs 100000 \
    --checkpoint "$dir/s.ckpt" >/dev/null 2>&1 &
  pid=$!
  while [[ ! -e $dir/s.ckpt ]]; do sleep 0.01; done
  kill -INT "$pid"
  start=$SECONDS
  while kill -0 "$pid" 2>/dev/null && ((SECONDS - start < 60)); do sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "loop $loop run $r HUNG"
    gdb -batch -p "$pid" -ex "thread apply all bt" >"hung_${loop}_${r}.txt" 2>&1
    kill -9 "$pid"
  else
    wait "$pid"
    echo "loop $loop run $r exit $?"
  fi
done
rm -rf "$dir"
