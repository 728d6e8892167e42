"""What every plot mode shares: reading the tools' files, matplotlib, and writing a picture."""
import json
import os
import sys

# The picture format for the folder modes (run, sweep, capacity, plan); plot.py sets it from
# --format before it draws.
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



def in_folder(directory, stem):
    """The picture `stem` inside an output folder, in the format chosen on the command line."""
    return os.path.join(directory, f"{stem}.{FORMAT}")


def save(plt, fig, path, **savefig_kw):
    """Writes the figure to `path` at the resolution every picture uses, then frees it."""
    fig.savefig(path, dpi=110, **savefig_kw)
    plt.close(fig)


def finish(plt, fig, path):
    """Lays the figure out and saves it: how most pictures end."""
    fig.tight_layout()
    save(plt, fig, path)
