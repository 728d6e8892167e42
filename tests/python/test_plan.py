"""servesim.plan finds the fleet the `plan` command finds."""

import json
import subprocess

import pytest

import servesim
from conftest import BUILD, CONFIG

ARGS = {"gpus": ["h100", "h200"], "slo": {"ttft_p99_ms": 3000}, "tp": [1], "max_gpus": 4,
        "overrides": {"workload.num_requests": 200}}


@pytest.fixture(scope="module")
def planned():
    return servesim.plan(CONFIG, **ARGS)


def test_the_plan_is_the_commands(planned, tmp_path):
    subprocess.run([str(BUILD / "tools" / "plan"), str(CONFIG), "--gpus", "h100,h200",
                    "--slo", "ttft_p99_ms=3000", "--tp", "1", "--max-gpus", "4",
                    "--set", "workload.num_requests=200", "--out", str(tmp_path), "-q",
                    "--no-plots"], check=True)
    cli = json.loads((tmp_path / "plan.json").read_text())
    assert planned.pick is not None
    assert planned.pick == cli["pick"]
    assert len(planned.points) == len((tmp_path / "points.csv").read_text().splitlines()) - 1


def test_a_plan_without_gpus_raises_config_error():
    with pytest.raises(servesim.ConfigError):
        servesim.plan(CONFIG, **{**ARGS, "gpus": ["h201"]})


def test_bands_pass_through_as_the_command_writes_them(tmp_path):
    banded = servesim.plan(CONFIG, **ARGS, bands=True, band_draws=3)
    subprocess.run([str(BUILD / "tools" / "plan"), str(CONFIG), "--gpus", "h100,h200",
                    "--slo", "ttft_p99_ms=3000", "--tp", "1", "--max-gpus", "4",
                    "--set", "workload.num_requests=200", "--out", str(tmp_path), "-q",
                    "--no-plots", "--bands", "--band-draws", "3"], check=True)
    cli = json.loads((tmp_path / "plan.json").read_text())
    assert banded.plan["bands"]["draws"] == 3
    assert banded.plan["bands"] == cli["bands"]
    with pytest.raises(servesim.ConfigError):
        servesim.plan(CONFIG, **ARGS, bands=True, band_draws=2)


def test_split_passes_through_as_the_command_writes_it(tmp_path):
    split = servesim.plan(CONFIG, **ARGS, split=[1024])
    subprocess.run([str(BUILD / "tools" / "plan"), str(CONFIG), "--gpus", "h100,h200",
                    "--slo", "ttft_p99_ms=3000", "--tp", "1", "--max-gpus", "4",
                    "--set", "workload.num_requests=200", "--out", str(tmp_path), "-q",
                    "--no-plots", "--split", "1024"], check=True)
    cli = json.loads((tmp_path / "split.json").read_text())
    assert split.split is not None
    assert split.split["thresholds"] == cli["thresholds"]
    assert split.split["pick"] == cli["pick"]
    assert servesim.plan(CONFIG, **ARGS).split is None
