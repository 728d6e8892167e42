#!/usr/bin/python3
"""Builds the step-pricing error model that `simulate --bands` and `sweep --bands` read
(data/measured/error_model.yaml) from the per-row errors of the validation sets, and reports the
coverage of its 80% band on the rows held out of it.

    tools/error_model.py [--bin build/tools] [--out data/measured/error_model.yaml] [--coverage]

The error of one row is the log-ratio ln(measured / priced) of one step time (or of a serving
figure that a step time sets). Rows by source, and the regime each lands in:

- Vidur / measured MLP-block profiles (`costmodel validate --rows`, analytical model): the block
  of one profile line (the sum of its ops); GPU a100 → home, h100 and h200 → hbm, a40 → gddr;
  step kind by the line's token count: < 64 decode_low, 64–512 decode_high, > 512 prefill.
- ML.ENERGY v3 H100 lm-arena rows (`sim2real --mlenergy --json`, analytical): ITL p50, one decode
  step at the row's measured mean batch; hbm, decode_low below batch 64, decode_high from 64.
- sim2real runs not in any fit (`sim2real --experiments --json`, analytical): ITL mean; hbm,
  decode_low (these runs cap the batch at 128 and run well below it).

Split, declared before building: within each source the rows sorted by their id (Vidur: model,
TP, CSV line; ML.ENERGY: the row's `where`; sim2real: exp_id) alternate, even positions build
the model and odd positions check it. A regime with fewer than MIN_ROWS build rows is written as
"unmeasured". The rf cost model has no held-out validation rows, so every rf regime is
unmeasured.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIN_ROWS = 5
KINDS = ["prefill", "decode_low", "decode_high"]
CLASSES = ["home", "hbm", "gddr", "datasheet"]
GPU_CLASS = {"a100-80gb": "home", "h100-sxm": "hbm", "h200": "hbm", "a40": "gddr"}
PROFILES = [("a100", "data/vidur/profiling/compute", "home"),
            ("h100", "data/vidur/profiling/compute", "hbm"),
            ("h200", "data/measured", "hbm"),
            ("a40", "data/vidur/profiling/compute", "gddr")]
MLENERGY = ["data/energy/mlenergy_v3/models/Qwen__Qwen3-8B__lm-arena-chat.json",
            "data/energy/mlenergy_v3/models/Qwen__Qwen3-32B__lm-arena-chat.json",
            "data/energy/mlenergy_v3/models/meta-llama__Llama-3.1-70B-Instruct__lm-arena-chat.json"]
EXPERIMENTS = "data/sim2real/experiments.csv"
COMMAND = "tools/error_model.py --out data/measured/error_model.yaml"


def run(args):
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"error_model.py: {' '.join(args)} failed:\n{out.stderr}")
    return out.stdout


def kind_of_tokens(tokens):
    if tokens > 512:
        return "prefill"
    return "decode_low" if tokens < 64 else "decode_high"


def profile_rows(bin_dir):
    """(source, id, class, kind, log_ratio) per MLP-block profile line."""
    rows = []
    for gpu, profiles, cls in PROFILES:
        with tempfile.NamedTemporaryFile(suffix=".csv") as f:
            run([os.path.join(bin_dir, "costmodel"), "validate", "--profiles", profiles, "--gpu",
                 gpu, "--rows", f.name])
            blocks = {}
            with open(f.name) as csv:
                next(csv)
                for line in csv:
                    model, row, tp, tokens, _op, pred, meas, _err = line.strip().split(",")
                    key = (model, int(tp), int(row), int(tokens))
                    p, m = blocks.get(key, (0.0, 0.0))
                    blocks[key] = (p + float(pred), m + float(meas))
        for (model, tp, row, tokens), (p, m) in sorted(blocks.items()):
            if p > 0 and m > 0:
                rows.append((f"profile:{gpu}", f"{model}/tp{tp}/{row:06d}", cls,
                             kind_of_tokens(tokens), math.log(m / p)))
    return rows


def mlenergy_rows(bin_dir):
    doc = json.loads(run([os.path.join(bin_dir, "sim2real"), "--json", "--mlenergy"] + MLENERGY))
    rows = []
    for r in doc["rows"]:
        itl = r["metrics"]["itl_p50"]
        batch = r["avg_batch"]["real"]
        if not itl["sim"] or not itl["real"] or batch is None:
            continue
        kind = "decode_low" if batch < 64 else "decode_high"
        rows.append(("mlenergy", r["where"], "hbm", kind, math.log(itl["real"] / itl["sim"]),
                     {"sim": itl["sim"], "real": itl["real"]}))
    return rows


def sim2real_rows(bin_dir):
    doc = json.loads(run([os.path.join(bin_dir, "sim2real"), "--json", "--experiments",
                          EXPERIMENTS]))
    rows = []
    for r in doc["runs"]:
        if r["set"] == "fit":
            continue
        itl = r["metrics"].get("itl_mean") or {}
        if not itl.get("sim") or not itl.get("real"):
            continue
        rows.append(("sim2real", str(r["id"]), "hbm", "decode_low",
                     math.log(itl["real"] / itl["sim"]), {"sim": itl["sim"], "real": itl["real"]}))
    return rows


def split(rows):
    """Within each source, rows sorted by id alternate: even positions build, odd check."""
    build, check = [], []
    by_source = {}
    for r in rows:
        by_source.setdefault(r[0], []).append(r)
    for source in sorted(by_source):
        for i, r in enumerate(sorted(by_source[source], key=lambda x: x[1])):
            (build if i % 2 == 0 else check).append(r)
    return build, check


def quantile(xs, q):
    xs = sorted(xs)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def regimes(build):
    table = {}
    for cm in ["analytical", "rf"]:
        for cls in CLASSES:
            for kind in KINDS:
                xs = [r[4] for r in build if cm == "analytical" and r[2] == cls and r[3] == kind]
                sources = sorted({r[0] for r in build if cm == "analytical" and r[2] == cls
                                  and r[3] == kind})
                entry = {"n": len(xs), "sources": sources}
                if len(xs) >= MIN_ROWS:
                    entry.update(p10=quantile(xs, 0.1), p50=quantile(xs, 0.5),
                                 p90=quantile(xs, 0.9))
                table[(cm, cls, kind)] = entry
    return table


def coverage(table, check):
    """Share of check rows whose log-ratio lies inside their regime's [p10, p90], by source."""
    out = {}
    for r in check:
        e = table[("analytical", r[2], r[3])]
        if "p10" not in e:
            continue
        hit = e["p10"] <= r[4] <= e["p90"]
        n, k = out.get(r[0], (0, 0))
        out[r[0]] = (n + 1, k + hit)
    return out


def write_yaml(path, table, build, check):
    lines = [
        "# Step-pricing error by regime: the log-ratio ln(measured / priced) of a step time.",
        f"# Generated by `{COMMAND}`; do not edit by hand.",
        "provenance:",
        f"  command: \"{COMMAND}\"",
        "  split: \"within each source, rows sorted by id alternate: even positions build this"
        " table, odd positions check it\"",
        f"  min_rows: {MIN_ROWS}",
        "  sources:",
    ]
    for source in sorted({r[0] for r in build + check}):
        nb = sum(1 for r in build if r[0] == source)
        nc = sum(1 for r in check if r[0] == source)
        lines.append(f"    - {{name: \"{source}\", build_rows: {nb}, check_rows: {nc}}}")
    lines.append("gpu_classes:")
    for cls in CLASSES[:-1]:
        gpus = ", ".join(g for g, c in sorted(GPU_CLASS.items()) if c == cls)
        lines.append(f"  {cls}: [{gpus}]")
    lines.append("regimes:")
    for (cm, cls, kind), e in table.items():
        head = f"  - {{cost_model: {cm}, gpu_class: {cls}, step_kind: {kind}, n: {e['n']}, "
        if "p10" in e:
            lines.append(head + f"p10: {e['p10']:.4f}, p50: {e['p50']:.4f}, "
                         f"p90: {e['p90']:.4f}}}")
        else:
            lines.append(head + "status: unmeasured}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bin", default="build/tools")
    p.add_argument("--out", default="data/measured/error_model.yaml")
    p.add_argument("--coverage", action="store_true",
                   help="also print the 80%% band's coverage on the check rows")
    a = p.parse_args()
    bin_dir = os.path.join(ROOT, a.bin) if not os.path.isabs(a.bin) else a.bin
    rows = [r[:5] for r in profile_rows(bin_dir) + mlenergy_rows(bin_dir) + sim2real_rows(bin_dir)]
    build, check = split(rows)
    table = regimes(build)
    write_yaml(os.path.join(ROOT, a.out) if not os.path.isabs(a.out) else a.out, table, build,
               check)
    for (cm, cls, kind), e in table.items():
        if cm == "analytical":
            band = (f"p10 {math.exp(e['p10']):.3f} p50 {math.exp(e['p50']):.3f} "
                    f"p90 {math.exp(e['p90']):.3f}" if "p10" in e else "unmeasured")
            print(f"{cm:10} {cls:9} {kind:11} n {e['n']:5}  measured/priced {band}")
    if a.coverage:
        total_n = total_k = 0
        for source, (n, k) in sorted(coverage(table, check).items()):
            print(f"coverage of the 80% band, {source}: {k} of {n} check rows ({100 * k / n:.1f}%)")
            total_n += n
            total_k += k
        if total_n:
            print(f"coverage, all check rows: {total_k} of {total_n} ({100 * total_k / total_n:.1f}%)")


if __name__ == "__main__":
    main()
