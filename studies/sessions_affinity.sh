#!/usr/bin/env bash
# The session-affinity study (doc/guide.md, "Decide: session affinity on chat traffic"): closed-loop
# multi-turn chat sessions on eight H100s serving Llama-3.1-8B with prefix caching
# (sessions_affinity.yaml), routed by session_affinity, prefix_aware, least_outstanding and
# round_robin. Prints one row per router (fleet prefix hit rate, TTFT p50 and p99, TBT p99, mean
# session time, goodput and attainment under the config's SLO: TTFT ≤ 1 s and TBT ≤ 100 ms) and,
# unless --no-plots, draws OUT/sessions_affinity.png. Options: --out DIR (default
# out/sessions_affinity), --qps X (session starts per second, default 4), --no-plots. SIMULATE
# names the binary.
# PYTHON names the interpreter (default /usr/bin/python3, Debian's, which has matplotlib).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
experiments="$root/configs/experiments"
simulate="${SIMULATE:-$root/build/tools/simulate}"
out=out/sessions_affinity
qps=4
plots=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --qps) qps="$2"; shift 2 ;;
    --no-plots) plots=0; shift ;;
    *) echo "usage: $0 [--out DIR] [--qps X] [--no-plots]" >&2; exit 2 ;;
  esac
done
routers=(session_affinity prefix_aware least_outstanding round_robin)
for router in "${routers[@]}"; do
  "$simulate" "$experiments/sessions_affinity.yaml" -q --set "router.kind=$router" \
    --set "workload.arrival.qps=$qps" --out "$out/$router" >/dev/null
done
"${PYTHON:-/usr/bin/python3}" - "$out" "$plots" "${routers[@]}" <<'PY'
import json, sys
out, plots, routers = sys.argv[1], sys.argv[2] == "1", sys.argv[3:]
rows = []
print("| router | prefix hit rate | TTFT p50 (ms) | TTFT p99 (ms) | TBT p99 (ms) | mean session (s) | goodput (req/s) | attainment |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for router in routers:
    j = json.load(open(f"{out}/{router}/summary.json"))
    t = j["latency_ms"]["ttft"]
    row = (router, j["prefix_cache"]["hit_rate"], t["p50"], t["p99"], j["latency_ms"]["tbt"]["p99"],
           j["sessions"]["mean_session_s"], j["slo"]["goodput_requests_per_s"], j["slo"]["attainment"])
    rows.append(row)
    print(f"| {row[0]} | {row[1]:.1%} | {row[2]:.0f} | {row[3]:.0f} | {row[4]:.0f} | {row[5]:.1f} | {row[6]:.2f} | {row[7]:.1%} |")
if plots:
    try:
        import matplotlib
    except ImportError:
        sys.exit("no plot: matplotlib is not installed (apt install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(12, 3.6))
    for a, k, name in zip(ax, (1, 2, 3), ("prefix hit rate", "TTFT p50 (ms)", "TTFT p99 (ms)")):
        a.bar(range(len(rows)), [r[k] for r in rows], color="tab:blue")
        a.set_xticks(range(len(rows)), [r[0] for r in rows], rotation=25, ha="right", fontsize=8)
        a.set_title(name)
    fig.suptitle("Closed-loop chat sessions, 8× H100, Llama-3.1-8B, prefix caching")
    fig.tight_layout()
    fig.savefig(f"{out}/sessions_affinity.png", dpi=120)
    print(f"plot: {out}/sessions_affinity.png")
PY
