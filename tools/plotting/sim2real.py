"""plot.py sim2real and mlenergy: simulated against measured, per run and per batch."""
from plotting.common import finish, load_tool_json, pyplot


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
    finish(plt, fig, out)


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
    finish(plt, fig, out)


def plot_silicon(path, out):
    doc = load_tool_json(path, "sim2real --silicon --json", "rows")
    plt = pyplot()
    metrics = [("ttft_mean", "mean TTFT"), ("tpot_mean", "mean TPOT")]
    engines = sorted({r["engine"] for r in doc["rows"]})
    fig, axes = plt.subplots(len(metrics), max(1, len(engines)),
                             figsize=(4.5 * max(1, len(engines)), 7), sharey="row", squeeze=False)
    for col, engine in enumerate(engines):
        rows = [r for r in doc["rows"] if r["engine"] == engine]
        groups = {}
        for r in rows:
            groups.setdefault(f'{r["system"]} {r["precision"]}', []).append(r)
        for row_i, (m, label) in enumerate(metrics):
            ax = axes[row_i][col]
            for group, rs in sorted(groups.items()):
                fitted = [r for r in rs if r.get("fit")]
                held = [r for r in rs if not r.get("fit")]
                line = ax.scatter([r["concurrency"] for r in held],
                                  [r["metrics"][m]["error_pct"] for r in held], s=12,
                                  label=group)
                if fitted:
                    ax.scatter([r["concurrency"] for r in fitted],
                               [r["metrics"][m]["error_pct"] for r in fitted], s=30,
                               facecolors="none", edgecolors=line.get_facecolor())
            ax.axhline(0, color="black", linewidth=0.7)
            ax.axhspan(-10, 10, color="grey", alpha=0.12)
            ax.set_xscale("log", base=2)
            ax.set_title(f"{engine}: {label}", fontsize=10)
            ax.set_xlabel("client concurrency")
            ax.grid(True, alpha=0.3, which="both")
            if col == 0:
                ax.set_ylabel("simulated vs measured (%)")
        axes[0][col].legend(fontsize=6)
    fig.suptitle("sim2real --silicon: signed error by concurrency per engine "
                 "(band: ±10%; rings: fit rows)", fontsize=11)
    finish(plt, fig, out)
