"""plot.py atlas, ablate and transfer: the costmodel validate, ablate and transfer pictures."""
import csv
import math
import os

from plotting.common import fail, finish, load_tool_json, pyplot, save


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
    save(plt, fig, out, bbox_inches="tight")


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
    finish(plt, fig, out)


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
    finish(plt, fig, out)
