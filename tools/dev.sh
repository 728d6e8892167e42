#!/usr/bin/env bash
# The two commands of README.md:
#   tools/dev.sh run   — install what is missing, build (Release), run `simulate configs/h200_sarathi.yaml`
#   tools/dev.sh test  — install what is missing, build with -Werror, check formatting, run CTest
# Extra arguments after `run` go to simulate (e.g. `tools/dev.sh run --set workload.arrival.qps=8`).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake clang-format libyaml-cpp-dev libhdf5-dev hdf5-tools libtbb-dev
          libeigen3-dev libboost-graph-dev catch2 libxgboost-dev libcli11-dev libfmt-dev
          nlohmann-json3-dev libopenmpi-dev openmpi-bin python3-matplotlib python3-h5py)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

build() {
  local werror=$1
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSERVESIM_WERROR="$werror" >/dev/null
  cmake --build build -j"$(nproc)"
}

mode=${1:-}
shift || true
case "$mode" in
  run)
    install_missing
    build OFF
    ./build/tools/simulate configs/h200_sarathi.yaml "$@"
    ;;
  test)
    install_missing
    # Formatting is part of the contract (STYLE.md); list the offenders and fail.
    mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find sim costmodels schedulers workloads tools tests -name '*.[ch]pp')
    if ! clang-format --dry-run --Werror "${sources[@]}" 2>/dev/null; then
      clang-format --dry-run "${sources[@]}" 2>&1 | grep -E '^[^ ].*warning' | cut -d: -f1 | sort -u >&2
      echo "formatting differs from .clang-format (run clang-format -i on the files above)" >&2
      exit 1
    fi
    build ON
    cd build && ctest --output-on-failure -j"$(nproc)" "$@"
    ;;
  *)
    echo "usage: tools/dev.sh run [simulate args…] | tools/dev.sh test [ctest args…]" >&2
    exit 2
    ;;
esac
