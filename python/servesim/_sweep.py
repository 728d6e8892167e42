"""sweep(): a grid of runs and a decision, as the `sweep` command makes it."""

import csv
import io
import json
import os
import pathlib
import tempfile

from . import _servesim


def _text(value):
    return _servesim.value_text(value)


def _values(spec):
    """--vary's VALUES: a str as the command reads it ("256..8192:x2"), or a list of values."""
    if isinstance(spec, str):
        return spec
    return ",".join(_text(v) for v in spec)


def _assignments(d):
    return [f"{k}={_text(v)}" for k, v in (d or {}).items()]


def _slos(slo):
    if slo is None:
        return []
    if isinstance(slo, str):
        return [slo]
    if isinstance(slo, dict):
        return [f"{m}={_values(b) if isinstance(b, (list, tuple)) else _text(b)}"
                for m, b in slo.items()]
    return list(slo)


def _baselines(baselines):
    if baselines is None:
        return []
    if isinstance(baselines, (str, dict)):
        baselines = [baselines]
    return [b if isinstance(b, str) else ";".join(_assignments(b)) for b in baselines]


def _config_path(config, tmp):
    """A config path as given, or a dict written as YAML into the folder tmp (the commands read
    files); its relative paths resolve against the working directory."""
    if not isinstance(config, dict):
        return os.fspath(config)
    config = dict(config)
    config.setdefault("config_dir", os.getcwd())
    path = pathlib.Path(tmp) / "config.yaml"
    path.write_text(_servesim.config_yaml(config))
    return str(path)


def _number(text):
    if text == "":
        return None
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            return text


class SweepResult:
    """What a sweep found.

    points     list of dicts, one per run (points.csv): point, the varied values, seed, metrics
    means      list of dicts, one per point (means.csv): <metric>_mean and <metric>_ci95
    selection  dict (selection.json) when slo/pick were given, else None
    capacity   list (capacity.json's points) when max_rate was given, else None
    grid       dict: points.json (the grid, and per point its runs and the command of each)
    dir        the folder of the files, when out= was given
    complete   False when Ctrl-C stopped the sweep: runs cut short or never started have empty
               metrics, and a selection was made among the runs done
    """

    def __init__(self, folder, keep_dir, complete=True):
        folder = pathlib.Path(folder)
        self.dir = str(folder) if keep_dir else None
        self.complete = complete
        self._csv = {}
        for name in ("points", "means"):
            path = folder / f"{name}.csv"
            self._csv[name] = path.read_text() if path.exists() else None
        self.points = self._rows("points")
        self.means = self._rows("means")
        self.selection = self._json(folder / "selection.json")
        capacity = self._json(folder / "capacity.json")
        self.capacity = capacity
        self.grid = self._json(folder / "points.json")

    @staticmethod
    def _json(path):
        return json.loads(path.read_text()) if path.exists() else None

    def _rows(self, name):
        text = self._csv[name]
        if text is None:
            return None
        return [{k: _number(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]

    def to_pandas(self, table="means"):
        """`table` ("means" or "points") as a pandas DataFrame (the CSV file's columns)."""
        if table not in self._csv:
            raise ValueError(f"table must be 'means' or 'points', not {table!r}")
        if self._csv[table] is None:
            raise ValueError(f"this sweep wrote no {table}.csv")
        import pandas as pd

        return pd.read_csv(io.StringIO(self._csv[table]))

    @property
    def pick(self):
        """The first SLO setting's pick (selection.json), or None."""
        if not self.selection:
            return None
        settings = self.selection.get("settings") or []
        return settings[0].get("pick") if settings else None

    def __repr__(self):
        n = len(self.means) if self.means is not None else len(self.capacity or [])
        return f"<servesim.SweepResult {n} points>"


def sweep(config, vary, overrides=None, zip=False, seeds=1, seed=None, slo=None, pick="",
          throughput="output_tok_s", baselines=None, oracle=None, max_rate="", rate_tol=0.01,
          threads=None, out=None, keep_runs=False):
    """Runs a grid of simulations and picks among them, as the `sweep` command does.

    config     a YAML path or a dict with the YAML's structure
    vary       {"dotted.key": [values] or "256..8192:x2"}: the grid's axes (cartesian product,
               or element-wise with zip=True)
    overrides  {"dotted.key": value} applied to every point (--set)
    seeds      replicates per point (seed, seed+1, ...); seed: the first (default the config's)
    slo        {"tbt_p99_ms": 40} or {"tbt_p99_ms": [25, 50]} (upper bounds), or the command's
               strings ("attainment>=0.99")
    pick       "max:NAME" or "min:NAME": a metric or a varied key
    baselines  {"key": value, ...} or a list of them; oracle: {"key": value} (--oracle)
    max_rate   a rate key ("workload.arrival.qps"): the capacity search instead of a grid
    threads    threads (default all cores); out: keep the files there (default: none kept)

    tools/README.md ("sweep") describes each. Bad input raises ConfigError before any run.
    Ctrl-C stops the sweep and raises KeyboardInterrupt; its .result holds the partial SweepResult.
    """
    with tempfile.TemporaryDirectory(prefix="servesim-sweep-") as tmp:
        config = _config_path(config, tmp)
        folder = os.fspath(out) if out is not None else str(pathlib.Path(tmp) / "sweep")
        vary_flags = [f"{k}={_values(v)}" for k, v in vary.items()]
        oracle_flags = oracle if isinstance(oracle, (list, tuple)) else _assignments(oracle)
        _, interrupt = _servesim.sweep(
            os.fspath(config), _assignments(overrides), vary_flags, zip, seeds, seed,
            [] if threads is None else [threads], _slos(slo), pick, throughput,
            _baselines(baselines), list(oracle_flags), max_rate, rate_tol, folder, keep_runs)
        result = SweepResult(folder, keep_dir=out is not None, complete=interrupt is None)
    if interrupt is not None:
        interrupt.result = result
        raise interrupt
    return result
