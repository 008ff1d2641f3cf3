# Shared by the bench/ scripts (sourced, from the repository root): the CLI they run and the
# generated data they train on.

# The CLI: $HOGWILD, else the release build's (built here when missing).
hogwild=${HOGWILD:-build/release/hogwild}
[[ -x $hogwild ]] || { cmake --preset release >/dev/null && cmake --build --preset release --target hogwild_cli; }

# bench_data ROWS FEATURES NNZ ZIPF: prints the path prefix of the seeded RCV1-like data set
# (.train.svm, and .test.svm with 20,000 rows), generating it once.
bench_data() {
  local base=data/generated/bench-$1x$2-k$3-z$4
  if [[ ! -s $base.test.svm ]]; then
    mkdir -p data/generated
    "$hogwild" gen sparse --rows "$1" --features "$2" --nnz-per-row "$3" --zipf "$4" --seed 1 \
      --out "$base.train.svm" --test-rows 20000 --test-out "$base.test.svm" >&2
  fi
  echo "$base"
}

# ctr_data ROWS: prints the path prefix of the seeded CTR-like data set (`gen ctr` at its
# defaults: 26 one-hot fields hashed into 2^22 features, 5% clicks; .train.svm, and .test.svm
# with a tenth as many rows), generating it once.
ctr_data() {
  local base=data/generated/ctr-$1
  if [[ ! -s $base.test.svm ]]; then
    mkdir -p data/generated
    "$hogwild" gen ctr --rows "$1" --seed 1 --out "$base.train.svm" --test-rows $(($1 / 10)) \
      --test-out "$base.test.svm" >&2
  fi
  echo "$base"
}

# median: the median of the numbers on standard input, one per line.
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# report_field REPORT EXPR: prints the Python expression EXPR of the JSON report REPORT, read
# into `r`; e.g. report_field run.json "r['final']['train_loss']".
report_field() { /usr/bin/python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# install_missing PACKAGE...: installs with apt-get those of the Debian packages not installed
# (the peers a benchmark runs: liblinear-tools, fasttext, python3-sklearn ...).
install_missing() {
  local missing=() pkg
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  ((${#missing[@]})) || return 0
  echo "installing ${missing[*]}" >&2
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
}
