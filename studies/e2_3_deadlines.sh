#!/usr/bin/env bash
# The E2.3 study (studies/README.md): FCFS, EDF + QLM's native estimator and
# EDF + the mechanism estimator, each with keep / reject / demote, on one H100 from 10 to 120 req/s,
# 5 seeds (each seed one trace, shared by every policy at every load). Extra arguments go to sweep
# (--out DIR, --threads N, -q …); SWEEP names the sweep binary (default build/tools/sweep).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
experiments="$root/configs/experiments"
sweep="${SWEEP:-$root/build/tools/sweep}"
exec "$sweep" "$experiments/e2_3_deadlines.yaml" \
  --vary workload.arrival.qps=10,15,20,30,40,60,80,100,120 \
  --vary "router=@$experiments/e2_3_policies.txt" --seeds 5 "$@"
