"""plan(): the cheapest fleet that meets an SLO, as the `plan` command finds it."""

import csv
import io
import json
import os
import pathlib
import tempfile

from . import _servesim
from ._sweep import _assignments, _config_path, _number, _slos, _values


class PlanResult:
    """What a plan found.

    plan    dict: plan.json (the candidates, every fleet simulated, the pick and why each
            cheaper option fails)
    points  list of dicts, one per fleet simulated (points.csv)
    dir     the folder of the files, when out= was given
    complete  False when Ctrl-C stopped the search: fleets not run count as not meeting
    split   dict: split.json (one pool against length-split pools) with split=, else None
    """

    def __init__(self, folder, keep_dir):
        folder = pathlib.Path(folder)
        self.dir = str(folder) if keep_dir else None
        self.plan = json.loads((folder / "plan.json").read_text())
        self.complete = self.plan.get("complete", True)
        split = folder / "split.json"
        self.split = json.loads(split.read_text()) if split.exists() else None
        points = folder / "points.csv"
        self._csv = points.read_text() if points.exists() else ""
        self.points = [{k: _number(v) for k, v in row.items()}
                       for row in csv.DictReader(io.StringIO(self._csv))]

    @property
    def pick(self):
        """The chosen fleet (plan.json's pick), or None when no fleet meets."""
        return self.plan.get("pick")

    def to_pandas(self):
        """points.csv as a pandas DataFrame."""
        import pandas as pd

        return pd.read_csv(io.StringIO(self._csv))

    def __repr__(self):
        return f"<servesim.PlanResult {len(self.points)} fleets simulated>"


def plan(config, gpus, slo, tp=(1, 2, 4, 8), max_gpus=16, vary=None, objective="cost",
         prices="", price=None, overrides=None, seeds=1, exhaustive=False, threads=None,
         out=None, bands=False, band_draws=5, error_model=None, split=None):
    """Searches for the cheapest fleet that meets `slo`, as the `plan` command does.

    config     a YAML path or a dict; its replica group is replaced by every fleet tried
    gpus       GPU kinds to consider (["h100", "h200"]); tp: TP degrees; max_gpus: per fleet
    slo        {"ttft_p99_ms": 2000} (upper bounds, one value each) or the command's strings
    vary       {"dotted.key": [values]}: settings searched with each fleet
    objective  "cost", "gpus" or "power"; prices: a price file ("none": no prices);
    price      {"h200": 3.5}: USD per GPU-hour overrides
    overrides  {"dotted.key": value} applied first (--set)
    bands      True: rerun the pick and the cheaper fleets under band_draws draws of the error
               model (error_model: a file; naming one implies bands) into plan["bands"]
    split      [512, 1024]: also plan two pools split by prompt length at each threshold, each
               for its own requests, into result.split (split.json)

    tools/README.md ("plan") describes each. Bad input raises ConfigError before any run.
    Ctrl-C stops the search and raises KeyboardInterrupt; its .result holds the partial PlanResult.
    """
    with tempfile.TemporaryDirectory(prefix="servesim-plan-") as tmp:
        config = _config_path(config, tmp)
        folder = os.fspath(out) if out is not None else str(pathlib.Path(tmp) / "plan")
        varies = [f"{k}={_values(v)}" for k, v in (vary or {}).items()]
        _, interrupt = _servesim.plan(
            os.fspath(config), _assignments(overrides), varies, list(gpus), list(tp), max_gpus,
            _slos(slo), objective, prices, _assignments(price), seeds, exhaustive, threads or 0,
            folder, bands, band_draws, os.fspath(error_model) if error_model else "",
            list(split or []))
        result = PlanResult(folder, keep_dir=out is not None)
    if interrupt is not None:
        interrupt.result = result
        raise interrupt
    return result
