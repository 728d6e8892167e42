#!/usr/bin/env bash
# tools/bench/compare.sh BASE_COMMIT [RUNS] [-- bench_engine args…]
# The speed guard to run before landing (never in CI): builds bench_engine at BASE_COMMIT in a
# scratch worktree and from the working tree, runs the two alternately pinned to one core, RUNS
# times each (default 3), checks that both simulate the same steps, and prints each wall time and
# the ratio of the medians (working tree / base; below 1 is faster).
# Default run: 1M requests, analytical cost model, outputs off, at 92% of the replica's capacity.
set -euo pipefail
cd "$(dirname "$0")/../.."
base=${1:?usage: tools/bench/compare.sh BASE_COMMIT [RUNS] [-- bench_engine args…]}
shift
runs=3
if [ $# -gt 0 ] && [ "$1" != "--" ]; then runs=$1; shift; fi
[ "${1:-}" = "--" ] && shift
args=("$@")
if [ ${#args[@]} -eq 0 ]; then
  args=(--requests 1000000 --cost-model analytical --set workload.arrival.qps=8.2 --outputs off)
fi
core=${BENCH_CORE:-1}
scratch=${BENCH_SCRATCH:-/tmp/servesim-bench-base}

build() {  # $1: source folder
  cmake -S "$1" -B "$1/build-bench" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$1/build-bench" --target bench_engine -j"$(nproc)" >/dev/null
}

source tools/base_checkout.sh
rev=$(checkout_base "$base" "$scratch")
echo "building $base ($rev) in $scratch and the working tree…" >&2
build "$scratch"
build .

one() {  # $1: source folder → "steps wall_s"
  (cd "$1" && taskset -c "$core" ./build-bench/tools/bench/bench_engine --single "${args[@]}") |
    /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["steps"], d["wall_s"])'
}

base_times=()
new_times=()
for ((i = 1; i <= runs; i++)); do
  read -r base_steps t < <(one "$scratch")
  base_times+=("$t")
  read -r new_steps t < <(one .)
  new_times+=("$t")
  if [ "$base_steps" != "$new_steps" ]; then
    echo "steps differ: base $base_steps, working tree $new_steps (results changed)" >&2
    exit 1
  fi
  echo "run $i: base ${base_times[-1]} s, working tree ${new_times[-1]} s ($new_steps steps)"
done
/usr/bin/python3 - "${base_times[*]}" "${new_times[*]}" <<'EOF'
import statistics, sys
b = [float(x) for x in sys.argv[1].split()]
n = [float(x) for x in sys.argv[2].split()]
print(f"median: base {statistics.median(b):.2f} s, working tree {statistics.median(n):.2f} s, "
      f"ratio {statistics.median(n) / statistics.median(b):.3f}")
EOF
