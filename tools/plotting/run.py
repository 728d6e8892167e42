"""plot.py run: latency CDFs and per-replica timelines of one simulate output folder."""
import os

from plotting.common import fail, finish, in_folder, load, pyplot


def cdf(ax, values, label, **kw):
    """A step CDF of `values` on `ax` (x sorted, y = rank / n)."""
    xs = sorted(values)
    n = len(xs)
    if n == 0:
        return
    ax.step(xs, [(i + 1) / n for i in range(n)], where="post", label=f"{label} (n={n})", **kw)


def h5_table(path, dataset, what):
    if not os.path.isfile(path):
        fail(f"{path}: not found (expected {what})")
    try:
        import h5py
    except ImportError:
        fail("h5py is not installed (expected Debian's python3-h5py)")
    try:
        with h5py.File(path, "r") as f:
            return f[dataset][:]
    except (OSError, KeyError) as e:
        fail(f"{path}: cannot read dataset '{dataset}' ({e})")


def band_whiskers(ax, bands, metric):
    """`simulate --bands`: each percentile's 80% band as a horizontal whisker at its level."""
    stats = (bands.get("latency_ms") or {}).get(metric) or {}
    first = True
    for q, level in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        b = stats.get(q)
        if not b:
            continue
        ax.errorbar([b["value"]], [level], xerr=[[b["value"] - b["low"]], [b["high"] - b["value"]]],
                    fmt="o", color="tab:orange", capsize=3, markersize=3,
                    label="80% band (p50, p90, p99)" if first else None)
        first = False


def plot_run(directory):
    """Latency CDFs and per-replica timelines of one simulate run."""
    summary = load(os.path.join(directory, "summary.json"), "a simulate output folder's summary.json")
    if "latency_ms" not in summary or "replicas" not in summary:
        fail(f"{os.path.join(directory, 'summary.json')}: no 'latency_ms' and 'replicas' (expected "
             "a simulate summary.json)")
    import numpy as np
    plt = pyplot()
    req = h5_table(os.path.join(directory, "requests.h5"), "requests",
                   "requests.h5 (output.requests: true)")
    overhead_ms = summary.get("request_overhead_ms") or 0.0
    served = req[req["rejected"] == 0]
    slo = summary.get("slo") or {}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    panels = [
        ("TTFT", served["ttft_ns"][served["ttft_ns"] >= 0] / 1e6 + overhead_ms, "ttft_ms"),
        ("E2E", served["e2e_ns"][served["e2e_ns"] >= 0] / 1e6 + overhead_ms, "e2e_ms"),
    ]
    bands = summary.get("bands") or {}
    for ax, (name, values, slo_key) in zip(axes, panels):
        cdf(ax, values.tolist(), name)
        band_whiskers(ax, bands, name.lower())
        if slo_key in slo:
            ax.axvline(slo[slo_key], color="tab:red", linestyle=":", label=f"SLO {slo[slo_key]:g} ms")
        ax.set_xlabel(f"{name} (ms{', incl. request overhead' if overhead_ms else ''})")
        ax.set_ylabel("fraction of finished requests")
    ax = axes[2]
    tpot = served["tpot_ns"][served["tpot_ns"] >= 0] / 1e6
    tbt_max = served["tbt_max_ns"][served["tbt_max_ns"] >= 0] / 1e6
    cdf(ax, tpot.tolist(), "TPOT per request")
    cdf(ax, tbt_max.tolist(), "largest TBT gap per request")
    tbt = summary["latency_ms"]["tbt"]
    for q, style in (("p50", "--"), ("p99", "-.")):
        if tbt.get(q) is not None:
            ax.axvline(tbt[q], color="grey", linestyle=style, label=f"TBT {q} over all gaps {tbt[q]:.1f} ms")
    if "tbt_ms" in slo:
        ax.axvline(slo["tbt_ms"], color="tab:red", linestyle=":", label=f"SLO {slo['tbt_ms']:g} ms")
    ax.set_xlabel("time between tokens (ms)")
    ax.set_ylabel("fraction of requests")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
        ax.set_ylim(0, 1.02)
    fig.suptitle(f"{summary.get('name', '')}: latency CDFs ({len(served)} finished, "
                 f"{int(summary['requests']['rejected'])} rejected)", fontsize=11)
    finish(plt, fig, in_folder(directory, "latency"))

    steps_path = os.path.join(directory, "steps.h5")
    if not os.path.isfile(steps_path):
        return  # output.steps: false — no timeline to draw
    steps = h5_table(steps_path, "steps", "steps.h5")
    replicas = summary["replicas"]
    shown = replicas[:8]
    fig, axes = plt.subplots(len(shown), 3, figsize=(15, 2.6 * len(shown) + 0.6), squeeze=False)
    t0 = float(steps["start_ns"].min()) if len(steps) else 0.0
    for row, rep in zip(axes, shown):
        mine = steps[steps["replica"] == rep["id"]]
        if len(mine) == 0:
            continue
        t = (mine["start_ns"] - t0) / 1e9
        bins = min(400, max(1, len(mine) // 8))
        edges = np.linspace(t.min(), t.max() + 1e-9, bins + 1)
        idx = np.clip(np.digitize(t, edges) - 1, 0, bins - 1)
        centre = (edges[:-1] + edges[1:]) / 2

        def binned(values, how):
            out = np.full(bins, np.nan)
            for b in np.unique(idx):
                sel = values[idx == b]
                out[b] = sel.max() if how == "max" else sel.mean()
            return out

        tokens = mine["prefill_tokens"] + mine["num_decodes"]
        size = mine["num_prefills"] + mine["num_decodes"]
        row[0].plot(centre, binned(tokens.astype(float), "mean"), label="tokens per step")
        row[0].plot(centre, binned(size.astype(float), "mean"), label="requests per step")
        row[0].set_ylabel("batch (mean per bin)")
        row[1].set_title(f"{len(mine)} steps in {bins} time bins", fontsize=8, loc="right")
        row[1].plot(centre, binned(mine["running"].astype(float), "mean"), label="running")
        row[1].plot(centre, binned(mine["waiting"].astype(float), "mean"), label="waiting")
        row[1].set_ylabel("requests")
        kv = 100.0 * mine["kv_blocks_used"] / max(1, rep["kv_blocks"])
        row[2].plot(centre, binned(kv.astype(float), "max"), color="tab:purple",
                    label="KV blocks in use (max per bin)")
        row[2].set_ylabel("KV in use (% of blocks)")
        row[2].set_ylim(0, 105)
        for ax in row:
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7, loc="upper right")
        row[0].set_title(f"replica {rep['id']}: {rep['gpu']} tp{rep['tp']}, {rep['scheduler']}, "
                         f"busy {100 * rep['busy_fraction']:.0f}%", fontsize=9, loc="left")
    for ax in axes[-1]:
        ax.set_xlabel("simulated time (s)")
    note = "" if len(replicas) <= len(shown) else f" (first {len(shown)} of {len(replicas)} replicas)"
    fig.suptitle(f"{summary.get('name', '')}: per-replica timeline{note}", fontsize=11)
    finish(plt, fig, in_folder(directory, "timeline"))
