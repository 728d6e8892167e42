"""step_time() and rank(): the cost model alone."""

import json
import os

from . import _servesim


def step_time(gpu, model, tp=1, batch=(), cost_model="analytical", replica=None,
              scheduler=None):
    """The price of one engine step, as `costmodel predict --json` gives it.

    gpu, model, tp  the replica, as a config's replicas: item and model: key name them
    batch           [(prompt_tokens, context), ...]: a prefill chunk of prompt_tokens new tokens
                    after `context` cached ones; prompt_tokens 0: a decode over `context` tokens
    cost_model      a kind name ("analytical", "roofline", ...) or a config's cost_model: dict
    replica         further keys of the replicas: item (pp, topology, power_cap_w, ...)
    scheduler       the config's scheduler: section (default {"kind": "sarathi"})

    Returns {"total_ns", "breakdown_ns": {component: ns}, "energy_j", "stage_ns"}; the
    components may overlap, the total is authoritative. Bad input raises ConfigError.
    """
    return _servesim.step_time(gpu, model, tp, list(batch), cost_model, replica, scheduler)


def rank(model, gpus=(), tp=1, tokens=(), decodes=0, context=0, profiles=(), workload=None,
         metric="output_tok_s"):
    """Which GPU runs `model` fastest, with honest ties: `costmodel rank --json`'s report (dict).

    gpus      GPU names (default the command's: a100-80gb, h100-sxm, h200, l40s)
    tokens    prefill chunk sizes to rank at (default the command's, 1 ... 4096); decodes > 0
              ranks decode steps of that many requests instead; context: tokens before each
    profiles  folders of measured mlp.csv: also score the ranking against them
    workload  a run config path: rank by simulating it on each GPU, by `metric`

    tools/README.md and costmodels/README.md describe the report. Bad input raises ConfigError.
    """
    return json.loads(_servesim.rank(
        model, list(gpus), tp, list(tokens), decodes, context,
        [os.fspath(p) for p in profiles], "" if workload is None else os.fspath(workload),
        metric))
