#!/usr/bin/env python3
"""Kill test: a run stopped at any moment leaves no invalid file under a final name.

usage: kill_test.py SIMULATE_BINARY OUT_DIR

1. A complete run of a long config (300,000 requests, analytical cost model, CSV and trace on);
   its wall time W sets the window for the kills, and its files are checked.
2. Six SIGKILLs at seeded random moments in [0, 0.8 W], each in the same folder (so an earlier
   complete set and stale .part files are there too): every file under a final name is valid, and
   a summary.json present means the complete set it lists is there.
3. SIGINT and SIGTERM at W/3 (halved when the run was through first, doubled when it was still
   being set up, up to 8 tries): exit 130 and 143, summary.json says "complete": false, and the
   request rows equal the requests it counts as done.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

import h5py

REQUESTS = 300000
FINAL = ["requests.h5", "steps.h5", "requests.csv", "steps.csv", "trace.json", "config.yaml",
         "summary.json"]


def args_for(simulate, out):
    return [simulate, "tests/tools/configs/golden_fixed.yaml", "--out", out, "--quiet",
            "--set", f"workload.num_requests={REQUESTS}", "--set", "workload.arrival.qps=40",
            "--set", "cost_model={kind: analytical}", "--set", "output.csv=true",
            "--set", "output.csv_max_requests=1000000", "--set", "output.trace_max_steps=20000",
            "--set", "output.trace_max_requests=100"]


def check_csv(path):
    """Rows are written in order, so a cut file is cut at its end: the file must end with a
    newline and its last row have the header's field count. Returns the number of rows."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        raise AssertionError(f"{path}: last line cut")
    lines = data.count(b"\n")
    header = data[: data.index(b"\n")]
    last = data[data.rindex(b"\n", 0, len(data) - 1) + 1 : -1] if lines > 1 else header
    if last.count(b",") != header.count(b","):
        raise AssertionError(f"{path}:{lines}: {last.count(b',') + 1} fields, header has "
                             f"{header.count(b',') + 1}")
    return lines - 1


def check_h5(path):
    with h5py.File(path, "r") as f:
        for name in f:
            f[name][...]


def check_folder(out):
    """Validates every final file in `out`; returns the summary (or None)."""
    present = [f for f in FINAL if os.path.exists(os.path.join(out, f))]
    for f in present:
        p = os.path.join(out, f)
        if f.endswith(".csv"):
            check_csv(p)
        elif f.endswith(".h5"):
            check_h5(p)
        elif f.endswith(".json"):
            with open(p) as fh:
                json.load(fh)
        elif f == "config.yaml":
            with open(p) as fh:
                if not fh.read().endswith("\n"):
                    raise AssertionError(f"{p}: cut")
    if "summary.json" not in present:
        return None
    with open(os.path.join(out, "summary.json")) as fh:
        summary = json.load(fh)
    for f in summary["outputs"]["files"]:
        if not os.path.exists(os.path.join(out, f)):
            raise AssertionError(f"{out}: summary.json lists {f}, which is not there")
    return summary


def main():
    simulate, base = sys.argv[1], sys.argv[2]
    os.makedirs(base, exist_ok=True)
    out = os.path.join(base, "run")
    start = time.monotonic()
    subprocess.run(args_for(simulate, out), check=True)
    wall = time.monotonic() - start
    summary = check_folder(out)
    assert summary is not None and summary["complete"] is True, "the complete run has no summary"
    assert check_csv(os.path.join(out, "requests.csv")) == REQUESTS
    print(f"complete run: {wall:.2f} s")

    rng = random.Random(23)
    for k in range(6):
        delay = rng.uniform(0, 0.8 * wall)  # later runs start faster than the first (cached)
        p = subprocess.Popen(args_for(simulate, out))
        time.sleep(delay)
        p.send_signal(signal.SIGKILL)
        p.wait()
        s = check_folder(out)
        assert s is None or s["complete"] is True, "a killed run left a summary of its own"
        print(f"SIGKILL at {delay:.2f} s: exit {p.returncode}, "
              f"{'a complete set' if s else 'no summary.json'}, every final file valid")

    for sig, code in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
        # The signal must land while requests are being simulated. On a loaded machine a run can
        # take much more or less than the first one did: one that finished first (exit 0, a
        # complete set) or was stopped before any request was done is tried again with the delay
        # halved or doubled, a few times.
        delay = wall / 3
        for attempt in range(8):
            started = time.time()
            p = subprocess.Popen(args_for(simulate, out))
            time.sleep(delay)
            p.send_signal(sig)
            p.wait()
            s = check_folder(out)
            summary = os.path.join(out, "summary.json")
            own = s is not None and os.path.getmtime(summary) >= started
            if p.returncode == 0 or (own and s["complete"] is True):  # through before the signal
                delay /= 2
                continue
            assert p.returncode == code, f"{sig.name}: exit {p.returncode}, expected {code}"
            if not own or s["requests"]["finished"] + s["requests"]["rejected"] == 0:
                delay *= 2  # stopped while the run was still being set up
                continue
            break
        else:
            raise AssertionError(f"{sig.name}: never landed while requests were being simulated")
        done = s["requests"]["finished"] + s["requests"]["rejected"]
        rows = check_csv(os.path.join(out, "requests.csv"))
        assert rows == done, f"{sig.name}: {rows} request rows, summary counts {done} done"
        assert 0 < done < REQUESTS, f"{sig.name}: {done} requests done"
        assert s["requests"]["unfinished"] == s["requests"]["arrived"] - done
        print(f"{sig.name} at {delay:.2f} s: exit {code}, {done} requests done, "
              f"{s['requests']['unfinished']} unfinished, complete: false")
    print("kill test passed")


if __name__ == "__main__":
    main()
