#!/usr/bin/env bash
# Installs the Debian packages hogwild needs, only those missing. Idempotent.
set -euo pipefail

packages=(
  g++ cmake ninja-build pkg-config
  libtbb-dev libeigen3-dev libfmt-dev libbenchmark-dev doctest-dev libcli11-dev nlohmann-json3-dev
  zlib1g-dev            # inputs are read straight from .gz (IDX, LIBSVM, ratings) ...
  libbz2-dev liblzma-dev # ... and from .bz2 (as the LIBSVM site publishes) and .xz
  dataset-fashion-mnist # /usr/share/datasets/fashion-mnist: the softmax and MLP examples
  python3-matplotlib    # tools/plot (figures from reports and sweeps) and its test
  # Training across processes and machines (src/dist): Open MPI's one-sided windows and
  # collectives, and mpirun, which its tests run under.
  openmpi-bin libopenmpi-dev
  # The Python module (python/): built with pybind11 for Debian's python3, whose numpy, scipy
  # and scikit-learn it takes data from and plugs into; pytest runs its tests.
  pybind11-dev python3-dev python3-numpy python3-scipy python3-sklearn python3-pytest
)
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi
