"""step_time(): the cost model alone."""

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
