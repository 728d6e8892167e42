"""servesim.step_time and rank give `costmodel predict` and `costmodel rank`'s answers."""

import json
import subprocess

import pytest

import servesim
from conftest import BUILD

MODEL = "meta-llama/Llama-3.1-8B"


def predict(*args):
    out = subprocess.run([str(BUILD / "tools" / "costmodel"), "predict", "--json", *args],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


@pytest.mark.parametrize("gpu,tp,tokens,decodes,context", [
    ("h200", 1, 512, 8, 1000),
    ("h100", 2, 2048, 0, 0),
    ("a100-80gb", 1, 0, 64, 3000),
])
def test_a_step_costs_what_costmodel_predict_says(gpu, tp, tokens, decodes, context):
    batch = ([(tokens, context)] if tokens else []) + [(0, context)] * decodes
    ours = servesim.step_time(gpu=gpu, model=MODEL, tp=tp, batch=batch)
    cli = predict("--gpu", gpu, "--model", MODEL, "--tp", str(tp), "--tokens", str(tokens),
                  "--decodes", str(decodes), "--context", str(context))
    assert ours["total_ns"] == cli["total_ns"]
    assert ours["breakdown_ns"] == cli["breakdown_ns"]
    assert ours["total_ns"] > 0


def test_more_tokens_cost_more():
    small = servesim.step_time(gpu="h200", model=MODEL, batch=[(256, 0)])
    large = servesim.step_time(gpu="h200", model=MODEL, batch=[(4096, 0)])
    assert large["total_ns"] > small["total_ns"]
    assert large["breakdown_ns"]["gemm"] > small["breakdown_ns"]["gemm"]


def test_bad_batches_and_names_raise_config_error():
    with pytest.raises(servesim.ConfigError, match="batch: the batch is empty"):
        servesim.step_time(gpu="h200", model=MODEL, batch=[])
    with pytest.raises(servesim.ConfigError, match=r"batch\[1\]: a decode"):
        servesim.step_time(gpu="h200", model=MODEL, batch=[(8, 0), (0, 0)])
    with pytest.raises(servesim.ConfigError, match="h201"):
        servesim.step_time(gpu="h201", model=MODEL, batch=[(8, 0)])
    with pytest.raises(servesim.ConfigError, match="cost_model"):
        servesim.step_time(gpu="h200", model=MODEL, batch=[(8, 0)], cost_model="rooflne")


def test_rank_is_costmodel_rank():
    ours = servesim.rank(MODEL, tokens=[64, 1024])
    cli = subprocess.run([str(BUILD / "tools" / "costmodel"), "rank", "--model", MODEL,
                          "--tokens", "64,1024", "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert ours == json.loads(cli)
    assert len(ours["shapes"]) == 2
    with pytest.raises(servesim.ConfigError, match="h201"):
        servesim.rank(MODEL, gpus=["h201"])
