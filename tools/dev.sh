#!/usr/bin/env bash
# The two commands of README.md:
#   tools/dev.sh run   — install what is missing, build (Release), run `simulate configs/h200_sarathi.yaml`
#   tools/dev.sh test  — install what is missing, check formatting, build with clang, -Werror,
#                        ASan + UBSan (build-san/), run CTest under the sanitizers, fuzz each
#                        input parser for 30 s (tools/fuzz.sh), then build the libraries,
#                        commands, benchmarks and Python module with GCC, -Werror (build-gcc/), so
#                        that neither compiler's warnings slip in (the tests are clang's alone),
#                        and run the module's pytest suite there (the sanitized build has none)
#   tools/dev.sh lint  — clang-tidy with the checks of .clang-tidy over the libraries and commands
#                        (not CI: about 10 minutes on 2 cores)
# Extra arguments after `run` go to simulate (e.g. `tools/dev.sh run --set workload.arrival.qps=8`).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build clang clang-format libclang-rt-14-dev libyaml-cpp-dev libhdf5-dev hdf5-tools libtbb-dev
          libeigen3-dev libboost-graph-dev catch2 libxgboost-dev libcli11-dev libfmt-dev
          nlohmann-json3-dev libopenmpi-dev openmpi-bin python3-matplotlib python3-h5py
          pybind11-dev python3-dev python3-pytest python3-numpy python3-pandas)

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
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j"$(nproc)"
}

# The test build: clang -O2 with ASan + UBSan in every object and libFuzzer coverage too, so the
# suite and the fuzz targets share one build. No debug info and no UBSan vptr check (a type-info
# lookup on every virtual call of the engine loop): both cost build and test time CI has not got.
build_sanitized() {
  # Ninja: one build graph for the whole tree (make recurses per folder). A build-san/ that make
  # configured is configured afresh (its objects are rebuilt; the fuzz corpus stays).
  local cache=build-san/CMakeCache.txt
  if [ -f $cache ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' $cache; then
    rm -rf $cache build-san/CMakeFiles
  fi
  cmake -G Ninja -S . -B build-san -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG" \
    -DSERVESIM_WERROR=ON -DSERVESIM_SANITIZE=ON -DSERVESIM_FUZZ=ON >/dev/null
  cmake --build build-san -j"$(nproc)"
}

# The GCC build: the same warnings as errors, unoptimised and without debug info, which is all a
# warning check needs and halves its build time; a unity build, since parsing the headers again
# for each source is most of an unoptimised build (the sanitized build compiles each library
# and command source alone, so a missing include there still fails). Not the tests, which the
# sanitized build compiles with clang's warnings: about 40% of this build's time.
build_gcc() {
  cmake -S . -B build-gcc -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ \
    -DCMAKE_CXX_FLAGS_DEBUG=-O0 -DSERVESIM_WERROR=ON -DCMAKE_UNITY_BUILD=ON \
    -DSERVESIM_BUILD_TESTS=OFF >/dev/null
  cmake --build build-gcc -j"$(nproc)"
}

mode=${1:-}
shift || true
case "$mode" in
  run)
    install_missing
    build
    ./build/tools/simulate configs/h200_sarathi.yaml "$@"
    ;;
  test)
    install_missing
    # CI checks formatting too, so a misformatted file fails here first; list the offenders.
    mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find sim costmodels schedulers workloads tools tests -name '*.[ch]pp')
    if ! clang-format --dry-run --Werror "${sources[@]}" 2>/dev/null; then
      clang-format --dry-run "${sources[@]}" 2>&1 | grep -E '^[^ ].*warning' | cut -d: -f1 | sort -u >&2
      echo "formatting differs from .clang-format (run clang-format -i on the files above)" >&2
      exit 1
    fi
    build_sanitized
    # Any sanitizer report fails its test; leaks in the MPI runtime are not ours (tools/lsan.supp).
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp:print_suppressions=0"
    (cd build-san && ctest --output-on-failure -j"$(nproc)" "$@")
    tools/fuzz.sh 30
    build_gcc
    (cd build-gcc && ctest --output-on-failure -L python)
    ;;
  lint)
    install_missing
    packages=(clang-tidy)
    install_missing
    cmake -S . -B build-lint -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DCMAKE_C_COMPILER=clang \
      -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build build-lint --target servesim_version_inc >/dev/null
    mapfile -t sources < <(git ls-files 'sim/*.cpp' 'costmodels/*.cpp' 'schedulers/*.cpp' \
      'workloads/*.cpp' 'tools/*.cpp')
    run-clang-tidy -p build-lint -quiet -j "$(nproc)" "${sources[@]}"
    ;;
  *)
    echo "usage: tools/dev.sh run [simulate args…] | test [ctest args…] | lint" >&2
    exit 2
    ;;
esac
