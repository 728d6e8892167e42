#!/usr/bin/env bash
# The prefix-routing study (doc/guide.md, "Prefix-aware routing"): the Mooncake conversation trace
# on eight H100s serving Llama-3.1-8B with prefix caching (mooncake_prefix.yaml), routed by
# prefix_aware, least_outstanding and round_robin, then prefix_aware with its view of the replicas
# scraped every 50, 200, 1000 and 5000 ms. Prints one row per run (fleet prefix hit rate, TTFT p50
# and p99, goodput and attainment under the config's SLO: TTFT ≤ 2 s and TBT ≤ 100 ms) and, unless
# --no-plots, draws OUT/mooncake_prefix.png. Options: --out DIR (default out/mooncake_prefix),
# --time-scale X (default 1.0: the trace's own rate), --no-plots. SIMULATE names the binary.
# PYTHON names the interpreter (default /usr/bin/python3, Debian's, which has matplotlib).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
experiments="$root/configs/experiments"
simulate="${SIMULATE:-$root/build/tools/simulate}"
out=out/mooncake_prefix
scale=1.0
plots=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --time-scale) scale="$2"; shift 2 ;;
    --no-plots) plots=0; shift ;;
    *) echo "usage: $0 [--out DIR] [--time-scale X] [--no-plots]" >&2; exit 2 ;;
  esac
done
runs=("round_robin 0" "least_outstanding 0" "prefix_aware 0" "prefix_aware 50" "prefix_aware 200"
      "prefix_aware 1000" "prefix_aware 5000")
for run in "${runs[@]}"; do
  set -- $run
  extra=()
  [ "$1" = prefix_aware ] && extra=(--set "router.scrape_interval_ms=$2")
  "$simulate" "$experiments/mooncake_prefix.yaml" -q --set "router.kind=$1" "${extra[@]}" \
    --set "workload.trace.time_scale=$scale" --out "$out/$1_$2" >/dev/null
done
"${PYTHON:-/usr/bin/python3}" - "$out" "$plots" "${runs[@]}" <<'PY'
import json, sys
out, plots, runs = sys.argv[1], sys.argv[2] == "1", [r.split() for r in sys.argv[3:]]
rows = []
print("| router | scrape_interval_ms | prefix hit rate | TTFT p50 (ms) | TTFT p99 (ms) | goodput (req/s) | attainment |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for kind, scrape in runs:
    j = json.load(open(f"{out}/{kind}_{scrape}/summary.json"))
    t = j["latency_ms"]["ttft"]
    row = (kind, scrape if kind == "prefix_aware" else "—", j["prefix_cache"]["hit_rate"],
           t["p50"], t["p99"], j["slo"]["goodput_requests_per_s"], j["slo"]["attainment"])
    rows.append(row)
    print(f"| {row[0]} | {row[1]} | {row[2]:.1%} | {row[3]:.0f} | {row[4]:.0f} | {row[5]:.2f} | {row[6]:.1%} |")
if plots:
    try:
        import matplotlib
    except ImportError:
        sys.exit("no plot: matplotlib is not installed (apt install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = [r[0] if r[0] != "prefix_aware" else f"prefix {r[1]} ms" for r in rows]
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    for a, k, name in zip(ax, (2, 4, 5), ("prefix hit rate", "TTFT p99 (ms)", "goodput (req/s)")):
        a.bar(range(len(rows)), [r[k] for r in rows], color="tab:blue")
        a.set_xticks(range(len(rows)), labels, rotation=30, ha="right", fontsize=8)
        a.set_title(name)
    fig.suptitle("Mooncake conversation trace, 8× H100, Llama-3.1-8B")
    fig.tight_layout()
    fig.savefig(f"{out}/mooncake_prefix.png", dpi=120)
    print(f"plot: {out}/mooncake_prefix.png")
PY
