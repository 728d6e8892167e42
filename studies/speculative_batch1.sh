#!/usr/bin/env bash
# Speculative decoding at batch 1 against a public measurement (doc/validation.md,
# "Speculative decoding"): Llama-3.1-8B on one H100, one request at a time (128-token prompts,
# 512-token outputs, 0.1 req/s), plain decoding and EAGLE-style heads (one target layer plus the
# LM head per draft token, k = 3) at per-token acceptance rates 0.6, 0.7 and 0.8. Prints the
# mean TPOT of each, the tokens per verify and the TPOT speedup. Output folder: --out DIR (default
# out/speculative_batch1); SIMULATE names the simulate binary.
# PYTHON names the interpreter (default /usr/bin/python3, Debian's, which has matplotlib).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
simulate="${SIMULATE:-$root/build/tools/simulate}"
out=out/speculative_batch1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || { echo "$0: --out needs a folder" >&2; exit 2; }; out="$2"; shift 2 ;;
    -*) echo "usage: $0 [--out DIR]" >&2; exit 2 ;;
    *) out="$1"; shift ;;  # the folder, as a bare argument
  esac
done
mkdir -p "$out"
cat >"$out/plain.yaml" <<'YAML'
name: batch1
seed: 1
model: meta-llama/Llama-3.1-8B
replicas: {gpu: h100-sxm, tp: 1}
scheduler: {kind: sarathi, chunk_size: 512, max_num_seqs: 64, max_model_len: 4096}
cost_model: {kind: analytical}
workload:
  arrival: {kind: static, qps: 0.1}
  lengths: {kind: fixed, prompt_tokens: 128, output_tokens: 512}
  num_requests: 20
YAML
"$simulate" "$out/plain.yaml" --out "$out/plain" -q
for a in 0.6 0.7 0.8; do
  { cat "$out/plain.yaml"
    echo "speculative: {method: eagle, num_speculative_tokens: 3, acceptance_rate: $a}"
  } >"$out/eagle_$a.yaml"
  "$simulate" "$out/eagle_$a.yaml" --out "$out/eagle_$a" -q
done
"${PYTHON:-/usr/bin/python3}" - "$out" <<'PY'
import json, sys
out = sys.argv[1]
tpot = lambda d: json.load(open(f"{out}/{d}/summary.json"))["latency_ms"]["tpot"]["mean"]
base = tpot("plain")
print(f"plain            TPOT {base:6.3f} ms  ({1000 / base:6.1f} tok/s)")
for a in ("0.6", "0.7", "0.8"):
    s = json.load(open(f"{out}/eagle_{a}/summary.json"))
    t = s["latency_ms"]["tpot"]["mean"]
    length = s["speculative"]["mean_acceptance_length"]
    print(f"eagle α={a}  TPOT {t:6.3f} ms  ({1000 / t:6.1f} tok/s)  acceptance length "
          f"{length:.3f}  speedup {base / t:.3f}")
PY
