"""space-robot-identify: configuration checks, data from CSV files and bags, outputs, determinism.

On seed 003's joint (the `elastic_joint` problem on the test bed's model, a short 4 s window at 25 Hz to keep
the tests fast) and on a short recording of the captured-target manoeuvre made by the runtime
(test_identification_target.py fits it). Bad input exits 2 with one line naming the field; nothing is written.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import yaml

from space_robot_identification.recorded_signals import RecordedSignals
from space_robot_identification.tool.cli import identify_main
from space_robot_identification.tool.recorded_data import read_recording, write_csv_signals

NOISE = 1.0e-3
START = {"joint_1": 0.13089969389957471, "joint_2": -0.2617993877991494, "joint_3": -0.39269908169872414}
ELASTIC = {
    "name": "elastic_joint_cli",
    "description": "seed 003 joint on the test bed's elastic-joint model, short",
    "problem": {"kind": "elastic_joint", "model": "config/models/airbearing_testbed_flexible_joint.yaml",
                "trajectory": {"duration": 10.0, "start": START,
                               "acceleration": {"joint_1": 0.01, "joint_2": 0.01, "joint_3": 0.01}},
                "prescribed": ["joint_2", "joint_3"],
                "signals": {"joint_1.link_angle": {"data": "joint_states.position.joint_1", "weight": 1.0 / NOISE}}},
    "parameters": {"joint_1.motor_inertia": {"start": 1.0, "lower": 0.001, "upper": 100.0},
                   "joint_1.stiffness": {"start": 5.47, "lower": 0.01, "upper": 100.0},
                   "joint_1.damping": {"start": 1.0, "lower": 0.0, "upper": 10.0},
                   "joint_1.spring_offset": {"start": 0.0, "lower": -0.1, "upper": 0.1}},
    "window": {"start": 0.0, "end": 4.0},
    "methods": ["least_squares"],
    "multi_start": {"count": 2, "seed": 5, "spread": 0.2},
    "synthetic_data": {"sample_rate": 25.0,
                       "truth": {"joint_1.motor_inertia": 5.6, "joint_1.stiffness": 8.1, "joint_1.damping": 0.5},
                       "cases": [{"name": "offset", "truth": {"joint_1.spring_offset": 0.0489}}],
                       "noise": {"seeds": [1, 2], "sigma": {"joint_states.position.joint_1": NOISE}}},
    "headline": {"mean_relative_error_k": {"metric": "relative_error", "parameter": "joint_1.stiffness"}},
}


def write_config(tmp_path, data, name="config.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def changed(path_value_pairs):
    data = json.loads(json.dumps(ELASTIC))
    for path, value in path_value_pairs:
        node = data
        keys = path.split("/")
        for key in keys[:-1]:
            node = node[int(key)] if isinstance(node, list) else node[key]
        last = int(keys[-1]) if isinstance(node, list) else keys[-1]
        if value is None:
            del node[last]
        else:
            node[last] = value
    return data


def run(args, capsys):
    status = identify_main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def csv_data(tmp_path, duration=4.0, column="joint_states.position.joint_1"):
    times = np.arange(int(duration * 25) + 1) / 25.0
    signals = RecordedSignals(source="test")
    signals.with_series(column, times, 0.13 + 0.01 * np.sin(times))
    path = tmp_path / "data.csv"
    write_csv_signals(signals, path)
    return path


@pytest.mark.slow
def test_study_writes_strict_json_plots_and_headline(tmp_path, capsys):
    out = tmp_path / "out"
    status, stdout, _ = run([write_config(tmp_path, ELASTIC), "--out", out, "--no-progress"], capsys)
    assert status == 0, stdout
    text = (out / "summary.json").read_text()
    summary = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))
    assert isinstance(summary["mean_relative_error_k"], float) and summary["mean_relative_error_k"] < 0.05
    assert summary["headline_case"] == "offset"
    assert {p for p in summary["plots"]} == {"fit_problem_offset.png", "residuals_problem_offset.png"}
    assert all((out / p).stat().st_size > 0 for p in summary["plots"])
    record = summary["results"][0]
    assert set(record["estimates"]) == set(ELASTIC["parameters"])
    assert record["cost"] <= record["cost_start"]
    assert len(record["correlation"]["matrix"]) == 4 and len(record["starts"]) == 2
    assert len(summary["results"]) == 3               # noise-free + 2 seeds, one method
    assert "mean_relative_error_k" in stdout


def test_multi_start_on_noise_free_datasets_only(tmp_path, capsys):
    """multi_start.datasets: noise_free - the noise-free dataset is fitted from both starts (a spread), the noisy
    one from the configured start only (no spread)."""
    config = write_config(tmp_path, changed([("multi_start/datasets", "noise_free"),
                                             ("synthetic_data/noise/seeds", [1])]))
    status, _, _ = run([config, "--out", tmp_path / "out", "--no-progress", "--no-plots"], capsys)
    assert status == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    clean, noisy = summary["results"]
    assert clean["noise_seed"] is None and len(clean["starts"]) == 2
    assert all(e["multi_start_spread"] is not None for e in clean["estimates"].values())
    assert noisy["noise_seed"] == 1 and len(noisy["starts"]) == 1
    assert all(e["multi_start_spread"] is None for e in noisy["estimates"].values())
    assert summary["multi_start"]["datasets"] == "noise_free"


def test_a_fit_of_the_main_case_that_does_not_converge_exits_1(tmp_path, capsys):
    """Nelder-Mead stopped after 30 evaluations: the outputs are written; one line says how many fits stopped and
    what that means, one per group names them, and the result comes last (the alarms came last before)."""
    config = write_config(tmp_path, changed([("methods", ["nelder_mead"]), ("synthetic_data/noise/seeds", []),
                                             ("multi_start/count", 1),
                                             ("fit", {"nelder_mead": {"max_evaluations": 30}})]))
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-u", "-c", "import sys; from space_robot_identification.tool.cli import "
                           "identify_main; sys.exit(identify_main())", str(config), "--out", str(tmp_path / "out"),
                           "--no-progress", "--no-plots"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=300)                   # one stream, in the order a terminal shows it
    said = done.stdout
    assert done.returncode == 1, said
    assert "1 of 1 fits stopped before converging: their estimates are the last iterate" in said
    assert "the headline case" in said and "is among them (exit status 1)" in said
    assert "nelder_mead (noise seeds noise-free)" in said
    assert said.index("stopped before converging") < said.index("  summary /"), said      # the result last
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["results"][0]["success"] is False and summary["results"][0]["evaluations"] <= 31


@pytest.mark.slow
def test_same_config_same_estimates_bit_for_bit(tmp_path, capsys):
    config = write_config(tmp_path, ELASTIC)
    summaries = []
    for name in ("a", "b"):
        assert run([config, "--out", tmp_path / name, "--no-progress", "--no-plots"], capsys)[0] == 0
        summaries.append(json.loads((tmp_path / name / "summary.json").read_text()))
    for summary in summaries:
        summary.pop("wall_time_s")
    assert summaries[0] == summaries[1]


@pytest.mark.slow
def test_an_earlier_run_is_replaced_only_with_overwrite(tmp_path, capsys):
    config = write_config(tmp_path, changed([("synthetic_data/noise/seeds", [])]))
    out = tmp_path / "out"
    assert run([config, "--out", out, "--no-progress", "--no-plots"], capsys)[0] == 0
    status, _, err = run([config, "--out", out, "--no-progress", "--no-plots"], capsys)
    assert status == 2 and "--overwrite" in err
    assert run([config, "--out", out, "--no-progress", "--no-plots", "--overwrite"], capsys)[0] == 0


@pytest.mark.slow
def test_csv_data_is_fitted_without_truth(tmp_path, capsys):
    times = np.arange(101) / 25.0
    from space_robot_dynamics.config_reader import ConfigReader
    from space_robot_identification.identification_config import read_identification_config
    cfg = read_identification_config(ConfigReader(json.loads(json.dumps(ELASTIC)), "<test>"))
    truth = {"joint_1.motor_inertia": 4.0, "joint_1.stiffness": 6.0, "joint_1.damping": 0.3,
             "joint_1.spring_offset": 0.03}
    signals = RecordedSignals(source="test")
    signals.with_series("joint_states.position.joint_1", times,
                        cfg.problem.simulation.simulate(truth, times)["joint_1.link_angle"])
    write_csv_signals(signals, tmp_path / "data.csv")
    out = tmp_path / "out"
    status, _, _ = run([write_config(tmp_path, ELASTIC), "--data", tmp_path / "data.csv", "--out", out,
                        "--no-progress", "--no-plots"], capsys)
    summary = json.loads((out / "summary.json").read_text())
    assert status == 0
    assert summary["mean_relative_error_k"] is None and summary["data"]["source"].endswith("data.csv")
    estimate = {n: e["value"] for n, e in summary["results"][0]["estimates"].items()}
    assert all(math.isclose(estimate[n], truth[n], rel_tol=1e-8) for n in truth)


@pytest.mark.parametrize(("changes", "field", "words"), [
    ([("parameters/joint_1.stiffness/start", 200.0)], "parameters.joint_1.stiffness.start", "outside the bounds"),
    ([("parameters/joint_1.stiffness/upper", 0.001)], "parameters.joint_1.stiffness.upper", "must be > lower"),
    ([("parameters/joint_1.stifness", {"start": 1.0, "lower": 0.0, "upper": 2.0})], "parameters.joint_1.stifness",
     "unknown parameter"),
    ([("methods", ["simplex"])], "methods[0]", "must be one of"),
    ([("multi_start/datasets", "noisy")], "multi_start.datasets", "must be one of"),
    ([("problem/signals/joint_1.link_anlge", {"data": "x"})], "problem.signals.joint_1.link_anlge", "unknown output"),
    ([("problem/kind", "flexible")], "problem.kind", "must be one of"),
    ([("parameters/joint_1.motor_inertia/lower", 0.0)], "parameters.joint_1.motor_inertia.lower", "must be > 0"),
    ([("parameters/joint_1.damping/lower", -1.0)], "parameters.joint_1.damping.lower", "must be >= 0"),
    ([("window/end", -1.0)], "window.end", "must be >"),
    ([("synthetic_data/cases/0/duration", 2.0)], "synthetic_data.cases[0].duration", "shorter than the window"),
    ([("headline/mean_relative_error_k/parameter", "joint_1.gear_ratio")], "headline.mean_relative_error_k.parameter",
     "not a free parameter"),
    ([("synthetic_data/noise/sigma", {"joint_states.position.joint_9": 1.0})],
     "synthetic_data.noise.sigma.joint_states.position.joint_9", "matches no signal"),
    ([("synthetic_data", None)], "synthetic_data", "give --data"),
    ([("synthetic_data/cases/0/set", ["duration=3"])], "synthetic_data.cases[0].set", "must be a mapping"),
    ([("synthetic_data/cases/0/scenario", "config/scenarios/servicer_pregrasp.yaml")],
     "synthetic_data.cases[0].truth", "give scenario or truth"),
    ([("synthetic_data/cases/0/scenario", "config/scenarios/servicer_pregrasp.yaml"),
      ("synthetic_data/cases/0/truth", None)], "synthetic_data.cases[0].scenario", "cannot read its parameters'"),
])
def test_bad_configs_exit_2_naming_the_field(tmp_path, capsys, changes, field, words):
    out = tmp_path / "out"
    status, stdout, err = run([write_config(tmp_path, changed(changes)), "--out", out, "--no-progress"], capsys)
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"{field}: " in lines[0] and words in lines[0], err
    assert not out.exists() and not list(tmp_path.glob(".out.partial-*"))


@pytest.mark.parametrize(("data", "field", "words"), [
    ("missing_column", "problem.signals.joint_1.link_angle.data", "signal 'joint_states.position.joint_1' is not"),
    ("short", "window.end", "the data ends at 2 s"),
    ("nowhere", "--data", "no such file"),
    ("not_csv", "--data", "give a rosbag2 directory or a .csv file"),
])
def test_bad_data_exits_2_naming_the_field(tmp_path, capsys, data, field, words):
    if data == "missing_column":
        path = csv_data(tmp_path, column="joint_states.position.joint_2")
    elif data == "short":
        path = csv_data(tmp_path, duration=2.0)
    elif data == "nowhere":
        path = tmp_path / "nowhere.csv"
    else:
        path = tmp_path / "data.txt"
        path.write_text("t,a\n0,1\n")
    out = tmp_path / "out"
    status, _, err = run([write_config(tmp_path, ELASTIC), "--data", path, "--out", out, "--no-progress"], capsys)
    assert status == 2 and f"{field}: " in err and words in err, err
    assert not out.exists()


def test_csv_round_trip_is_exact(tmp_path):
    times = np.arange(7) * 0.1
    signals = RecordedSignals(source="test")
    signals.with_series("a.b", times, np.sin(times) * np.pi)
    signals.with_series("c", times, np.exp(times))
    write_csv_signals(signals, tmp_path / "x.csv")
    back = read_recording(tmp_path / "x.csv")
    for name in ("a.b", "c"):
        assert np.array_equal(back.values(name), signals.values(name))
        assert np.array_equal(back.times(name), times - times[0])
