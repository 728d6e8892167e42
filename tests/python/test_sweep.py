"""servesim.sweep runs the `sweep` command's study: a 50-point grid in one call."""

import os
import signal
import threading

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


def _interrupt_after(seconds, call):
    """Sends this process SIGINT after `seconds` while `call` runs; returns the KeyboardInterrupt."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            call()
    finally:
        timer.cancel()
    return e.value


def test_ctrl_c_stops_a_sweep_and_leaves_the_runs_done():
    # One thread: the small point runs first and finishes; the long one is cut.
    e = _interrupt_after(1.0, lambda: servesim.sweep(
        CONFIG, vary={"workload.num_requests": [200, 2_000_000]}, threads=1,
        slo={"tbt_p99_ms": 1000}, pick="max:workload.num_requests"))
    r = e.result
    assert not r.complete
    assert [m["workload.num_requests"] for m in r.means] == [200, 2_000_000]
    assert r.points[0]["finished"] == 200
    assert r.points[1]["finished"] is None  # cut short: no result, not a partial one
    assert r.selection["complete"] is False
    assert r.pick["point"] == 0


def test_a_sweep_not_interrupted_is_complete(fifty):
    assert fifty.complete and "complete" not in fifty.selection


def test_ctrl_c_stops_a_plan_and_says_so():
    e = _interrupt_after(1.0, lambda: servesim.plan(
        CONFIG, gpus=["h200"], tp=[1], max_gpus=4, slo={"ttft_p99_ms": 2000},
        overrides={"workload.num_requests": 2_000_000}))
    assert not e.result.complete
    assert e.result.plan["complete"] is False
