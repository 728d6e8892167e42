#!/usr/bin/python3
"""The project's one plot script (matplotlib and h5py: Debian's python3-matplotlib, python3-h5py).

    plot.py run DIR            a simulate output folder -> DIR/latency.png, DIR/timeline.png
    plot.py sweep DIR          points.json [+ selection.json] -> DIR/frontier.png, DIR/metrics.png
    plot.py capacity DIR       capacity.json -> DIR/capacity.png
    plot.py plan DIR           plan.json -> DIR/plan.png (objective vs the first SLO's metric)
    plot.py layouts DIR        plan --layouts layouts.json -> DIR/layouts.png (tokens/s per GPU
                               against tokens/s per user, the frontier and the picks)
    plot.py atlas ROWS OUT     costmodel validate --rows CSV -> signed error per op, TP x tokens
    plot.py ablate JSON OUT    costmodel ablate --json -> the additive MAPE ladder
    plot.py transfer JSON OUT  costmodel transfer --json -> MAPE per predictor and GPU
    plot.py sim2real JSON OUT  sim2real --json -> simulated vs measured per run and metric
    plot.py mlenergy JSON OUT  sim2real --mlenergy --json -> signed error by batch
    plot.py silicon JSON OUT   sim2real --silicon --json -> signed error by concurrency per engine

--format svg draws SVG instead of PNG (for OUT, the extension decides). simulate --plot, sweep,
costmodel --plot and sim2real --plot run it; run it by hand to redraw. Exit 1 with a message naming
the file when an input is missing or is not what the tool writes; 2 for a usage error.
"""
import argparse
import os
import sys

# The modes live in the plotting package beside this script, wherever it is run from; no
# __pycache__ is left in the source tree by the commands that run it.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from plotting import common  # noqa: E402
from plotting.common import fail  # noqa: E402
from plotting.costmodel import plot_ablate, plot_atlas, plot_transfer  # noqa: E402
from plotting.plan import plot_layouts, plot_plan  # noqa: E402
from plotting.run import plot_run  # noqa: E402
from plotting.sim2real import plot_mlenergy, plot_silicon, plot_sim2real  # noqa: E402
from plotting.sweep import plot_capacity, plot_sweep  # noqa: E402


def main(argv):
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["run", "sweep", "capacity", "plan", "layouts", "atlas",
                                         "ablate", "transfer", "sim2real", "mlenergy", "silicon"])
    parser.add_argument("input", help="an output folder (run, sweep, capacity, plan, layouts) "
                        "or a file")
    parser.add_argument("output", nargs="?", help="the picture to write (atlas, ablate, transfer, "
                        "sim2real; .png or .svg)")
    parser.add_argument("--format", choices=["png", "svg"], default="png")
    args = parser.parse_args(argv[1:])  # a usage error exits 2
    common.FORMAT = args.format
    folders = {"run": plot_run, "sweep": plot_sweep, "capacity": plot_capacity, "plan": plot_plan,
               "layouts": plot_layouts}
    files = {"atlas": plot_atlas, "ablate": plot_ablate, "transfer": plot_transfer,
             "sim2real": plot_sim2real, "mlenergy": plot_mlenergy, "silicon": plot_silicon}
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
