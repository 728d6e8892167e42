#!/usr/bin/python3
"""The project's one plot script (matplotlib and h5py: Debian's python3-matplotlib, python3-h5py).

    plot.py run DIR            a simulate output folder -> DIR/latency.png, DIR/timeline.png
    plot.py sweep DIR          points.json [+ selection.json] -> DIR/frontier.png, DIR/metrics.png
    plot.py capacity DIR       capacity.json -> DIR/capacity.png
    plot.py plan DIR           plan.json -> DIR/plan.png (objective vs the first SLO's metric)
    plot.py atlas ROWS OUT     costmodel validate --rows CSV -> signed error per op, TP x tokens
    plot.py ablate JSON OUT    costmodel ablate --json -> the additive MAPE ladder
    plot.py transfer JSON OUT  costmodel transfer --json -> MAPE per predictor and GPU
    plot.py sim2real JSON OUT  sim2real --json -> simulated vs measured per run and metric

--format svg draws SVG instead of PNG (for OUT, the extension decides). simulate --plot, sweep,
costmodel --plot and sim2real --plot run it; run it by hand to redraw. Exit 1 with a message naming
the file when an input is missing or is not what the tool writes; 2 for a usage error.
"""
import argparse
import csv
import json
import math
import os
import sys

FORMAT = "png"


def fail(message):
    print(f"plot.py: {message}", file=sys.stderr)
    sys.exit(1)


def load(path, what):
    if not os.path.isfile(path):
        fail(f"{path}: not found (expected {what})")
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: cannot read it as JSON ({e})")


def load_tool_json(path, what, key):
    """A tool's JSON that must hold `key`, or an error naming the file and the tool."""
    doc = load(path, what)
    if key not in doc:
        fail(f"{path}: no '{key}' (expected {what})")
    return doc


def pyplot():
    try:
        import matplotlib
    except ImportError:
        fail("matplotlib is not installed (expected Debian's python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def label_of(values):
    return ", ".join(f"{k.rsplit('.', 1)[-1]}={v}" for k, v in values.items())


def geometric(xs):
    xs = sorted(x for x in xs if x > 0)
    return len(xs) > 2 and xs[-1] / xs[0] >= 8


def blocks(point):
    """(name, block) of a point's main and oracle results."""
    out = [("", point)]
    if "oracle" in point:
        out.append(("oracle", point["oracle"]))
    return out


def plot_sweep(directory):
    points_doc = load(os.path.join(directory, "points.json"), "a sweep's points.json")
    if "points" not in points_doc or "axes" not in points_doc:
        fail(f"{os.path.join(directory, 'points.json')}: no 'points' and 'axes' (expected a "
             "sweep's points.json)")
    sel_path = os.path.join(directory, "selection.json")
    selection = load(sel_path, "selection.json") if os.path.isfile(sel_path) else None
    plt = pyplot()
    points = points_doc["points"]
    throughput = selection["throughput"] if selection else "output_tok_s"
    bounded = [b["metric"] for b in selection["settings"][0]["bounds"]] if selection else []
    x_metric = next((m for m in bounded if m.endswith("_ms")), "tbt_p99_ms")

    # Throughput against the bounded latency: the frontier a selection walks along. One line per
    # value of the other varied keys, through the first key's values (labelled); the oracle dashed.
    axes = points_doc["axes"]
    first = axes[0]["key"] if axes else None
    groups = {}
    for p in points:
        rest = {k: v for k, v in p["values"].items() if k != first}
        groups.setdefault(label_of(rest), []).append(p)
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for name, style in (("", "o-"), ("oracle", "s--")):
        for glabel, members in groups.items():
            rows = []
            for p in members:
                block = dict(blocks(p)).get(name)
                if block is None:
                    continue
                x, y = block["mean"].get(x_metric), block["mean"].get(throughput)
                if x is None or y is None:
                    continue
                rows.append((x, y, block["ci95"].get(x_metric) or 0,
                             block["ci95"].get(throughput) or 0,
                             p["values"].get(first, "") if first else ""))
            if not rows:
                continue
            tag = " ".join(t for t in (glabel, name or "sweep") if t)
            line = ax.errorbar([r[0] for r in rows], [r[1] for r in rows],
                               xerr=[r[2] for r in rows], yerr=[r[3] for r in rows],
                               fmt=style if len(groups) <= 8 else "o", capsize=3, label=tag,
                               markersize=4)
            if name == "":
                for r in rows:
                    ax.annotate(str(r[4]), (r[0], r[1]), textcoords="offset points",
                                xytext=(4, 4), fontsize=7)
    if selection:
        labelled = set()

        def once(text):
            if text in labelled:
                return None
            labelled.add(text)
            return text

        for s in selection["settings"]:
            for b in s["bounds"]:
                if b["metric"] == x_metric:
                    ax.axvline(b["bound"], color="grey", linestyle=":", linewidth=1)
            pick = s["pick"]
            if pick:
                pj = points[pick["point"]]
                ax.plot(pj["mean"][x_metric], pj["mean"][throughput], marker="*", markersize=16,
                        color="tab:red", linestyle="none", label=once("pick"))
            oracle = (s.get("oracle") or {}).get("pick")
            if oracle:
                oj = points[oracle["point"]]["oracle"]
                ax.plot(oj["mean"][x_metric], oj["mean"][throughput], marker="D", markersize=9,
                        markerfacecolor="none", color="tab:green", linestyle="none",
                        label=once("oracle pick"))
    ax.set_xlabel(x_metric)
    ax.set_ylabel(throughput)
    ax.set_title(f"{points_doc.get('name', '')}: {throughput} vs {x_metric}"
                 + (f"; labels: {first.rsplit('.', 1)[-1]}" if first else "")
                 + ("; dotted: SLOs" if selection else ""), fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, f"frontier.{FORMAT}"), dpi=110)
    plt.close(fig)

    # Metric against the first varied key, one line per value of the others, 95% CI bands.
    metrics = [throughput, "ttft_p99_ms", "tbt_p99_ms", "e2e_p99_ms"]
    # SLO attainment, when the runs have an SLO (the config's `slo:`).
    if any(b["mean"].get("attainment") is not None for p in points for _, b in blocks(p)):
        metrics.insert(0, "attainment")
    metrics += [m for m in bounded if m not in metrics]
    # Legend rows below the panels: one line per group (and its oracle), 3 per row when short.
    key0 = axes[0]["key"] if axes else None
    labels_all = sorted({label_of({k: v for k, v in p["values"].items() if k != key0})
                         for p in points})[:10]
    one_column = bool(labels_all) and max(map(len, labels_all)) > 60
    legend_rows = len(labels_all) if one_column else (len(labels_all) + 2) // 3
    if any(name == "oracle" for p in points for name, _ in blocks(p)):
        legend_rows *= 2
    legend_in = 0.17 * legend_rows + 0.2
    fig, grid = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 4 + legend_in),
                             squeeze=False)
    if axes:
        key = axes[0]["key"]
        xs_all = [p["values"][key] for p in points]
        is_num = numeric(xs_all)
        groups = {}
        for p in points:
            rest = {k: v for k, v in p["values"].items() if k != key}
            groups.setdefault(label_of(rest), []).append(p)
        for ax, metric in zip(grid[0], metrics):
            for gi, (glabel, members) in enumerate(list(groups.items())[:10]):
                for name, style in (("", "-"), ("oracle", "--")):
                    rows = []
                    for j, p in enumerate(members):
                        block = dict(blocks(p)).get(name)
                        if block is None or block["mean"].get(metric) is None:
                            continue
                        x = p["values"][key] if is_num else j
                        rows.append((x, block["mean"][metric], block["ci95"].get(metric)))
                    if not rows:
                        continue
                    rows.sort()
                    xs = [r[0] for r in rows]
                    ys = [r[1] for r in rows]
                    tag = " ".join(t for t in (glabel, name) if t) or None
                    line, = ax.plot(xs, ys, style, marker="o", markersize=3, label=tag)
                    if all(r[2] is not None for r in rows):
                        ax.fill_between(xs, [y - r[2] for y, r in zip(ys, rows)],
                                        [y + r[2] for y, r in zip(ys, rows)],
                                        color=line.get_color(), alpha=0.2)
            if is_num and geometric(xs_all):
                ax.set_xscale("log", base=2)
            if not is_num:
                ax.set_xticks(range(len(groups[next(iter(groups))])))
                ax.set_xticklabels([str(p["values"][key]) for p in groups[next(iter(groups))]],
                                   rotation=30, fontsize=7)
            ax.set_xlabel(key)
            ax.set_title(metric, fontsize=10)
            ax.grid(True, alpha=0.3)
    # One legend for every panel, below them: the labels can be long (a varied section).
    handles, labels = grid[0][0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="lower center", ncol=1 if one_column else 3, fontsize=7,
                   frameon=False)
        fig.tight_layout(rect=(0, legend_in / (4 + legend_in), 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(os.path.join(directory, f"metrics.{FORMAT}"), dpi=110)
    plt.close(fig)


def plot_capacity(directory):
    doc = load_tool_json(os.path.join(directory, "capacity.json"),
                         "a sweep --max-rate capacity.json", "points")
    plt = pyplot()
    points = doc["points"]
    labels = [label_of(p.get("values", {})) or "config" for p in points]
    rates = [p["max_rate"] if p["max_rate"] is not None else 0 for p in points]
    fig, ax = plt.subplots(figsize=(max(5, 0.8 * len(points) + 2), 4.5))
    ax.bar(range(len(points)), rates, color="tab:blue")
    for i, p in enumerate(points):
        if p["max_rate"] is None:
            ax.annotate("none", (i, 0), ha="center", va="bottom", fontsize=8)
        elif p["outcome"] != "bracketed":
            ax.annotate("≥", (i, rates[i]), ha="center", va="bottom", fontsize=9)
    ax.set_xticks(range(len(points)))
    ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel(f"highest {doc.get('rate_key', 'rate')}")
    ax.set_title(f"{doc.get('name', '')}: capacity meeting {', '.join(doc.get('slos', []))}",
                 fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, f"capacity.{FORMAT}"), dpi=110)
    plt.close(fig)


def plot_plan(directory):
    doc = load_tool_json(os.path.join(directory, "plan.json"), "a plan plan.json", "candidates")
    plt = pyplot()
    slo = doc["slos"][0]
    metric = slo.replace("<=", "=").replace(">=", "=").split("=")[0]
    bound = float(slo.split("=")[-1])
    objective = doc["objective"]
    unit = {"cost": "USD per hour", "gpus": "GPUs", "power": "provisioned power (W)"}[objective]
    n = len(doc["candidates"])
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, max(4.8, 0.2 * n + 1.5)),
                                 gridspec_kw={"width_ratios": [3, 2]})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    # Few candidates: a colour each; many (settings varied too): a colour per GPU and TP.
    key = (lambda c: c["label"]) if n <= 10 else (lambda c: f"{c['gpu']} TP{c['tp']}")
    keys = list(dict.fromkeys(key(c) for c in doc["candidates"]))
    if len(keys) > len(colors):
        colors = [plt.get_cmap("tab20")(i % 20) for i in range(len(keys))]
    labelled = set()
    for c in doc["candidates"]:
        pts = [p for p in c["points"] if p["objective"] is not None
               and p["metrics"].get(metric) is not None]
        if not pts:
            continue
        xs = [p["objective"] for p in pts]
        ys = [p["metrics"][metric] for p in pts]
        color = colors[keys.index(key(c)) % len(colors)]
        ax.plot(xs, ys, "-", color=color, alpha=0.5, linewidth=1)
        ax.scatter([x for x, p in zip(xs, pts) if p["meets"]],
                   [y for y, p in zip(ys, pts) if p["meets"]], color=color, marker="o", s=24,
                   label=None if key(c) in labelled else key(c))
        labelled.add(key(c))
        ax.scatter([x for x, p in zip(xs, pts) if not p["meets"]],
                   [y for y, p in zip(ys, pts) if not p["meets"]], color=color, marker="x", s=24)
    front = doc.get("frontier", [])
    if front:
        ax.step([p["objective"] for p in front], [p["metrics"][metric] for p in front],
                where="post", color="black", linewidth=1, alpha=0.6, label="frontier")
    ax.axhline(bound, color="tab:red", linestyle="--", linewidth=1, label=slo)
    pick = doc.get("pick")
    if pick:
        ax.scatter([pick["objective"]], [pick["metrics"][metric]], marker="*", s=220,
                   facecolor="gold", edgecolor="black", zorder=5,
                   label=f"pick: {pick['replicas']} x {pick['label']}")
    ax.set_yscale("log")
    ax.set_xlabel(unit)
    ax.set_ylabel(metric)
    ax.set_title("every fleet simulated (o meets every SLO, x misses)", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    labels, values, hatch = [], [], []
    for c in doc["candidates"]:
        least = next((p for p in c["points"] if p["meets"]), None)
        labels.append(c["label"])
        values.append(least["objective"] if least and least["objective"] is not None else 0)
        hatch.append(least is None)
    bars = bx.barh(range(len(labels)), values, color="tab:blue")
    for b, none, label in zip(bars, hatch, labels):
        if none:
            bx.annotate("none meets", (0, b.get_y() + b.get_height() / 2), va="center",
                        fontsize=6)
        if pick and label == pick["label"]:
            b.set_color("gold")
    bx.set_yticks(range(len(labels)))
    bx.set_yticklabels(labels, fontsize=6 if n > 20 else 8)
    bx.invert_yaxis()
    bx.set_xlabel(unit)
    bx.grid(True, axis="x", alpha=0.3)
    bx.set_title("each candidate's least fleet that meets", fontsize=10)
    fig.suptitle(f"{doc.get('name', '')}: least {objective} meeting {', '.join(doc['slos'])}",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, f"plan.{FORMAT}"), dpi=110)
    plt.close(fig)


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
    for ax, (name, values, slo_key) in zip(axes, panels):
        cdf(ax, values.tolist(), name)
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
    fig.tight_layout()
    fig.savefig(os.path.join(directory, f"latency.{FORMAT}"), dpi=110)
    plt.close(fig)

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
    fig.tight_layout()
    fig.savefig(os.path.join(directory, f"timeline.{FORMAT}"), dpi=110)
    plt.close(fig)


BLOCK_OPS = ["attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj", "input_layernorm",
             "post_attention_layernorm", "attn_rope", "mlp_act", "add", "emb"]


def plot_atlas(rows_path, out):
    """costmodel validate --rows: mean signed error per (TP, token count) for each op."""
    if not os.path.isfile(rows_path):
        fail(f"{rows_path}: not found (expected costmodel validate --rows CSV)")
    with open(rows_path) as f:
        reader = csv.DictReader(f)
        need = {"tp", "num_tokens", "op", "predicted_ms", "measured_ms"}
        if not need <= set(reader.fieldnames or []):
            fail(f"{rows_path}: expected the columns {', '.join(sorted(need))} "
                 "(costmodel validate --rows)")
        rows = list(reader)
    cells = {}  # op -> (tp, tokens) -> [signed errors %]
    block = {}  # (model, line) -> [predicted, measured, tp, tokens]
    for r in rows:
        pred, meas = float(r["predicted_ms"]), float(r["measured_ms"])
        if meas <= 0:
            continue
        key = (int(r["tp"]), int(r["num_tokens"]))
        cells.setdefault(r["op"], {}).setdefault(key, []).append(100 * (pred - meas) / meas)
        b = block.setdefault((r.get("model", ""), r.get("line", ""), key), [0.0, 0.0])
        b[0] += pred
        b[1] += meas
    for (_, _, key), (pred, meas) in block.items():
        cells.setdefault("MLP block (sum of ops)", {}).setdefault(key, []).append(
            100 * (pred - meas) / meas)
    ops = [o for o in BLOCK_OPS if o in cells] + [o for o in cells if o not in BLOCK_OPS]
    plt = pyplot()
    # Token counts fall into power-of-two bins: (2^(k-1), 2^k] is labelled 2^k.
    def token_bin(t):
        return max(0, math.ceil(math.log2(t))) if t > 0 else 0
    bins = sorted({token_bin(k[1]) for c in cells.values() for k in c})
    tps_all = sorted({k[0] for c in cells.values() for k in c})
    cols = 4
    nrows = math.ceil(len(ops) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.4 * cols, 2.5 * nrows + 0.8), squeeze=False)
    image = None
    for ax, op in zip(axes.flat, ops):
        sums = {}
        for (tp, tok), errs in cells[op].items():
            acc = sums.setdefault((tp, token_bin(tok)), [0.0, 0])
            acc[0] += sum(errs)
            acc[1] += len(errs)
        grid = [[float("nan")] * len(bins) for _ in tps_all]
        for (tp, b), (total, n) in sums.items():
            grid[tps_all.index(tp)][bins.index(b)] = total / n
        image = ax.imshow(grid, aspect="auto", cmap="RdBu_r", vmin=-30, vmax=30,
                          interpolation="nearest")
        ax.set_title(op, fontsize=9)
        ax.set_yticks(range(len(tps_all)))
        ax.set_yticklabels([f"TP{t}" for t in tps_all], fontsize=7)
        ticks = list(range(0, len(bins), 2))
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(2 ** bins[i]) for i in ticks], fontsize=7)
        if 7 in bins:  # decode-like: up to 128 tokens
            ax.axvline(bins.index(7) + 0.5, color="black", linewidth=0.8, linestyle=":")
    for ax in list(axes.flat)[len(ops):]:
        ax.axis("off")
    fig.supxlabel("tokens in the step, power-of-two bins (decode-like ≤ 128 left of the dotted "
                  "line)", fontsize=9)
    fig.subplots_adjust(hspace=0.45, wspace=0.25, right=0.86)
    fig.colorbar(image, cax=fig.add_axes([0.89, 0.25, 0.012, 0.5]),
                 label="mean signed error (%): predicted − measured")
    fig.suptitle(f"Error atlas: {os.path.basename(rows_path)} (mean over models and rows per "
                 "cell)", fontsize=11)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)


def plot_ablate(path, out):
    doc = load_tool_json(path, "costmodel ablate --json", "ladder")
    plt = pyplot()
    ladder = doc["ladder"]
    names = [r["rung"] for r in ladder]
    block = [r["mlp_block_mape"] for r in ladder]
    fig, ax = plt.subplots(figsize=(max(7, 0.8 * len(names) + 2), 4.5))
    bars = ax.bar(range(len(names)), block, color="tab:blue", label="MLP block")
    ax.plot(range(len(names)), [r["decode_mape"] for r in ladder], "o--", color="tab:orange",
            label="decode-like (≤ 128 tokens)")
    ax.plot(range(len(names)), [r["prefill_mape"] for r in ladder], "s:", color="tab:green",
            label="prefill-like")
    for b, v in zip(bars, block):
        ax.annotate(f"{v:.1f}", (b.get_x() + b.get_width() / 2, v), ha="center", va="bottom",
                    fontsize=7)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("MAPE (%)")
    ax.set_title(f"Additive ablation on {doc.get('gpu', '')}: each term switched on after the ones "
                 "before", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_transfer(path, out):
    doc = load_tool_json(path, "costmodel transfer --json", "target")
    plt = pyplot()
    labels = {"rf": "RF (home, in sample)", "rf_heldout": "RF (home, 3-fold held out)",
              "rf_verbatim": "RF verbatim", "rf_scaled": "RF spec-scaled",
              "rf_scaled_analytical": "RF scaled by analytical", "analytical": "analytical"}
    fig, ax = plt.subplots(figsize=(9, 4.8))
    x = 0
    ticks, names = [], []
    for side in ("home", "target"):
        cell = doc[side]
        for key in ("rf", "rf_heldout", "rf_verbatim", "rf_scaled", "rf_scaled_analytical",
                    "analytical"):
            if key not in cell:
                continue
            v = cell[key]["mlp_block"]["mape"] if isinstance(cell[key], dict) else cell[key]
            colour = "tab:green" if key == "analytical" else "tab:blue"
            ax.bar(x, v, color=colour)
            ax.annotate(f"{v:.1f}%", (x, v), ha="center", va="bottom", fontsize=7)
            ticks.append(x)
            names.append(f"{cell['gpu']}\n{labels[key]}")
            x += 1
        x += 0.6
    ax.set_yscale("log")
    ax.set_xticks(ticks)
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("MLP-block MAPE (%, log scale)")
    ax.set_title(f"Cross-GPU transfer: trained on {doc['home']['gpu']}, scored on "
                 f"{doc['target']['gpu']} (no target row trains anything)", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_sim2real(path, out):
    doc = load_tool_json(path, "sim2real --json", "runs")
    plt = pyplot()
    metrics = ["e2e_mean", "e2e_p99", "ttft_mean", "ttft_p99", "itl_mean"]
    colours = {"held_out": "tab:red", "fit": "tab:blue", "approximate": "tab:green",
               "overloaded": "tab:grey"}
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 4.2))
    for ax, m in zip(axes, metrics):
        lo, hi = float("inf"), 0.0
        for kind, colour in colours.items():
            xs, ys = [], []
            for r in doc["runs"]:
                v = r.get("metrics", {}).get(m)
                if r.get("set") != kind or not v or v.get("real") is None or v.get("sim") is None:
                    continue
                xs.append(v["real"])
                ys.append(v["sim"])
            if xs:
                ax.scatter(xs, ys, s=18, color=colour, label=kind.replace("_", " "))
                lo, hi = min(lo, *xs, *ys), max(hi, *xs, *ys)
        if hi > 0:
            ax.plot([lo, hi], [lo, hi], color="black", linewidth=0.7)
            ax.plot([lo, hi], [lo * 1.1, hi * 1.1], color="black", linewidth=0.4, linestyle=":")
            ax.plot([lo, hi], [lo / 1.1, hi / 1.1], color="black", linewidth=0.4, linestyle=":")
            ax.set_xscale("log")
            ax.set_yscale("log")
        ax.set_title(m.replace("_", " "), fontsize=10)
        ax.set_xlabel("measured (ms)")
        ax.grid(True, alpha=0.3, which="both")
    axes[0].set_ylabel("simulated (ms)")
    axes[0].legend(fontsize=7)
    fig.suptitle("sim2real: simulated vs measured per run (dotted: ±10%)", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_mlenergy(path, out):
    doc = load_tool_json(path, "sim2real --mlenergy --json", "rows")
    plt = pyplot()
    metrics = ["output_tok_s", "itl_p50", "itl_p90", "power_w", "j_per_token"]
    fig, axes = plt.subplots(1, len(metrics), figsize=(4 * len(metrics), 4.2), sharey=True)
    groups = {}
    for r in doc["rows"]:
        groups.setdefault(f'{r["model"].split("/")[-1]} TP{r["tp"]} ({r["source"]})', []).append(r)
    for ax, m in zip(axes, metrics):
        for label, rows in sorted(groups.items()):
            pts = sorted((r["max_num_seqs"], r["metrics"][m]["error_pct"]) for r in rows
                         if r["metrics"][m]["error_pct"] is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", markersize=3,
                        linewidth=1, label=label)
        ax.axhline(0, color="black", linewidth=0.7)
        ax.axhspan(-10, 10, color="grey", alpha=0.12)
        ax.set_xscale("log", base=2)
        ax.set_title(m.replace("_", " "), fontsize=10)
        ax.set_xlabel("batch (max_num_seqs)")
        ax.grid(True, alpha=0.3, which="both")
    axes[0].set_ylabel("simulated vs measured (%)")
    axes[0].legend(fontsize=6)
    fig.suptitle("sim2real --mlenergy: signed error by batch (band: ±10%)", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv):
    global FORMAT
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["run", "sweep", "capacity", "plan", "atlas", "ablate",
                                         "transfer", "sim2real", "mlenergy"])
    parser.add_argument("input", help="an output folder (run, sweep, capacity, plan) or a file")
    parser.add_argument("output", nargs="?", help="the picture to write (atlas, ablate, transfer, "
                        "sim2real; .png or .svg)")
    parser.add_argument("--format", choices=["png", "svg"], default="png")
    args = parser.parse_args(argv[1:])  # a usage error exits 2
    FORMAT = args.format
    folders = {"run": plot_run, "sweep": plot_sweep, "capacity": plot_capacity, "plan": plot_plan}
    files = {"atlas": plot_atlas, "ablate": plot_ablate, "transfer": plot_transfer,
             "sim2real": plot_sim2real, "mlenergy": plot_mlenergy}
    if args.mode in folders:
        if not os.path.isdir(args.input):
            fail(f"{args.input}: not a folder (expected an output folder of {args.mode})")
        folders[args.mode](args.input)
    else:
        if not args.output:
            parser.error(f"{args.mode} needs OUTPUT, the picture to write")
        files[args.mode](args.input, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
