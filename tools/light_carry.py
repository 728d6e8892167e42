#!/usr/bin/python3
"""Compares two ways of carrying the light kernels' stream rates from the A100 home fit to another
GPU, since latency-bound light kernels run at a rate the bandwidth ratio alone does not predict:
the carried bandwidth fraction the hardware files use (the A100 fraction x the file's memory
ratio) and a carried per-SM law, Little's law for a kernel whose rate is set by the bytes each SM
keeps in flight:

    rate = min(c_k * SMs * f_boost, stream * BW),  c_k = fraction_k(A100) * BW_A100 / (SMs * f)_A100

with c_k in bytes per SM per clock (the invariant unit) and `stream` the best DRAM fraction a
streaming kernel reaches, 0.88 on A100-80 (ncu-measured eta_max) x the file's memory ratio. On
A100 the two rules give the same rates (in sample). For each GPU named, writes its hardware file with the
law's fractions into OUT/<gpu>.yaml and prints `costmodel validate` per light-op class under
both rules.

    tools/light_carry.py [--costmodel build/tools/costmodel] [--out DIR] GPU:PROFILES ...

GPU is a hardware file name (configs/hardware/GPU.yaml), PROFILES the profile folder of that GPU
(a Vidur compute folder or data/measured). Nothing is fitted.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOME = "a100-80gb"
HOME_STREAM = 0.88  # A100-80 eta_max (ncu): a streaming kernel's best share of DRAM BW
KERNEL = re.compile(r"^(    (\w+): \{floor_ns: [0-9.]+, bw_fraction: )([0-9.]+)", re.M)
LIGHT_OPS = ["emb", "input_layernorm", "attn_rope", "post_attention_layernorm", "mlp_act", "add"]


def scalar(text, key, path):
    m = re.search(rf"^{key}: *([0-9.]+)", text, re.M)
    if not m:
        sys.exit(f"{path}: no top-level `{key}:` number")
    return float(m.group(1))


def eta_max(text, path):
    m = re.search(r"^  memory:\n(?:    .*\n)*?    eta_max: *([0-9.]+)", text, re.M)
    if not m:
        sys.exit(f"{path}: no analytical.memory.eta_max")
    return float(m.group(1))


def read(gpu):
    path = os.path.join(ROOT, "configs/hardware", gpu + ".yaml")
    with open(path) as f:
        text = f.read()
    return {
        "path": path,
        "text": text,
        "sm_ghz": scalar(text, "sms", path) * scalar(text, "boost_clock_mhz", path) / 1e3,
        "bw": scalar(text, "memory_bw_gb_per_s", path),
        "eta": eta_max(text, path),
        "fractions": {m.group(2): float(m.group(3)) for m in KERNEL.finditer(text)},
    }


def law_text(home, g):
    stream = HOME_STREAM * g["eta"] / home["eta"]

    def law(m):
        c = home["fractions"][m.group(2)] * home["bw"] / home["sm_ghz"]  # bytes / SM / clock
        return m.group(1) + f"{min(c * g['sm_ghz'] / g['bw'], stream, 1.0):.4f}"

    return KERNEL.sub(law, g["text"])


def validate(costmodel, profiles, gpu, hardware):
    cmd = [costmodel, "validate", "--profiles", profiles, "--gpu", gpu, "--hardware", hardware]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    text = out.stdout[out.stdout.index("\nALL"):]
    block = float(re.search(r"block +([0-9.]+)%", text).group(1))
    ops = {m.group(1): float(m.group(2)) for m in re.finditer(r"^    (\w+) +([0-9.]+)%", text, re.M)}
    return block, ops


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--costmodel", default=os.path.join(ROOT, "build/tools/costmodel"))
    ap.add_argument("--out", default="out/light_carry")
    ap.add_argument("targets", nargs="+", metavar="GPU:PROFILES")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    home = read(HOME)
    for t in a.targets:
        gpu, _, profiles = t.partition(":")
        if not profiles:
            sys.exit(f"{t}: expected GPU:PROFILES")
        g = read(gpu)
        law_file = os.path.join(a.out, gpu + ".yaml")
        with open(law_file, "w") as f:
            f.write(law_text(home, g))
        frac = validate(a.costmodel, profiles, gpu, g["path"])
        law = validate(a.costmodel, profiles, gpu, law_file)
        ratio = (g["sm_ghz"] / home["sm_ghz"]) / (g["bw"] * g["eta"] / (home["bw"] * home["eta"]))
        print(f"{gpu} ({profiles}): SMs x clock grew {ratio:.3f} x as fast as BW x eta_max "
              f"against {HOME}; law file {law_file}")
        print(f"  {'MAPE':26s} {'carried fraction':>17s} {'carried law':>12s}")
        print(f"  {'MLP block':26s} {frac[0]:16.2f}% {law[0]:11.2f}%")
        for op in LIGHT_OPS:
            print(f"  {op:26s} {frac[1][op]:16.2f}% {law[1][op]:11.2f}%")


if __name__ == "__main__":
    main()
