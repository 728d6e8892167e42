#!/usr/bin/python3
"""One pool against length-split pools on the Azure conversation trace: the cheapest fleet of
Llama-3.1-8B replicas that meets TTFT p99 <= 2 s and TBT p99 <= 100 ms at a given rate, and
where a plain M/G/c estimate of the same question lands.

    PYTHONPATH=build/python studies/length_split.py [--qps 48] [--out DIR]

The one pool is h100-sxm replicas behind least_outstanding. The split is two pools
(router length_split, configs/fleet_length_split.yaml): prompts of at most T tokens to a short
pool of h100-sxm or l40s replicas, the rest to an h100-sxm pool; T, the pool sizes and the short
pool's GPU are searched together (a grid, every point simulated). Dollars per hour come from
configs/prices/on-demand.yaml. For each pick it reruns the fleet and reports the TTFT p99 of the
short requests (prompt <= T) beside the whole trace's.

The M/G/c estimate treats each replica as one server of rate mu (requests per second at
saturation, from one simulated replica fed the whole trace at once) and each pool as an M/G/c
queue with the Allen-Cunneen approximation; its p99 wait plus the unloaded TTFT must stay under
the bound. It knows nothing of batching, chunked prefill or the split's effect on mu.
Writes length_split.json and length_split.png (matplotlib) into DIR (default out/length_split).
"""
import argparse
import json
import math
import os
import pathlib
import sys

import numpy as np

import servesim

ROOT = pathlib.Path(__file__).resolve().parents[1]
TRACE = str(ROOT / "data" / "azure" / "AzureLLMInferenceTrace_conv.csv")
SLO = {"ttft_p99_ms": 2000, "tbt_p99_ms": 100}
THRESHOLDS = [512, 1024, 2048]
SIZES = [1, 2, 3, 4, 5]


def prices():
    text = (ROOT / "configs" / "prices" / "on-demand.yaml").read_text()
    out, inside = {}, False
    for line in text.splitlines():
        if line.startswith("usd_per_gpu_hour:"):
            inside = True
        elif inside and line.startswith("  ") and ":" in line:
            k, v = line.strip().split(":", 1)
            out[k.strip()] = float(v.split("#")[0])
        elif inside and line and not line.startswith(" "):
            inside = False
    return out


def config(qps, groups, router):
    return {
        "name": "length_split_study", "seed": 7, "model": "meta-llama/Llama-3.1-8B",
        "replicas": [{"gpu": g, "tp": 1, "count": n} for g, n in groups],
        "scheduler": {"kind": "sarathi", "chunk_size": 1024, "max_num_seqs": 128,
                      "max_model_len": 8192},
        "router": router, "cost_model": {"kind": "analytical"},
        "workload": {"trace": {"format": "azure", "file": TRACE, "qps": qps},
                     "max_tokens": 8192},
        "slo": {"ttft_ms": SLO["ttft_p99_ms"], "tbt_ms": SLO["tbt_p99_ms"]},
    }


def meets(row):
    return all(row[f"{k}_mean"] is not None and row[f"{k}_mean"] <= v for k, v in SLO.items())


def short_ttft_p99(result, threshold):
    r = result.requests
    short = r[(r["prompt_tokens"] <= threshold) & (r["rejected"] == 0)]
    return float(np.percentile(short["ttft_ns"], 99) / 1e6) if len(short) else math.nan


def erlang_c(c, a):
    """P(wait) of M/M/c with offered load a = lambda/mu (a < c)."""
    term, total = 1.0, 1.0
    for k in range(1, c):
        term *= a / k
        total += term
    last = term * a / c / (1 - a / c)
    return last / (total + last)


def mgc_servers(lam, mu, cv2, base_ttft_ms, bound_ms):
    """Fewest servers whose Allen-Cunneen p99 wait + the unloaded TTFT meets the bound."""
    c = max(1, math.floor(lam / mu) + 1)
    while c < 1000:
        pw = erlang_c(c, lam / mu)
        rate = 2 * (c * mu - lam) / (1 + cv2)  # tail decay of the wait (per second)
        wait99 = math.log(pw / 0.01) / rate * 1e3 if pw > 0.01 else 0.0
        if wait99 + base_ttft_ms <= bound_ms:
            return c
        c += 1
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--qps", type=float, default=48)
    ap.add_argument("--out", default=str(ROOT / "out" / "length_split"))
    a = ap.parse_args()
    usd = prices()
    lo = {"kind": "least_outstanding"}

    one = servesim.sweep(config(a.qps, [("h100-sxm", 2)], lo),
                         vary={"replicas.0.count": list(range(2, 11))})
    ok = [m for m in one.means if meets(m)]
    if not ok:
        sys.exit("no one-pool fleet of up to 10 replicas meets the SLO: lower --qps")
    n1 = int(min(m["replicas.0.count"] for m in ok))
    one_pick = {"fleet": f"{n1} x h100-sxm", "replicas": n1, "usd_per_h": n1 * usd["h100-sxm"]}

    split_rows = []
    for short_gpu in ["h100-sxm", "l40s"]:
        router = {"kind": "length_split",
                  "pools": [{"name": "short", "groups": [0], "max_prompt_tokens": 1024},
                            {"name": "long", "groups": [1]}]}
        s = servesim.sweep(config(a.qps, [(short_gpu, 1), ("h100-sxm", 1)], router),
                           vary={"router.pools.0.max_prompt_tokens": THRESHOLDS,
                                 "replicas.0.count": SIZES, "replicas.1.count": SIZES})
        for m in s.means:
            ns, nl = int(m["replicas.0.count"]), int(m["replicas.1.count"])
            split_rows.append({"short_gpu": short_gpu, "threshold": int(m["router.pools.0.max_prompt_tokens"]),
                               "short": ns, "long": nl, "meets": meets(m),
                               "usd_per_h": ns * usd[short_gpu] + nl * usd["h100-sxm"],
                               "ttft_p99_ms": m["ttft_p99_ms_mean"], "tbt_p99_ms": m["tbt_p99_ms_mean"]})
    feasible = [r for r in split_rows if r["meets"]]
    if not feasible:
        sys.exit("no split fleet of the grid meets the SLO")
    best = min(feasible, key=lambda r: (r["usd_per_h"], r["ttft_p99_ms"]))
    t = best["threshold"]

    # The picks rerun: TTFT p99 of the short requests (prompt <= T), the whole trace's beside it.
    r1 = servesim.simulate(config(a.qps, [("h100-sxm", n1)], lo))
    r2 = servesim.simulate(config(a.qps, [(best["short_gpu"], best["short"]), ("h100-sxm", best["long"])],
                                  {"kind": "length_split",
                                   "pools": [{"name": "short", "groups": [0], "max_prompt_tokens": t},
                                             {"name": "long", "groups": [1]}]}))
    for pick, res in ((one_pick, r1), (best, r2)):
        pick["short_ttft_p99_ms"] = short_ttft_p99(res, t)
        pick["all_ttft_p99_ms"] = res.summary["latency_ms"]["ttft"]["p99"]
        pick["attainment"] = res.summary["slo"]["attainment"]

    # Plain M/G/c: one replica saturated by the whole trace at once gives mu; CV^2 of service
    # time from the output lengths (decode-bound requests); unloaded TTFT from a light run.
    sat = servesim.simulate(config(1000.0, [("h100-sxm", 1)], lo))
    mu = sat.summary["throughput"]["requests_per_s"]
    light = servesim.simulate(config(0.5, [("h100-sxm", 1)], lo),
                              overrides={"workload.num_requests": 2000})
    base = light.summary["latency_ms"]["ttft"]["mean"]
    out_tok = r1.requests["output_tokens"].astype(float)
    cv2 = float(out_tok.var() / out_tok.mean() ** 2)
    mgc = mgc_servers(a.qps, mu, cv2, base, SLO["ttft_p99_ms"])

    doc = {"qps": a.qps, "slo": SLO, "one_pool": one_pick, "split": best,
           "mgc": {"mu_req_per_s": mu, "cv2": cv2, "unloaded_ttft_ms": base, "servers": mgc},
           "split_grid": split_rows}
    os.makedirs(a.out, exist_ok=True)
    pathlib.Path(a.out, "length_split.json").write_text(json.dumps(doc, indent=2) + "\n")

    print(f"Azure conversation trace at {a.qps:g} req/s, Llama-3.1-8B, SLO TTFT p99 <= 2 s, "
          "TBT p99 <= 100 ms")
    print(f"{'fleet':<34} {'$/h':>7} {'TTFT p99':>9} {'short TTFT p99':>15} {'attain':>7}")
    print(f"{'one pool: ' + one_pick['fleet']:<34} {one_pick['usd_per_h']:7.2f} "
          f"{one_pick['all_ttft_p99_ms']:9.0f} {one_pick['short_ttft_p99_ms']:15.0f} "
          f"{100 * one_pick['attainment']:6.1f}%")
    label = f"split at {t}: {best['short']} x {best['short_gpu']} + {best['long']} x h100-sxm"
    print(f"{label:<34} {best['usd_per_h']:7.2f} {best['all_ttft_p99_ms']:9.0f} "
          f"{best['short_ttft_p99_ms']:15.0f} {100 * best['attainment']:6.1f}%")
    print(f"plain M/G/c (mu {mu:.2f} req/s per replica, CV^2 {cv2:.2f}): {mgc} replicas "
          f"against the simulator's {n1}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("note: no matplotlib, no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(7, 4))
    for gpu, marker in (("h100-sxm", "o"), ("l40s", "s")):
        for th, color in zip(THRESHOLDS, ("tab:blue", "tab:orange", "tab:green")):
            pts = [r for r in split_rows if r["short_gpu"] == gpu and r["threshold"] == th]
            ax.scatter([r["usd_per_h"] for r in pts], [r["ttft_p99_ms"] for r in pts], s=14,
                       marker=marker, color=color, alpha=0.6, label=f"split {th}, short on {gpu}")
    ax.axhline(SLO["ttft_p99_ms"], color="grey", ls="--", lw=1)
    ax.scatter([one_pick["usd_per_h"]], [one_pick["all_ttft_p99_ms"]], color="black", marker="*",
               s=120, label=f"one pool ({n1} x h100-sxm)")
    ax.set_xlabel("fleet $ per hour")
    ax.set_ylabel("TTFT p99 (ms)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(pathlib.Path(a.out, "length_split.png"), dpi=110)


if __name__ == "__main__":
    main()
