#!/usr/bin/env bash
# The P:D ratio question (studies/README.md): four H100s serving Llama-3.1-8B on
# arXiv-summarisation lengths (prompts 2.6k tokens on average, outputs 290), as 1:3, 2:2 and 3:1
# prefill:decode fleets or one mixed chunked-prefill fleet, each at chunk budgets 256–4096: the
# highest Poisson rate at which ≥ 90% of requests meet both the TTFT and the TBT bound
# (DistServe's goodput), under a tight pair (TTFT 200 ms, TBT 20 ms) and a looser one (300 ms,
# 25 ms), and per pair a verdict line: the fleet and chunk of highest rate against the best of
# the other kind. Output folder: --out DIR (default out/pd_ratio); SWEEP names the sweep binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sweep="${SWEEP:-$root/build/tools/sweep}"
out=out/pd_ratio
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "$0: --out needs a folder" >&2; exit 2; }; out="$2"; shift 2 ;;
    -*) echo "usage: $0 [--out DIR]" >&2; exit 2 ;;
    *) out="$1"; shift ;;  # the folder, as a bare argument
  esac
done
h='gpu: h100-sxm'
fleets="replicas=[{$h, count: 1, role: prefill}, {$h, count: 3, role: decode}],"
fleets+="[{$h, count: 2, role: prefill}, {$h, count: 2, role: decode}],"
fleets+="[{$h, count: 3, role: prefill}, {$h, count: 1, role: decode}],[{$h, count: 4}]"
for slo in "200 20" "300 25"; do
  set -- $slo
  echo "== TTFT ≤ $1 ms and TBT ≤ $2 ms for ≥ 90% of requests"
  "$sweep" "$root/configs/pd_h100_llama3_8b.yaml" --set slo.ttft_ms="$1" --set slo.tbt_ms="$2" \
    --vary "$fleets" --vary scheduler.chunk_size=256,512,1024,2048,4096 --seeds 3 \
    --max-rate workload.arrival.qps --slo 'attainment>=0.9' --out "$out/ttft$1_tbt$2" --no-plots |
    sed 's/{gpu: h100-sxm, count: \([0-9]\), role: \([a-z]*\)}/\2×\1/g; s/{gpu: h100-sxm, count: 4}/mixed×4/'
  # The answer: the fleet and chunk of highest rate, against the best of the other kind.
  "${PYTHON:-/usr/bin/python3}" - "$out/ttft$1_tbt$2/capacity.csv" "$1" "$2" <<'PY'
import csv, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def fleet(r):
    parts = re.findall(r"count: (\d+)(?:, role: (\w+))?", r["replicas"])
    return " + ".join(f"{c} {role or 'mixed'}" for c, role in parts)
best = max(rows, key=lambda r: float(r["max_rate"]))
pd = "role:" in best["replicas"]
other = max((r for r in rows if ("role:" in r["replicas"]) != pd), key=lambda r: float(r["max_rate"]))
gain = 100 * (float(best["max_rate"]) / float(other["max_rate"]) - 1)
print(f"verdict    TTFT ≤ {sys.argv[2]} ms, TBT ≤ {sys.argv[3]} ms: {fleet(best)} at chunk "
      f"{best['scheduler.chunk_size']} serves {float(best['max_rate']):.1f} req/s, {gain:+.0f}% "
      f"over the best {'mixed' if pd else 'P/D'} fleet ({fleet(other)} at chunk "
      f"{other['scheduler.chunk_size']}, {float(other['max_rate']):.1f} req/s)")
PY
done
