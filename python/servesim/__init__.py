"""servesim from Python: runs, their records as NumPy arrays, and the catalog.

    import servesim
    r = servesim.simulate("configs/h200_sarathi.yaml", overrides={"scheduler.chunk_size": 1024})
    print(r.summary["throughput"], r.requests["ttft_ns"].mean())

python/README.md describes the API.
"""

from ._cost import rank, step_time
from ._plan import PlanResult, plan
from ._result import Result, schema, simulate
from ._sweep import SweepResult, sweep
from ._servesim import ConfigError, __version__, catalog

__all__ = ["ConfigError", "PlanResult", "Result", "SweepResult", "__version__", "catalog", "plan",
           "rank", "schema", "simulate", "step_time", "sweep"]
