"""plot.py sweep and capacity: a sweep folder's frontier, metrics and capacity pictures."""
import os

from plotting.common import (blocks, fail, finish, geometric, in_folder, label_of, load,
                             load_tool_json, numeric, pyplot, save)


def band_whiskers(ax, members, points, selection, x_metric, throughput):
    """`sweep --bands`: each point's range over the band draws, as whiskers in both metrics."""
    ranges = ((selection or {}).get("bands") or {}).get("points")
    if not ranges:
        return
    xs, ys, xerr, yerr = [], [], [[], []], [[], []]
    for p in members:
        r = ranges[points.index(p)]
        x, y = p["mean"].get(x_metric), p["mean"].get(throughput)
        bx, by = r.get(x_metric), r.get(throughput)
        if x is None or y is None or not bx or not by:
            continue
        xs.append(x)
        ys.append(y)
        xerr[0].append(x - bx["low"])
        xerr[1].append(bx["high"] - x)
        yerr[0].append(y - by["low"])
        yerr[1].append(by["high"] - y)
    if xs:
        ax.errorbar(xs, ys, xerr=xerr, yerr=yerr, fmt="none", ecolor="tab:purple", alpha=0.5,
                    capsize=2, label="80% band (--bands)")


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
                band_whiskers(ax, members, points, selection, x_metric, throughput)
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
    finish(plt, fig, in_folder(directory, "frontier"))

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
    save(plt, fig, in_folder(directory, "metrics"))


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
    finish(plt, fig, in_folder(directory, "capacity"))
