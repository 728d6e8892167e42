#!/usr/bin/env bash
# The multi-LoRA study (doc/guide.md, "Multi-LoRA serving"): multi_lora.yaml (one H100,
# Llama-3.1-8B, rank-16 adapters with Zipf popularity) with 1, 8, 64 and 512 adapters and
# max_loras 4 and 16, each at a saturating rate (40 req/s: its throughput) and at 5 req/s (its
# TTFT p99), next to the base model alone; then a fleet of four H100s at 20 req/s with 64 and 512
# adapters, max_loras 8, routed by lora_affinity and least_outstanding. Prints two tables and,
# unless --no-plots, draws OUT/multi_lora.png. Options: --out DIR (default out/multi_lora),
# --no-plots. SIMULATE names the binary, PYTHON the interpreter (default /usr/bin/python3).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
experiments="$root/configs/experiments"
simulate="${SIMULATE:-$root/build/tools/simulate}"
out=out/multi_lora
plots=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --no-plots) plots=0; shift ;;
    *) echo "usage: $0 [--out DIR] [--no-plots]" >&2; exit 2 ;;
  esac
done
run() {  # run NAME --set … : one simulate into OUT/NAME
  local name="$1"; shift
  "$simulate" "$experiments/multi_lora.yaml" -q "$@" --out "$out/$name" >/dev/null
}
singles=()
for qps in 40 5; do
  run "base_q$qps" --set "workload.arrival.qps=$qps" --set lora.base_fraction=1
  for slots in 4 16; do
    for n in 1 8 64 512; do
      run "a${n}_s${slots}_q$qps" --set "workload.arrival.qps=$qps" --set "lora.num_adapters=$n" \
        --set "lora.max_loras=$slots"
    done
  done
done
for n in 64 512; do
  for router in lora_affinity least_outstanding; do
    run "fleet_a${n}_$router" --set replicas.0.count=4 --set workload.arrival.qps=20 \
      --set workload.num_requests=3000 --set "lora.num_adapters=$n" --set lora.max_loras=8 \
      --set "router.kind=$router"
  done
done
"${PYTHON:-/usr/bin/python3}" - "$out" "$plots" <<'PY'
import json, sys
out, plots = sys.argv[1], sys.argv[2] == "1"
def load(name):
    return json.load(open(f"{out}/{name}/summary.json"))
def tput(j):
    return j["throughput"]["output_tokens_per_s"]
def p99(j):
    return j["latency_ms"]["ttft"]["p99"]
print("| adapters | max_loras | output tok/s at 40 req/s | TTFT p99 at 5 req/s (ms) | loads (host / disk) at 5 req/s | distinct adapters per step |")
print("| --- | --- | --- | --- | --- | --- |")
b40, b5 = load("base_q40"), load("base_q5")
print(f"| base model | — | {tput(b40):.0f} | {p99(b5):.0f} | — | 0 |")
series = {}
for slots in (4, 16):
    for n in (1, 8, 64, 512):
        s, l = load(f"a{n}_s{slots}_q40"), load(f"a{n}_s{slots}_q5")
        lo = l["lora"]
        series.setdefault(slots, []).append((n, tput(s), p99(l)))
        print(f"| {n} | {slots} | {tput(s):.0f} | {p99(l):.0f} | {lo['loads_from_cpu']} / {lo['loads_from_disk']} | {s['lora']['mean_distinct_adapters_per_step']:.2f} |")
print()
print("| fleet (4× H100, 20 req/s) | router | output tok/s | TTFT p50 (ms) | TTFT p99 (ms) | loads (host / disk) | load s |")
print("| --- | --- | --- | --- | --- | --- | --- |")
fleet = []
for n in (64, 512):
    for router in ("lora_affinity", "least_outstanding"):
        j = load(f"fleet_a{n}_{router}")
        lo = j["lora"]
        fleet.append((f"{n} / {router}", p99(j)))
        print(f"| {n} adapters | {router} | {tput(j):.0f} | {j['latency_ms']['ttft']['p50']:.0f} | {p99(j):.0f} | {lo['loads_from_cpu']} / {lo['loads_from_disk']} | {lo['load_s']:.2f} |")
if plots:
    try:
        import matplotlib
    except ImportError:
        sys.exit("no plot: matplotlib is not installed (apt install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    for slots, pts in series.items():
        ax[0].plot([p[0] for p in pts], [p[1] for p in pts], "o-", label=f"max_loras {slots}")
        ax[1].plot([p[0] for p in pts], [p[2] for p in pts], "o-", label=f"max_loras {slots}")
    ax[0].axhline(tput(b40), color="gray", ls="--", label="base model")
    ax[1].axhline(p99(b5), color="gray", ls="--", label="base model")
    for a, t in zip(ax[:2], ("output tok/s at 40 req/s", "TTFT p99 at 5 req/s (ms)")):
        a.set_xscale("log", base=2)
        a.set_xlabel("adapters")
        a.set_title(t)
        a.legend(fontsize=8)
    ax[2].bar(range(len(fleet)), [f[1] for f in fleet], color="tab:blue")
    ax[2].set_xticks(range(len(fleet)), [f[0] for f in fleet], rotation=30, ha="right", fontsize=8)
    ax[2].set_title("4× H100 at 20 req/s: TTFT p99 (ms)")
    fig.suptitle("Multi-LoRA serving, Llama-3.1-8B, rank 16, Zipf s = 1")
    fig.tight_layout()
    fig.savefig(f"{out}/multi_lora.png", dpi=120)
    print(f"plot: {out}/multi_lora.png")
PY
