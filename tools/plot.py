#!/usr/bin/python3
"""The project's one plot script (matplotlib; Debian's python3-matplotlib).

    plot.py sweep DIR      DIR/points.json [+ selection.json] -> DIR/frontier.png, DIR/metrics.png
    plot.py capacity DIR   DIR/capacity.json                  -> DIR/capacity.png

`sweep` runs it on its own output folder; run it by hand to redraw. Exit 1 with a message naming
the file when an input is missing or is not what a sweep writes.
"""
import json
import math
import os
import sys

USAGE = "usage: plot.py sweep DIR | plot.py capacity DIR"


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
    fig.savefig(os.path.join(directory, "frontier.png"), dpi=110)
    plt.close(fig)

    # Metric against the first varied key, one line per value of the others, 95% CI bands.
    metrics = [throughput, "ttft_p99_ms", "tbt_p99_ms", "e2e_p99_ms"]
    metrics += [m for m in bounded if m not in metrics]
    fig, grid = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 4), squeeze=False)
    if axes:
        key = axes[0]["key"]
        xs_all = [p["values"][key] for p in points]
        is_num = numeric(xs_all)
        groups = {}
        for p in points:
            rest = {k: v for k, v in p["values"].items() if k != key}
            groups.setdefault(label_of(rest), []).append(p)
        for ax, metric in zip(grid[0], metrics):
            for gi, (glabel, members) in enumerate(list(groups.items())[:8]):
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
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "metrics.png"), dpi=110)
    plt.close(fig)


def plot_capacity(directory):
    doc = load(os.path.join(directory, "capacity.json"), "a sweep --max-rate capacity.json")
    if "points" not in doc:
        fail(f"{os.path.join(directory, 'capacity.json')}: no 'points' (expected a sweep "
             "--max-rate capacity.json)")
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
    fig.savefig(os.path.join(directory, "capacity.png"), dpi=110)
    plt.close(fig)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("sweep", "capacity"):
        print(USAGE, file=sys.stderr)
        return 2
    if not os.path.isdir(argv[2]):
        fail(f"{argv[2]}: not a folder (expected a sweep's output folder)")
    (plot_sweep if argv[1] == "sweep" else plot_capacity)(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
