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
