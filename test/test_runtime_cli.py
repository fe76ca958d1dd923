"""space-robot-sim and space-robot-plot: outputs, exit codes, overrides, bad input."""
from __future__ import annotations

import json

import pytest

from space_robot_runtime.cli import plot_main, sim_main
from space_robot_runtime.run_plots import PLOT_NAMES


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    status = sim_main(["servicer_pregrasp", "--duration", "0.3", "--out", str(out), "--no-progress"])
    return status, out


def test_sim_writes_bag_summary_and_plots(short_run, capsys):
    status, out = short_run
    # 0.3 s is before the arm reaches its goal: the run works and says the requirements are not met
    assert status == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["requirements_met"] is False and summary["duration_s"] == pytest.approx(0.3)
    assert summary["requirements"]["max_attitude_error"]["met"] is True
    assert (out / "bag" / "metadata.yaml").is_file() and (out / "bag" / "bag.mcap").is_file()
    for name in PLOT_NAMES:
        assert (out / name).stat().st_size > 1000, name
    assert {"real_time_factor", "momentum_drift", "wheel_momentum_Nms", "final_goal_error_rad"} <= set(summary)


def test_overwrite_replaces_a_previous_run(tmp_path):
    args = ["--duration", "0.01", "--out", str(tmp_path), "--no-progress", "--no-plots"]
    assert sim_main(args) == 1 and sim_main(args + ["--overwrite"]) == 1
    assert json.loads((tmp_path / "summary.json").read_text())["steps"] == 10


def test_plot_rereads_the_bag(short_run, tmp_path, capsys):
    _status, out = short_run
    assert plot_main([str(out / "bag"), "--out", str(tmp_path)]) == 0
    for name in PLOT_NAMES:
        assert (tmp_path / name).is_file()
    printed = json.loads(capsys.readouterr().out.splitlines()[0])
    assert printed["samples"] == 31


def test_existing_output_is_not_overwritten_unless_asked(short_run, tmp_path, capsys):
    _status, out = short_run
    assert sim_main(["--duration", "0.01", "--out", str(out), "--no-progress"]) == 2
    assert "exists" in capsys.readouterr().err
    foreign = tmp_path / "bag"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("not ours")
    assert sim_main(["--duration", "0.01", "--out", str(tmp_path), "--no-progress", "--overwrite"]) == 2
    assert (foreign / "notes.txt").is_file()                 # --overwrite only replaces our own bags


@pytest.mark.parametrize("args, message", [
    (["no_such_scenario"], "no such file"),
    (["--set", "controller.controller.modes=[spin]"], "controller.modes[0]: must be one of"),
    (["--set", "gains=3"], "FILE.KEY=VALUE"),
    (["--duration", "0.0005"], "duration: must be a positive whole number of steps"),
])
def test_bad_input_exits_2_with_the_field_named(args, message, tmp_path, capsys):
    assert sim_main(args + ["--out", str(tmp_path / "o"), "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_plot_refuses_a_directory_that_is_not_a_bag(tmp_path, capsys):
    assert plot_main([str(tmp_path)]) == 2
    assert "not a rosbag2 directory" in capsys.readouterr().err
