"""servesim.simulate gives the CLI's numbers, records and errors."""

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

import servesim
from conftest import CONFIG, SMALL, run_cli, set_flags


def without_outputs(summary):
    # The output list differs by design, and the version names the build (the module and the
    # CLI may be built at different commits in a working tree).
    return {k: v for k, v in summary.items() if k not in ("outputs", "servesim_version")}


def test_the_summary_equals_the_clis_summary_json(small_result, cli_summary):
    assert small_result.complete
    assert without_outputs(small_result.summary) == without_outputs(cli_summary)
    assert small_result.summary["requests"]["finished"] == 300


def test_the_records_equal_requests_h5_and_steps_h5(small_result, cli_run):
    import h5py  # tools/dev.sh installs python3-h5py
    for table in ("requests", "steps"):
        with h5py.File(cli_run / f"{table}.h5", "r") as f:
            stored = f[table][()]
        ours = getattr(small_result, table)
        assert ours.dtype.names == stored.dtype.names
        assert len(ours) == len(stored) > 0
        for name in ours.dtype.names:
            assert ours.dtype[name] == stored.dtype[name], name
            np.testing.assert_array_equal(ours[name], stored[name], err_msg=name)


def test_the_schema_is_the_hdf5_files_units(small_result, cli_run):
    import h5py  # tools/dev.sh installs python3-h5py
    for table in ("requests", "steps"):
        with h5py.File(cli_run / f"{table}.h5", "r") as f:
            units = f[table].attrs["units"]
        units = units.decode() if isinstance(units, bytes) else units
        ours = "; ".join(f"{n}: {u}" for n, _, u, _ in servesim.schema()[table] if u)
        assert ours == units


def test_out_writes_the_clis_files(tmp_path, small_result):
    r = servesim.simulate(CONFIG, overrides=SMALL, seed=7, out=tmp_path / "run")
    assert (tmp_path / "run" / "requests.h5").exists()
    assert r.summary["outputs"]["dir"] == str(tmp_path / "run")
    assert without_outputs(r.summary) == without_outputs(small_result.summary)


def test_a_dict_config_as_it_ran_reruns_the_same(small_result):
    again = servesim.simulate(small_result.config)
    assert again.summary["requests"] == small_result.summary["requests"]
    assert again.summary["latency_ms"] == small_result.summary["latency_ms"]
    np.testing.assert_array_equal(again.requests, small_result.requests)


def test_overrides_take_numbers_lists_and_booleans(small_result):
    r = servesim.simulate(CONFIG, seed=7, overrides={
        **SMALL, "scheduler.chunk_size": 1024, "slo.ttft_ms": 1500.5,
        "replicas": [{"gpu": "h200", "tp": 1, "count": 2}]})
    cfg = r.config
    assert cfg["scheduler"]["chunk_size"] == "1024" or cfg["scheduler"]["chunk_size"] == 1024
    assert float(cfg["slo"]["ttft_ms"]) == 1500.5
    assert set(r.requests["replica"]) == {0, 1}
    assert r.summary["requests"]["finished"] == 300


def test_the_dataframes_have_the_schemas_columns_and_dtypes(small_result):
    for table in ("requests", "steps"):
        df = small_result.to_pandas(table)
        fields = servesim.schema()[table]
        assert list(df.columns) == [name for name, _, _, _ in fields]
        assert [str(t) for t in df.dtypes] == [
            {"<i4": "int32", "<i8": "int64", "<f8": "float64"}[t] for _, t, _, _ in fields]
        assert df.attrs["units"]["start_ns" if table == "steps" else "ttft_ns"] == "ns"
        assert len(df) == len(getattr(small_result, table))
    with pytest.raises(ValueError):
        small_result.to_pandas("tokens")


def test_a_bad_key_in_a_file_raises_the_clis_message(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIG.read_text().replace("chunk_size: 512", "chunk_sise: 512")
                   .replace("../data/", str(CONFIG.parent.parent / "data") + "/"))
    with pytest.raises(servesim.ConfigError) as e:
        servesim.simulate(bad)
    message = str(e.value)
    assert message.startswith(f"{bad}:10:3: ")
    assert "chunk_size" in message  # the closest known key
    cli = run_cli(bad, "--quiet", check=False)
    assert cli.returncode == 1
    assert message in cli.stderr
    assert isinstance(e.value, ValueError)


def test_a_bad_override_names_the_override():
    with pytest.raises(servesim.ConfigError, match=r"^overrides scheduler\.chunk_size=lots: "):
        servesim.simulate(CONFIG, overrides={"scheduler.chunk_size": "lots"})


def test_a_bad_dict_names_its_line(small_result):
    cfg = dict(small_result.config)
    cfg["router"] = {"kind": "round_robbin"}
    with pytest.raises(servesim.ConfigError, match=r"^config dict:\d+:\d+: .*round_robin"):
        servesim.simulate(cfg)


def test_values_python_cannot_state_in_yaml_raise_type_error():
    with pytest.raises(TypeError, match="workload.seed_obj"):
        servesim.simulate({"workload": {"seed_obj": object()}})
    with pytest.raises(TypeError):
        servesim.simulate(42)


def test_an_exception_from_progress_stops_the_run_with_a_partial_result():
    calls = []

    def progress(done, total, sim_s):
        calls.append((done, total, sim_s))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as e:
        servesim.simulate(CONFIG, overrides={"workload.num_requests": 20000}, progress=progress)
    r = e.value.result
    assert len(calls) == 1 and calls[0][1] == 20000
    assert not r.complete
    done = r.summary["requests"]["finished"] + r.summary["requests"]["rejected"]
    assert 0 < done < 20000
    assert len(r.requests) == done
    assert np.all(np.diff(r.requests["id"]) > 0)


def test_sigint_raises_keyboard_interrupt_with_a_partial_result():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            servesim.simulate(CONFIG, overrides={"workload.num_requests": 2_000_000})
    finally:
        timer.cancel()
    assert not e.value.result.complete
    assert len(e.value.result.requests) < 2_000_000


def test_the_gil_is_released_while_it_runs():
    done = threading.Event()

    def run():
        servesim.simulate(CONFIG, overrides={"workload.num_requests": 20000})
        done.set()

    t = threading.Thread(target=run)
    started = time.monotonic()
    t.start()
    ticks = 0
    while not done.is_set() and t.is_alive():
        ticks += 1
        time.sleep(0.001)
    t.join()
    elapsed = time.monotonic() - started
    # With the GIL held this thread would wake only between runs' progress calls.
    assert ticks > min(50, elapsed * 200), (ticks, elapsed)


def test_the_catalog_lists_the_shipped_gpus_and_models():
    cat = servesim.catalog()
    assert any(g.lower() == "h200" for g in cat["gpus"])
    assert "meta-llama/Llama-3.1-8B" in cat["models"]


def test_sensitivity_gives_the_clis_gains(tmp_path):
    r = servesim.simulate(CONFIG, overrides=SMALL, seed=7, sensitivity=2)
    run_cli(CONFIG, *set_flags(SMALL), "--seed", 7, "--sensitivity", 2, "--out", tmp_path,
            "--quiet")
    cli = json.loads((tmp_path / "summary.json").read_text())
    assert r.summary["sensitivity"] == cli["sensitivity"]
    assert r.summary["sensitivity"]["gain"]["ttft"]["p99"] is not None
    with pytest.raises(ValueError, match="sensitivity"):
        servesim.simulate(CONFIG, sensitivity=80)


def test_a_speculative_run_has_the_speculative_columns():
    config = CONFIG.parent / "h100_speculative_llama3_8b.yaml"
    r = servesim.simulate(config, overrides={"workload.num_requests": 60})
    names = [name for name, _, _, _ in servesim.schema(speculative=True)["requests"]]
    assert list(r.requests.dtype.names) == names
    assert names[-2:] == ["spec_steps", "spec_accepted_tokens"]
    spec = r.summary["speculative"]
    assert int(r.requests["spec_steps"].sum()) == spec["verify_steps"]
    assert int(r.requests["spec_accepted_tokens"].sum()) == spec["accepted_tokens"]
    assert r.to_pandas().attrs["units"]["spec_accepted_tokens"] == "tokens"
