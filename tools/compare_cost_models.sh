#!/usr/bin/env bash
# Runs one workload under the three step-cost models — analytical (datasheet only), rf_scaled
# (Vidur's Random Forest trained on the A100 profile, moved to the target GPU by the
# datasheet-roofline ratio) and rf (the same forests verbatim) — and prints TTFT and TBT side by
# side. The RF forests train on the first run (seconds) and are cached for the next.
#
#   tools/compare_cost_models.sh [CONFIG] [GPU] [extra simulate flags...]
#     CONFIG  default configs/vidur_llama3_8b_a100.yaml (Llama-3-8B, Sarathi chunk 512)
#     GPU     replica GPU for all three runs, default h100 (no Llama-3-8B H100 row is used)
# Environment: SIMULATE (default: build/tools/simulate as tools/dev.sh builds it, else simulate
# on PATH), PROFILES (Vidur profiling/compute folder, relative to the config's folder or absolute;
# default ../data/vidur/profiling/compute, the repository's data/ folder).
set -euo pipefail
cd "$(dirname "$0")/.."
config=${1:-configs/vidur_llama3_8b_a100.yaml}
gpu=${2:-h100}
shift $(( $# > 2 ? 2 : $# ))
profiles=${PROFILES:-../data/vidur/profiling/compute}
if [[ -n ${SIMULATE:-} ]]; then
  simulate=$SIMULATE
elif [[ -x build/tools/simulate ]]; then
  simulate=build/tools/simulate
else
  simulate=$(command -v simulate || true)
fi
if [[ -z $simulate || ! -x $simulate ]]; then
  echo "error: no simulate found (run tools/dev.sh run, put simulate on PATH, or set" \
       "SIMULATE=path/to/simulate)" >&2
  exit 2
fi

declare -A section=(
  [analytical]="{kind: analytical}"
  [rf_scaled]="{kind: rf_scaled, gpu: a100, profiles: $profiles}"
  [rf]="{kind: rf, gpu: a100, profiles: $profiles}"
)
order=(analytical rf_scaled rf)
declare -A rows
for cm in "${order[@]}"; do
  out=$("$simulate" "$config" --no-outputs --set "replicas=[{gpu: $gpu, tp: 1, count: 1}]" \
        --set "cost_model=${section[$cm]}" "$@")
  # Summary lines: "ttft  mean p50 p90 p95 p99 max" (ms).
  rows[$cm]=$(awk '$1 == "ttft" || $1 == "tbt" {printf "%s %s %s %s ", $1, $2, $3, $6}' <<<"$out")
  makespan=$(awk '$1 == "makespan" {print $2}' <<<"$out")
  rows[$cm]+="makespan $makespan"
done

echo "config $config on $gpu (A100-trained forests for rf and rf_scaled; ms)"
printf '%-11s %10s %10s %10s %10s %10s %10s %11s\n' model "TTFT mean" "TTFT p50" "TTFT p99" \
  "TBT mean" "TBT p50" "TBT p99" "makespan s"
for cm in "${order[@]}"; do
  read -r _ tm tp50 tp99 _ bm bp50 bp99 _ mk <<<"${rows[$cm]}"
  printf '%-11s %10s %10s %10s %10s %10s %10s %11s\n' "$cm" "$tm" "$tp50" "$tp99" "$bm" "$bp50" \
    "$bp99" "$mk"
done
