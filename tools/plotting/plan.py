"""plot.py plan: every fleet a plan simulated against its objective, and each candidate's least."""
import os

from plotting.common import finish, in_folder, load_tool_json, pyplot


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
    finish(plt, fig, in_folder(directory, "plan"))


def plot_layouts(directory):
    """plan --layouts: every deployment simulated, tokens/s per GPU against tokens/s per user."""
    doc = load_tool_json(os.path.join(directory, "layouts.json"), "a plan --layouts layouts.json",
                         "candidates")
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(10, 6.5))
    cands = [c for c in doc["candidates"] if c.get("tokens_per_s_per_gpu") is not None]
    groups = {}
    for c in cands:
        groups.setdefault(f"{c['mode']} {c['engine']} {c['format']}", []).append(c)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (name, cs) in enumerate(sorted(groups.items())):
        marker = "o" if name.startswith("agg") else "^"
        ax.scatter([c["tokens_per_s_per_user"] for c in cs],
                   [c["tokens_per_s_per_gpu"] for c in cs], s=14, alpha=0.45,
                   color=colors[i % len(colors)], marker=marker, label=name)
    front = [doc["candidates"][i] for i in doc["frontier"]]
    if front:
        ax.plot([c["tokens_per_s_per_user"] for c in front],
                [c["tokens_per_s_per_gpu"] for c in front], "-", color="black", linewidth=1.2,
                label="frontier")
        banded = [c for c in front if isinstance(c.get("band"), dict)]
        if banded:
            # The 80% band of each frontier deployment, by the silicon replay's errors.
            xs = [c["tokens_per_s_per_user"] for c in banded]
            ys = [c["tokens_per_s_per_gpu"] for c in banded]
            ax.errorbar(xs, ys, fmt="none", ecolor="black", elinewidth=0.7, alpha=0.5,
                        xerr=[[max(0.0, x - c["band"]["tokens_per_s_per_user"][0])
                               for x, c in zip(xs, banded)],
                              [max(0.0, c["band"]["tokens_per_s_per_user"][1] - x)
                               for x, c in zip(xs, banded)]],
                        yerr=[[max(0.0, y - c["band"]["tokens_per_s_per_gpu"][0])
                               for y, c in zip(ys, banded)],
                              [max(0.0, c["band"]["tokens_per_s_per_gpu"][1] - y)
                               for y, c in zip(ys, banded)]],
                        label="80% band (silicon replay's errors)")
    shown = set()
    for p in doc["picks"]:
        if p["candidate"] is None:
            continue
        c = doc["candidates"][p["candidate"]]
        ax.axvline(p["min_tokens_per_s_per_user"], color="tab:gray", linewidth=0.6,
                   linestyle=":")
        if p["candidate"] in shown:
            continue
        shown.add(p["candidate"])
        ax.scatter([c["tokens_per_s_per_user"]], [c["tokens_per_s_per_gpu"]], marker="*", s=160,
                   facecolor="gold", edgecolor="black", zorder=5)
        ax.annotate(c["label"], (c["tokens_per_s_per_user"], c["tokens_per_s_per_gpu"]),
                    fontsize=6, xytext=(4, 4), textcoords="offset points")
    q = doc["query"]
    ax.set_xlabel("tokens/s per user (1000 / mean TPOT)")
    ax.set_ylabel("output tokens/s per GPU")
    ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(f"{q['model']} on {q['system']}, {q['isl']}/{q['osl']}, up to {q['max_gpus']} "
                 f"GPUs: {doc['runs']} deployments simulated\n(o aggregated, ^ disaggregated; "
                 f"* the pick at each dotted per-user speed)", fontsize=9)
    finish(plt, fig, in_folder(directory, "layouts"))
