"""simulate() and its Result."""

import json
import os

from . import _servesim


def schema(speculative=False):
    """The columns of Result.requests and Result.steps (and of requests.h5 / steps.h5).

    {"requests": [(name, numpy type, unit, description), ...], "steps": [...]}; unit "" for
    counts and ids. speculative=True: the requests of a run with a `speculative:` section, which
    end with spec_steps and spec_accepted_tokens.
    """
    return _servesim.schema(speculative)


class Result:
    """One run of the simulator.

    summary   dict: summary.json's document (without "outputs" unless out= was given)
    config    dict: the config as it ran (overrides, seed and config_dir written in)
    requests  NumPy structured array: one row per request in id order, requests.h5's columns
    steps     NumPy structured array: one row per engine step, steps.h5's columns
    complete  False when the run was interrupted: the records hold the requests done by then
    """

    def __init__(self, summary_json, records):
        self.summary = json.loads(summary_json)
        self.config = self.summary["config"]
        self._records = records
        self._requests = None
        self._steps = None

    @property
    def complete(self):
        return bool(self.summary["complete"])

    @property
    def requests(self):
        if self._requests is None:
            self._requests = self._records.requests()
        return self._requests

    @property
    def steps(self):
        if self._steps is None:
            self._steps = self._records.steps()
        return self._steps

    def to_pandas(self, table="requests"):
        """`table` ("requests" or "steps") as a pandas DataFrame; df.attrs["units"] per column."""
        if table not in ("requests", "steps"):
            raise ValueError(f"table must be 'requests' or 'steps', not {table!r}")
        import pandas as pd

        df = pd.DataFrame(getattr(self, table))
        fields = schema("speculative" in self.summary)[table]
        df.attrs["units"] = {name: unit for name, _, unit, _ in fields}
        return df

    def __repr__(self):
        req = self.summary.get("requests", {})
        return (f"<servesim.Result {self.summary.get('name')!r} seed {self.summary.get('seed')}: "
                f"{req.get('finished')} finished, {req.get('rejected')} rejected"
                f"{'' if self.complete else ', interrupted'}>")


def simulate(config, overrides=None, seed=None, out=None, sensitivity=0, progress=None):
    """Runs one simulation, as `simulate CONFIG --set K=V ... --seed N` does.

    config     a YAML path (str or os.PathLike) or a dict with the YAML's structure
    overrides  {"dotted.key": value}: what --set gives (list items by index: "replicas.0.tp")
    seed       overrides the config's seed
    out        also write the output files into this folder (summary.json, requests.h5, ...)
    sensitivity  > 0: run twice more with every step time +/- this many percent and add
               summary["sensitivity"] (the % each latency moves per 1% of step-time error)
    progress   called as progress(done, total, sim_s) every 65,536 events; total may be None

    The GIL is released while it runs. Bad input raises ConfigError (file:line:col: ...).
    Ctrl-C stops the run and raises KeyboardInterrupt; its .result holds the partial Result.
    """
    if not 0 <= sensitivity <= 50:
        raise ValueError(f"sensitivity: {sensitivity} is not a percentage in [0, 50]")
    summary, records, interrupt = _servesim.simulate(
        config, overrides or {}, seed, None if out is None else os.fspath(out), float(sensitivity),
        progress)
    result = Result(summary, records)
    if interrupt is not None:
        interrupt.result = result
        raise interrupt
    return result
