#!/usr/bin/env bash
# When does speculative decoding pay? configs/h100_speculative_llama3_8b.yaml (Llama-3.2-1B
# drafting 4 tokens for Llama-3.1-8B on one H100, acceptance rate 0.7, ShareGPT lengths),
# saturated (100 req/s offered, a token budget of 8192 so that no verify is cut) and swept over
# the batch size (max_num_seqs 1 to 256) with speculation on and off (the same config without
# its `speculative:` section): mean TPOT and output throughput of each, and their ratios, which
# shrink as the batch grows and the verify's k + 1 tokens per request stop riding free on a
# memory-bound step. Output folder: --out DIR (default out/speculative_load): on/ and off/ (sweep
# folders), speedup.csv and speedup.png (matplotlib, as tools/plot.py; --no-plots skips it).
# SWEEP names the sweep binary.
# PYTHON names the interpreter (default /usr/bin/python3, Debian's, which has matplotlib).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
sweep="${SWEEP:-$root/build/tools/sweep}"
out=out/speculative_load
plots=""
# --out DIR and --no-plots, in any order; a bare first argument is the folder too.
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "$0: --out needs a folder" >&2; exit 2; }; out="$2"; shift 2 ;;
    --no-plots) plots=--no-plots; shift ;;
    -*) echo "usage: $0 [--out DIR] [--no-plots]" >&2; exit 2 ;;
    *) out="$1"; shift ;;
  esac
done
config="$root/configs/h100_speculative_llama3_8b.yaml"
batches="scheduler.max_num_seqs=1,4,16,64,128,256"
load=(--set workload.num_requests=600 --set workload.arrival.qps=100 --set scheduler.chunk_size=8192)
mkdir -p "$out"
# The twin without speculation: everything before the section, its paths still resolved
# against configs/.
{
  sed '/^speculative:/,/^  acceptance_rate:/d' "$config"
  echo "config_dir: $root/configs"
} >"$out/plain.yaml"
"$sweep" "$config" "${load[@]}" --vary "$batches" --out "$out/on" --quiet --no-plots
"$sweep" "$out/plain.yaml" "${load[@]}" --vary "$batches" --out "$out/off" --quiet --no-plots
"${PYTHON:-/usr/bin/python3}" - "$out" "$plots" <<'PY'
import csv, sys
out, plots = sys.argv[1], sys.argv[2]
def rows(side):
    with open(f"{out}/{side}/means.csv") as f:
        return {int(r["scheduler.max_num_seqs"]): r for r in csv.DictReader(f)}
on, off = rows("on"), rows("off")
cols = ["max_num_seqs", "tpot_off_ms", "tpot_on_ms", "speedup_tpot", "out_tok_s_off",
        "out_tok_s_on", "speedup_tok_s"]
table = []
for q in sorted(on):
    a, b = off[q], on[q]
    f = lambda r, k: float(r[k + "_mean"])
    table.append([q, f(a, "tpot_mean_ms"), f(b, "tpot_mean_ms"),
                  f(a, "tpot_mean_ms") / f(b, "tpot_mean_ms"), f(a, "output_tok_s"),
                  f(b, "output_tok_s"), f(b, "output_tok_s") / f(a, "output_tok_s")])
with open(f"{out}/speedup.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(cols)
    w.writerows(table)
print(" ".join(f"{c:>13}" for c in cols))
for r in table:
    print(" ".join(f"{v:>13.3f}" if isinstance(v, float) else f"{v:>13}" for v in r))
if plots != "--no-plots":
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot([r[0] for r in table], [r[3] for r in table], marker="o", label="TPOT off / on")
    ax.plot([r[0] for r in table], [r[6] for r in table], marker="s", label="output tok/s on / off")
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch size (max_num_seqs, saturated)")
    ax.set_ylabel("speedup")
    ax.legend()
    ax.set_title("Llama-3.2-1B drafting for Llama-3.1-8B, H100, k=4, α=0.7")
    fig.tight_layout()
    fig.savefig(f"{out}/speedup.png", dpi=120)
    print(f"plot: {out}/speedup.png")
PY
