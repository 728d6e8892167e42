#!/usr/bin/python3
"""Fits the RTX 5090's power-model constants (pj_per_flop and sm_w_per_ghz in the `power:` section
of configs/hardware/rtx-5090.yaml) to a measured cap sweep on that GPU (n = 5, qkv GEMM K 4096,
N 6144; its figures are CLOCKS below and the PENALTIES of data/measured/cap_sweeps.yaml), the declared home fit of the power model,
starting from the values in the file. Everything else in the section is fixed by its source. The loss is flat along a valley (the penalties at M = 1024 and 4096 are
out of the model's reach), so a rerun from the fitted values may move them a little.

    tools/power_fit.py [--costmodel build/tools/costmodel] [--write]

Prints the fitted constants and the fit's figures (each target beside the model); with --write,
puts the constants into the hardware file. A coordinate search with halving steps minimises the
squared errors: the two clocks at M = 16384 in units of 1%, the four penalties in points.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HW = os.path.join(ROOT, "configs/hardware/rtx-5090.yaml")
CLOCKS = {(16384, 400): 2400, (16384, 575): 2731}          # MHz, measured
SWEEPS = os.path.join(ROOT, "data/measured/cap_sweeps.yaml")


def measured_penalties():
    """%, the midpoints of the measured ranges of the 5090's 575 -> 400 W sweep."""
    with open(SWEEPS) as f:
        sweep = yaml.safe_load(f)["rtx-5090"]
    return {p["tokens"]: round(sum(p["penalty_pct"]) / 2, 4) for p in sweep["points"]}


PENALTIES = measured_penalties()
KEYS = ["pj_per_flop", "sm_w_per_ghz"]
STEPS = {"pj_per_flop": 0.4, "sm_w_per_ghz": 0.2}
BOUNDS = {"pj_per_flop": (0.05, 20.0), "sm_w_per_ghz": (0.0, 10.0)}


def with_values(text, values):
    for k, v in values.items():
        text, n = re.subn(rf"^(  {k}:) .*$", rf"\g<1> {v:.4g}", text, count=1, flags=re.M)
        if n != 1:
            sys.exit(f"power_fit.py: {HW}: no `  {k}:` line in the power section")
    return text


def evaluate(costmodel, text, values):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(with_values(text, values))
        path = f.name
    try:
        out = subprocess.run([costmodel, "power", "--gpu", "rtx-5090", "--hardware", path,
                              "--caps", "400,450,500,575", "--tokens", "64,1024,4096,8192,16384",
                              "--json"], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    return json.loads(out)


def figures(report):
    rows = {r["m"]: r for r in report["rows"]}
    clocks = {(m, cap): next(c["clock_mhz"] for c in rows[m]["cells"] if c["cap_w"] == cap)
              for (m, cap) in CLOCKS}
    return clocks, {m: rows[m]["penalty_pct"] for m in PENALTIES}, rows


def loss(report):
    clocks, pens, _ = figures(report)
    e = sum(((clocks[k] - v) / v * 100) ** 2 for k, v in CLOCKS.items())
    return e + sum((pens[m] - v) ** 2 for m, v in PENALTIES.items())


def main(argv):
    costmodel = os.path.join(ROOT, "build/tools/costmodel")
    if "--costmodel" in argv:
        costmodel = argv[argv.index("--costmodel") + 1]
    text = open(HW).read()
    values = {}
    for k in KEYS:
        m = re.search(rf"^  {k}: (\S+)", text, flags=re.M)
        values[k] = float(m.group(1))
    best = loss(evaluate(costmodel, text, values))
    for rnd in range(8):
        scale = 0.5 ** rnd
        for k in KEYS:
            for sign in (-1, 1):
                while True:
                    trial = dict(values)
                    lo, hi = BOUNDS[k]
                    trial[k] = min(hi, max(lo, values[k] + sign * STEPS[k] * scale))
                    if trial[k] == values[k]:
                        break
                    v = loss(evaluate(costmodel, text, trial))
                    if not v < best - 1e-9:
                        break
                    best, values = v, trial
    report = evaluate(costmodel, text, values)
    clocks, pens, rows = figures(report)
    print("fitted: " + "  ".join(f"{k} {values[k]:.4g}" for k in KEYS) + f"  (loss {best:.3f})")
    for k, v in CLOCKS.items():
        print(f"clock M={k[0]} {k[1]} W: {clocks[k]:.0f} MHz (seed {v})")
    for m, v in PENALTIES.items():
        print(f"penalty 575->400 W at M={m}: {pens[m]:.2f}% (seed {v})")
    for m, v in {4096: 1.4, 8192: 1.7, 16384: 1.8}.items():
        print(f"clock slope at M={m}: {rows[m]['clock_slope_mhz_per_w']:.2f} MHz/W (seed {v}, "
              "not fitted)")
    if "--write" in argv:
        with open(HW, "w") as f:
            f.write(with_values(text, values))
        print(f"wrote {HW}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
