"""servesim.sweep runs the `sweep` command's study: a 50-point grid in one call."""

import pytest

import servesim
from conftest import CONFIG

BUDGETS = list(range(128, 128 + 50 * 32, 32))  # 50 chunk sizes


@pytest.fixture(scope="module")
def fifty():
    return servesim.sweep(CONFIG, vary={"scheduler.chunk_size": BUDGETS},
                          overrides={"workload.num_requests": 60},
                          slo={"tbt_p99_ms": [30, 1000]},
                          pick="max:scheduler.chunk_size")


def test_a_sweep_of_fifty_points_runs_in_one_call(fifty):
    assert len(fifty.means) == 50 and len(fifty.points) == 50
    assert [m["scheduler.chunk_size"] for m in fifty.means] == BUDGETS
    assert all(p["finished"] == 60 for p in fifty.points)


def test_a_point_has_the_numbers_simulate_gives(fifty):
    point = fifty.points[7]
    r = servesim.simulate(CONFIG, overrides={"workload.num_requests": 60,
                                             "scheduler.chunk_size": BUDGETS[7]},
                          seed=point["seed"])
    assert point["output_tok_s"] == pytest.approx(
        r.summary["throughput"]["output_tokens_per_s"], rel=1e-12)
    assert point["tbt_p99_ms"] == pytest.approx(r.summary["latency_ms"]["tbt"]["p99"], rel=1e-12)


def test_the_selection_picks_per_slo(fifty):
    settings = fifty.selection["settings"]
    assert len(settings) == 2
    loose = settings[1]
    assert loose["pick"] is not None


def test_the_means_frame_has_the_csv_columns(fifty):
    df = fifty.to_pandas("means")
    assert len(df) == 50
    assert "output_tok_s_mean" in df.columns
    assert str(df["output_tok_s_mean"].dtype) == "float64"
    assert str(df["scheduler.chunk_size"].dtype) == "int64"


def test_a_bad_vary_raises_config_error_before_any_run():
    with pytest.raises(servesim.ConfigError, match="chunk_sise"):
        servesim.sweep(CONFIG, vary={"scheduler.chunk_sise": [256, 512]})
