#!/usr/bin/env bash
# tools/fuzz.sh [SECONDS] [TARGET…] — runs each libFuzzer target of tests/fuzz for SECONDS (default
# 30), two at a time, and prints executions, wall time and findings per target. `tools/dev.sh test`
# builds the targets (build-san/, clang, ASan + UBSan) and runs this with 30 s; long runs:
# `tools/fuzz.sh 3600`. Seeds come from the shipped configs, catalog files and traces (and the
# regression corpus); the growing corpus is kept in build-san/fuzz/corpus/<target>. An input that
# breaks the contract is saved in build-san/fuzz/findings/<target>/ and the script fails: fix the
# defect and add the input to tests/fuzz/regressions/<target>/, which CTest replays.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
build=${SERVESIM_TEST_BUILD:-build-san}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(fuzz_config fuzz_trace_csv fuzz_experiments_csv fuzz_catalog_file)
work="$build/fuzz"

# seed TARGET SELECTOR FILE…: each file as one seed, after a selector byte (none if SELECTOR is -).
seed() {
  local target=$1 selector=$2
  shift 2
  local dir="$work/seeds/$target"
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] || continue
    local name
    name="$dir/$(echo "$selector-$f" | tr '/.' '__')"
    if [ "$selector" = - ]; then
      head -c 65536 "$f" >"$name"
    else
      { printf "\\x$(printf %02x "$selector")"; head -n 40 "$f"; } >"$name"
    fi
  done
}

rm -rf "$work/seeds"
seed fuzz_config - configs/*.yaml tests/tools/configs/*.yaml
seed fuzz_trace_csv 0 tests/workloads/data/*.csv data/vidur/processed_traces/*.csv
seed fuzz_trace_csv 1 tests/workloads/data/azure_*.csv data/azure/*.csv
seed fuzz_trace_csv 2 tests/workloads/data/measured_small.csv data/sim2real/traces/*-tp1-general.csv
seed fuzz_trace_csv 3 tests/workloads/data/lengths_*.csv
seed fuzz_experiments_csv 0 data/sim2real/experiments.csv
seed fuzz_experiments_csv 1 data/sim2real/traces/*-tp1-general.csv
seed fuzz_catalog_file 0 configs/hardware/*.yaml
seed fuzz_catalog_file 1 configs/models/*/*.yaml
seed fuzz_catalog_file 2 configs/engines/*.yaml

run_one() {
  local t=$1
  local bin="$build/tests/fuzz/$t"
  [ -x "$bin" ] || { echo "$bin: not built (tools/dev.sh test builds it)" >&2; return 1; }
  mkdir -p "$work/corpus/$t" "$work/findings/$t"
  # -timeout: an input running 10 s is a hang; -rss_limit_mb: a run past 4 GiB is unbounded memory.
  "$bin" "$work/corpus/$t" "$work/seeds/$t" "tests/fuzz/regressions/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
    -artifact_prefix="$work/findings/$t/" -print_final_stats=1 >"$work/$t.log" 2>&1
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}  # a leak is not a contract break here
failed=0
pids=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  if [ ${#pids[@]} -eq 2 ]; then
    wait "${pids[0]}" || failed=1
    wait "${pids[1]}" || failed=1
    pids=()
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done

printf '%-22s %14s %8s %10s %9s\n' target executions seconds "exec/s" findings
for t in "${targets[@]}"; do
  log="$work/$t.log"
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1 || true)
  time_s=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | awk '{print $5}' | tail -1 || true)
  found=$(find "$work/findings/$t" -type f | wc -l)
  printf '%-22s %14s %8s %10s %9s\n' "$t" "${runs:-?}" "${time_s:-?}" \
    "$([ -n "${runs:-}" ] && [ -n "${time_s:-}" ] && [ "$time_s" -gt 0 ] && echo $((runs / time_s)) || echo ?)" \
    "$found"
  if [ "$found" -gt 0 ]; then
    failed=1
    echo "  $t: see $log and $work/findings/$t/" >&2
  fi
done
exit $failed
