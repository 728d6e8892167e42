"""Logging and incremental output: the log clock, CSV sinks, meta.json, nvidia-smi, sections."""
import csv
import json
import os
import subprocess
import time
import traceback

from .tables import SMI_QUERY

T0 = time.time()


def log(msg):
    print("[%7.1fs] %s" % (time.time() - T0, msg), flush=True)


class CsvSink:
    def __init__(self, path, columns):
        self.path = path
        self.f = open(path, "w", newline="")
        self.w = csv.writer(self.f, lineterminator="\n")
        self.w.writerow(columns)
        self.f.flush()
        self.rows = 0

    def add(self, values):
        self.w.writerow(values)
        self.f.flush()
        self.rows += 1

    def close(self):
        self.f.close()


class Meta:
    def __init__(self, path):
        self.path = path
        self.d = dict(started_unix=T0, started_utc=time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                  time.gmtime(T0)),
                      sections={}, smi=[], errors=[], notes=[])

    def save(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.d, f, indent=1, sort_keys=True, default=str)
        os.replace(tmp, self.path)

    def error(self, where, exc):
        msg = "%s: %s: %s" % (where, type(exc).__name__, exc)
        log("ERROR " + msg)
        tb = traceback.format_exc()
        print(tb, flush=True)
        self.d["errors"].append(dict(where=where, error=msg, t=time.time() - T0))


def nvidia_smi(tag, meta):
    rec = dict(tag=tag, t=round(time.time() - T0, 2))
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=" + SMI_QUERY, "--format=csv"],
                             capture_output=True, text=True, timeout=20)
        lines = [ln for ln in out.stdout.strip().splitlines() if ln.strip()]
        rec["raw"] = lines
        if len(lines) >= 2:
            rec.update(dict(zip(SMI_QUERY.split(","), [v.strip() for v in lines[1].split(",")])))
    except Exception as exc:  # noqa: BLE001 - nvidia-smi absent in a dry run
        rec["error"] = "%s: %s" % (type(exc).__name__, exc)
    meta.d["smi"].append(rec)
    log("smi %-28s %s" % (tag, rec.get("raw", [rec.get("error")])[-1]))
    return rec


def run_section(name, fn, meta, deadline):
    if time.time() > deadline:
        log("SKIP section %s: past the deadline" % name)
        meta.d["sections"][name] = dict(skipped="deadline")
        meta.save()
        return
    log("=== section %s" % name)
    nvidia_smi(name + ":before", meta)
    t = time.time()
    try:
        fn()
        ok = True
    except Exception as exc:  # noqa: BLE001 - each section is independent
        meta.error("section " + name, exc)
        ok = False
    wall = time.time() - t
    nvidia_smi(name + ":after", meta)
    meta.d["sections"][name] = dict(wall_s=round(wall, 3), ok=ok)
    meta.save()
    log("=== section %s done in %.1f s" % (name, wall))

