#!/usr/bin/env bash
# The E2.9 study (studies/README.md): the analytical model picks the largest
# chunk budget whose TBT p99 honours each SLO; the same grid priced by the RF baseline on the
# measured H200 table is the oracle. Extra arguments go to sweep (--out DIR, --threads 1,2, -q …);
# SWEEP names the sweep binary (default build/tools/sweep).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
experiments="$root/configs/experiments"
sweep="${SWEEP:-$root/build/tools/sweep}"
exec "$sweep" "$experiments/e2_9_chunk_budget.yaml" \
  --vary scheduler.max_num_batched_tokens=256,384,512,768,1024,1536,2048,3072,4096,6144,8192 \
  --seeds 5 --slo tbt_p99_ms=25,30,40,50,75,100 --pick max:scheduler.max_num_batched_tokens \
  --baseline scheduler.max_num_batched_tokens=2048 --baseline scheduler.max_num_batched_tokens=512 \
  --oracle 'cost_model={kind: rf, gpu: h200, profiles: ../../data/measured}' "$@"
