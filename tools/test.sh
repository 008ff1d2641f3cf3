#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test with ctest: the Release build, then the
# whole suite under ThreadSanitizer and under AddressSanitizer + UndefinedBehaviorSanitizer,
# then a short run of each libFuzzer target. Idempotent; CI runs it.
#
#   tools/test.sh [STAGE...]     STAGE: release tsan asan fuzz (default: all four, in order)
#   HOGWILD_FUZZ_SECONDS=N       seconds per fuzz target in the fuzz stage (default 5: four
#                                targets, 20 s in all; 0 skips)
#
#   tools/test.sh stress [PRESET...]   not in the default stages: builds each preset (default
#                                release tsan asan) and runs its whole suite but the packaging
#                                tests repeatedly, 4 tests at once, with a busy loop on every
#                                core, until a test fails
#   HOGWILD_STRESS_REPEAT=N      runs of each test in the stress stage (default 20)
set -euo pipefail
cd "$(dirname "$0")/.."

stages=("$@")
((${#stages[@]})) || stages=(release tsan asan fuzz)
stress_presets=()
if [[ ${stages[0]} == stress ]]; then
  stress_presets=("${stages[@]:1}")
  ((${#stress_presets[@]})) || stress_presets=(release tsan asan)
  stages=(stress)
fi
jobs=$(nproc)
# Tests: one more at a time than cores. Many wait more than they compute (process start-up,
# mpirun, a child polled for a file), and every test holds on a loaded machine (the stress
# stage runs 4 at once beside a busy loop on every core).
test_jobs=$((jobs + 1))
extra=()
for s in "${stages[@]}"; do
  case $s in
    release) ;;
    tsan) extra+=(dpkg-dev xz-utils) ;;  # apt-get source and dpkg-source for oneTBB
    stress) extra+=(dpkg-dev xz-utils clang) ;;
    asan | fuzz) extra+=(clang) ;;  # the asan preset is clang's: it builds the libFuzzer targets
    *) echo "test.sh: unknown stage '$s'; expected release, tsan, asan or fuzz" >&2; exit 2 ;;
  esac
done
tools/setup-deps.sh "${extra[@]}"

say() { echo "== test.sh: $* ($(date +%T))" >&2; }

# ThreadSanitizer sees only the synchronisation in code it instrumented. Debian's libtbb is not
# instrumented, so the hand-off of work between TBB threads (inside libtbb.so) is invisible and
# every parallel_for body, TBB's and hogwild's, shows up as a race. Rather than suppress those
# reports (which would hide real races in hogwild's parallel code too), build the same oneTBB
# source Debian packages, at the installed version, with -fsanitize=thread (under a minute), and
# link the tsan preset against it (TBB_DIR in CMakePresets.json).
build_tsan_tbb() {
  local root=$PWD/build/tbb-tsan
  local package version codename mirror
  package=$(dpkg-query -W -f='${source:Package}' libtbb-dev)
  version=$(dpkg-query -W -f='${source:Version}' libtbb-dev)
  if [[ -f $root/install/lib/cmake/TBB/TBBConfig.cmake && $(cat "$root/stamp" 2>/dev/null) == "$version" ]]; then
    return
  fi
  say "building $package $version with ThreadSanitizer into build/tbb-tsan"
  rm -rf "$root"
  mkdir -p "$root/apt/lists/partial" "$root/apt/archives/partial" "$root/src"
  codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
  mirror=${HOGWILD_DEBIAN_MIRROR:-http://deb.debian.org}
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  cat >"$root/apt/sources.list" <<LIST
deb-src [signed-by=$keyring] $mirror/debian $codename main
deb-src [signed-by=$keyring] $mirror/debian $codename-updates main
deb-src [signed-by=$keyring] $mirror/debian-security $codename-security main
LIST
  # A private apt state directory: the system's sources and lists are left as they are.
  local apt=(-q -o Dir::Etc::SourceList="$root/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
    -o Dir::State::Lists="$root/apt/lists" -o Dir::Cache="$root/apt"
    -o APT::Sandbox::User="$(id -un)")
  if ! apt-get "${apt[@]}" update >"$root/apt.log" 2>&1 ||
    ! (cd "$root/src" && apt-get "${apt[@]}" source --download-only "$package=$version") \
      >>"$root/apt.log" 2>&1; then
    cat "$root/apt.log" >&2
    echo "test.sh: cannot fetch the $package $version source from $mirror (needed for the tsan" \
      "stage); set HOGWILD_DEBIAN_MIRROR or run the other stages: tools/test.sh release asan fuzz" >&2
    exit 1
  fi
  # apt checked the files against the signed Sources index; dpkg-source only lacks the keyring.
  (cd "$root/src" && dpkg-source -x ./*.dsc tbb) >"$root/extract.log" 2>&1
  cmake -S "$root/src/tbb" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_INSTALL_PREFIX="$root/install" -DTBB_SANITIZE=thread -DTBB_TEST=OFF \
    -DTBB_EXAMPLES=OFF -DTBB_STRICT=OFF -DTBBMALLOC_BUILD=OFF \
    -DTBB_DISABLE_HWLOC_AUTOMATIC_SEARCH=ON >"$root/configure.log"
  cmake --build "$root/build" --target install -j "$jobs" >"$root/build.log"
  echo "$version" >"$root/stamp"
}

# stress PRESET N: the preset's whole suite, each test N times, 4 at once, with a busy loop on
# every core for the whole run: a test that depends on how the OS schedules threads fails here.
stress() {
  local hogs=() code=0
  for ((i = 0; i < jobs; i++)); do
    (while :; do :; done) &
    hogs+=($!)
  done
  say "stress: $1, each test up to $2 times, 4 at once, $jobs busy loops"
  local start=$SECONDS
  # The packaging tests configure and build a project: nothing in them depends on timing,
  # and twenty builds of each would take most of the run.
  ctest --preset "$1" -j 4 --repeat "until-fail:$2" --output-on-failure -LE packaging || code=$?
  kill "${hogs[@]}" 2>/dev/null || true
  wait "${hogs[@]}" 2>/dev/null || true
  say "stress: $1 took $((SECONDS - start)) s"
  return "$code"
}

for s in "${stages[@]}"; do
  case $s in
    release)
      say "release: build and test"
      cmake --preset release >/dev/null
      cmake --build --preset release -j "$jobs"
      ctest --preset release -j "$test_jobs"
      ;;
    tsan)
      build_tsan_tbb
      say "tsan: build and test under ThreadSanitizer"
      cmake --preset tsan >/dev/null
      cmake --build --preset tsan -j "$jobs"
      # (grep without -q reads all of ldd's output: with pipefail, -q could fail the pipe)
      if ! ldd build/tsan/tests/test_libsvm | grep "build/tbb-tsan/install" >/dev/null; then
        echo "test.sh: the tsan build does not link the instrumented oneTBB in build/tbb-tsan" >&2
        exit 1
      fi
      ctest --preset tsan -j "$test_jobs"
      ;;
    asan)
      say "asan: build and test under AddressSanitizer + UndefinedBehaviorSanitizer"
      cmake --preset asan >/dev/null
      cmake --build --preset asan -j "$jobs"
      ctest --preset asan -j "$test_jobs"
      ;;
    stress)
      for preset in "${stress_presets[@]}"; do
        case $preset in
          release | tsan | asan) ;;
          *) echo "test.sh: stress: unknown preset '$preset'; expected release, tsan or asan" >&2; exit 2 ;;
        esac
        [[ $preset == tsan ]] && build_tsan_tbb
        cmake --preset "$preset" >/dev/null
        cmake --build --preset "$preset" -j "$jobs"
        stress "$preset" "${HOGWILD_STRESS_REPEAT:-20}"
      done
      ;;
    fuzz)
      seconds=${HOGWILD_FUZZ_SECONDS:-5}
      if ((seconds > 0)); then
        say "fuzz: ${seconds}s per libFuzzer target"
        tools/fuzz.sh "$seconds"
      fi
      ;;
  esac
done
say "all stages passed: ${stages[*]}"
