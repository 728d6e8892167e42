#!/usr/bin/python3
"""An autoscaled fleet against static fleets over one (compressed) day: SLO attainment, dollars.

    studies/autoscaling_day.py [--out DIR] [--day-s 3600] [--simulate BIN]

Every run is configs/h100_autoscaling.yaml (H100s serving Llama-3.1-8B, a diurnal load from
3 req/s at 02:00 to 30 req/s at 14:00, ShareGPT lengths, TTFT <= 2 s and TBT <= 100 ms) with
`day_s` (and the run's duration) set to --day-s. Static fleets are the same section with
min_replicas = max_replicas = initial_replicas = N, so every run reports the same
`autoscaling` series and dollars (configs/prices/on-demand.yaml). The autoscaled runs: the
example's policy (requests in flight per replica, target 32, 1 to 8 replicas) with its derived
provisioning delay (weights / 2 GB/s + 30 s), and with no delay. Compressing the day leaves the
provisioning delay and the stabilization window as they are, so they weigh more than in a real
day: --day-s 86400 runs the real day.

Writes autoscaling_day.json (one row per run), autoscaling_day.md (the table) and
autoscaling_day.png (replicas and utilisation over time with the arrival rate, per run) into
DIR (default out/autoscaling_day).
"""
import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "h100_autoscaling.yaml"
STATIC = [4, 5, 6, 8]


def run(simulate, out, name, day_s, sets):
    args = [simulate, str(CONFIG), "--quiet", "--out", str(out / name),
            "--set", f"workload.arrival.day_s={day_s}", "--set", f"workload.duration_s={day_s}",
            "--set", f"name={name}"]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True)
    return json.loads((out / name / "summary.json").read_text())


def row(name, s):
    a = s["autoscaling"]
    t = a["totals"]
    lat = s["latency_ms"]
    return {
        "run": name,
        "replicas_mean": t["mean_replicas"],
        "replicas_peak": t["peak_replicas"],
        "provisioning_delay_s": a["provisioning_delay_s"],
        "slo_attainment_pct": 100 * s["slo"]["attainment"],
        "ttft_p99_ms": lat["ttft"]["p99"],
        "tbt_p99_ms": lat["tbt"]["p99"],
        "replica_hours": t["replica_hours"],
        "usd": t["usd"],
        "usd_per_million_output_tokens": t["usd_per_million_output_tokens"],
        "series": a["series"],
    }


def table(rows):
    head = ("| run | mean replicas | peak | delay s | SLO attainment | TTFT p99 ms | TBT p99 ms "
            "| replica-h | $ | $/1M tok |")
    lines = [head, "|" + " --- |" * 10]
    for r in rows:
        lines.append(
            f"| {r['run']} | {r['replicas_mean']:.2f} | {r['replicas_peak']} | "
            f"{r['provisioning_delay_s']:.1f} | {r['slo_attainment_pct']:.1f}% | "
            f"{r['ttft_p99_ms']:.0f} | {r['tbt_p99_ms']:.1f} | {r['replica_hours']:.2f} | "
            f"{r['usd']:.2f} | {r['usd_per_million_output_tokens']:.3f} |")
    return "\n".join(lines) + "\n"


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 2.3 * len(rows)), sharex=True)
    for ax, r in zip(axes, rows):
        s = r["series"]
        hours = [t / 3600 for t in s["time_s"]]
        billed = [a + p + d for a, p, d in zip(s["active"], s["provisioning"], s["draining"])]
        ax.step(hours, billed, where="post", label="billed replicas", color="tab:blue")
        ax.step(hours, s["active"], where="post", label="active", color="tab:green")
        ax.set_ylabel("replicas")
        ax.set_title(f"{r['run']}: SLO {r['slo_attainment_pct']:.1f}%, ${r['usd']:.2f}",
                     fontsize=9)
        right = ax.twinx()
        right.plot(hours, s["arrival_qps"], color="tab:gray", lw=0.8, label="arrivals (req/s)")
        right.plot(hours, [u * 30 for u in s["utilisation"]], color="tab:orange", lw=0.8,
                   label="utilisation × 30")
        right.set_ylabel("req/s")
        if ax is axes[0]:
            lines = ax.get_legend_handles_labels()
            more = right.get_legend_handles_labels()
            ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=7, loc="upper left")
    axes[-1].set_xlabel("simulated hours")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="out/autoscaling_day")
    p.add_argument("--day-s", type=float, default=3600)
    p.add_argument("--simulate", default=str(ROOT / "build" / "tools" / "simulate"))
    p.add_argument("--no-plot", action="store_true")
    o = p.parse_args()
    out = pathlib.Path(o.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = [row("autoscaled", run(o.simulate, out, "autoscaled", o.day_s, [])),
            row("autoscaled, no delay",
                run(o.simulate, out, "autoscaled_no_delay", o.day_s,
                    ["autoscaling.provisioning_delay_s=0"]))]
    for n in STATIC:
        sets = [f"autoscaling.min_replicas={n}", f"autoscaling.max_replicas={n}",
                f"autoscaling.initial_replicas={n}"]
        rows.append(row(f"static {n}", run(o.simulate, out, f"static_{n}", o.day_s, sets)))
    (out / "autoscaling_day.json").write_text(json.dumps(rows, indent=1) + "\n")
    text = table(rows)
    (out / "autoscaling_day.md").write_text(text)
    sys.stdout.write(text)
    if not o.no_plot:
        plot(rows, out / "autoscaling_day.png")
        print(f"plot: {out / 'autoscaling_day.png'}")


if __name__ == "__main__":
    main()
