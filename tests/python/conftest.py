"""Shared fixtures: the repository, the build's `simulate`, and a small run of both."""

import json
import os
import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("SERVESIM_BUILD_DIR", REPO / "build"))
CONFIG = REPO / "configs" / "h200_sarathi.yaml"
# A run small enough for every test: 300 requests at the config's rate.
SMALL = {"workload.num_requests": 300}


def run_cli(*args, check=True):
    """Runs build/tools/simulate with `args`; returns the CompletedProcess."""
    return subprocess.run([str(BUILD / "tools" / "simulate"), *map(str, args)],
                          capture_output=True, text=True, check=check)


def set_flags(overrides):
    return [a for k, v in overrides.items() for a in ("--set", f"{k}={v}")]


@pytest.fixture(scope="session")
def cli_run(tmp_path_factory):
    """The CLI's output folder for CONFIG with SMALL and --seed 7."""
    out = tmp_path_factory.mktemp("cli")
    run_cli(CONFIG, *set_flags(SMALL), "--seed", 7, "--out", out, "--quiet")
    return out


@pytest.fixture(scope="session")
def cli_summary(cli_run):
    return json.loads((cli_run / "summary.json").read_text())


@pytest.fixture(scope="session")
def small_result():
    import servesim

    return servesim.simulate(str(CONFIG), overrides=SMALL, seed=7)
