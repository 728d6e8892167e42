#!/usr/bin/python3
"""Where the GEMM residual sits on one GPU: the four projection GEMMs of `costmodel validate
--rows` binned by token count and by the tail of the last wave (the fraction of the SMs a
partial last wave of 128x128 tiles occupies). A wave-quantized model that misses the SM count
leaves a signed error that grows with the tail; one that captures it leaves the tail flat.

    tools/gemm_waves.py ROWS.csv --sms 84

ROWS.csv: `costmodel validate --gpu GPU --profiles DIR --rows ROWS.csv`. The GEMM widths come
from the model's file under configs/models (hidden size, intermediate size, heads, KV heads).
Nothing is fitted.
"""
import argparse
import csv
import math
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEMMS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")
BANDS = ((64, "≤ 64"), (256, "65–256"), (1024, "257–1024"), (4096, "1025–4096"),
         (math.inf, "> 4096"))


def widths(model):
    """Output width of each GEMM at TP1 (the column-parallel ones divide by TP)."""
    path = os.path.join(ROOT, "configs", "models", model + ".yaml")
    try:
        with open(path) as f:
            text = f.read()
    except OSError as e:
        sys.exit(f"{path}: {e.strerror} (expected the model file of {model})")
    # Top-level scalars only (no YAML parser needed for these keys).
    m = {k: v for k, v in re.findall(r"^(\w+):\s*([^\s#]+)", text, re.M)}
    m = {k: (int(v) if v.isdigit() else v == "true" if v in ("true", "false") else v)
         for k, v in m.items()}
    heads = m["num_heads"]
    head_dim = m.get("head_dim", m["hidden_size"] // heads)
    qkv = (heads + 2 * m.get("num_kv_heads", heads)) * head_dim
    up = m["intermediate_size"] * (2 if m.get("gated_mlp", True) else 1)
    return {"attn_pre_proj": (qkv, True), "attn_post_proj": (m["hidden_size"], False),
            "mlp_up_proj": (up, True), "mlp_down_proj": (m["hidden_size"], False)}


def summary(errors):
    n = len(errors)
    return f"n={n:5d}  MAPE {sum(map(abs, errors)) / n:6.2f}%  signed {sum(errors) / n:+6.2f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows")
    ap.add_argument("--sms", type=int, required=True, help="the GPU's SM count")
    a = ap.parse_args()
    by_band, by_tail = defaultdict(list), defaultdict(list)
    cache = {}
    with open(a.rows) as f:
        for line, r in enumerate(csv.DictReader(f), start=2):
            if r["op"] not in GEMMS:
                continue
            try:
                m, tp, err = int(r["num_tokens"]), int(r["tp"]), float(r["error_pct"])
            except (KeyError, ValueError) as e:
                sys.exit(f"{a.rows}:{line}: {e} (expected num_tokens, tp and error_pct)")
            if r["model"] not in cache:
                cache[r["model"]] = widths(r["model"])
            n, split = cache[r["model"]][r["op"]]
            n = n // tp if split else n
            by_band[next(name for top, name in BANDS if m <= top)].append(err)
            waves = math.ceil(m / 128) * math.ceil(n / 128) / a.sms
            if waves >= 1:
                by_tail[min(int((waves - math.floor(waves)) * 4), 3)].append(err)
    print("tokens       " + "  (the four GEMMs)")
    for _, name in BANDS:
        if by_band[name]:
            print(f"  {name:<10} {summary(by_band[name])}")
    print(f"last-wave tail, 128x128 tiles on {a.sms} SMs (rows of at least one wave)")
    for q in range(4):
        if by_tail[q]:
            print(f"  {q / 4:.2f}–{(q + 1) / 4:.2f}  {summary(by_tail[q])}")


if __name__ == "__main__":
    main()
