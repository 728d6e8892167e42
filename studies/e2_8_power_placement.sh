#!/usr/bin/env bash
# The E2.8 study (studies/README.md): two RTX 5090s capped at 400 W and
# 575 W; each mix is one large prefill chunk L (4096, 8192, 16384 tokens) and small chunks
# totalling 0.5 L (8 of L/16) or 1.5 L (12 of L/8). Placed by the power model's capped prices
# (aware), by the uncapped price (blind) and by enumeration (oracle). Extra arguments go to
# costmodel place (--json, --cost-model …); COSTMODEL names the binary (default
# build/tools/costmodel).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
costmodel="${COSTMODEL:-$root/build/tools/costmodel}"
exec "$costmodel" place --gpu rtx-5090 --model meta-llama/Llama-3.1-8B --caps 400,575 \
  --mix 4096,256x8 --mix 4096,512x12 --mix 8192,512x8 --mix 8192,1024x12 \
  --mix 16384,1024x8 --mix 16384,2048x12 "$@"
