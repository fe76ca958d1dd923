"""space-robot-sim and space-robot-plot: outputs, exit codes, overrides, bad input, the output directory."""
from __future__ import annotations

import json
import math

import pytest

from space_robot_runtime.cli import EXIT_BAD_INPUT, EXIT_OK, EXIT_REQUIREMENTS, plot_main, sim_main
from space_robot_runtime.output_directory import MARKER
from space_robot_runtime.run_plots import CAPTURE_PLOT_NAMES, PLOT_NAMES

QUIET = ["--no-progress"]


@pytest.fixture(scope="module")
def short_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim") / "run"
    status = sim_main(["servicer_pregrasp", "--duration", "0.3", "--out", str(out)] + QUIET)
    return status, out


@pytest.mark.slow
def test_a_short_run_says_which_requirements_it_could_not_evaluate(short_run, capsys):
    status, out = short_run
    # 0.3 s ends before the trajectory goal's motion (published at 0.5 s, started 0.05 s later, 6 s long): the
    # final requirements cannot be judged, the attitude requirement (over the whole run) can; nothing is
    # unmet, so the exit status is 0
    assert status == EXIT_OK
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["requirements_met"] is None
    assert summary["duration_s"] == pytest.approx(0.3) and summary["simulated_time_s"] == pytest.approx(0.3)
    requirements = summary["requirements"]
    assert requirements["max_attitude_error"]["met"] is True
    for name in ("final_tracking_error", "final_pregrasp_distance", "final_pregrasp_angle"):
        assert requirements[name]["met"] is None
        assert "before the trajectory goal's motion ends (6.550 s)" in requirements[name]["not_evaluated_because"]
    assert (out / "bag" / "metadata.yaml").is_file() and (out / "bag" / "bag.mcap").is_file()
    for name in PLOT_NAMES:
        assert (out / name).stat().st_size > 1000, name
    assert {"real_time_factor", "momentum_drift", "wheel_momentum_Nms", "final_goal_error_rad"} <= set(summary)
    # the model has a gripper nobody uses here: no capture figures, plots or line, a note saying why
    assert "grasped" not in summary and "capture" not in summary
    assert any(n.startswith("capture: none") for n in summary["notes"])
    assert not any((out / name).exists() for name in CAPTURE_PLOT_NAMES)


def test_an_unused_gripper_gets_no_capture_line(tmp_path, capsys):
    assert sim_main(["--duration", "0.1", "--no-plots", "--out", str(tmp_path / "o")] + QUIET) == EXIT_OK
    said = capsys.readouterr().out
    assert "final goal error" in said and "grasped" not in said, said


def test_an_unmet_requirement_exits_1_and_is_named(tmp_path, capsys):
    # an attitude requirement no controller meets: 1e-30 rad over a run in which the arm has started (0.5 s)
    status = sim_main(["--duration", "1.0", "--out", str(tmp_path / "o"), "--no-plots",
                       "--set", "evaluation.requirements.max_attitude_error=1.0e-30"] + QUIET)
    assert status == EXIT_REQUIREMENTS
    assert "requirement max_attitude_error NOT met" in capsys.readouterr().out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["requirements_met"] is False and summary["requirements"]["max_attitude_error"]["met"] is False


@pytest.mark.slow
def test_overwrite_replaces_a_previous_run_and_leaves_nothing_of_it(tmp_path):
    out = tmp_path / "o"
    args = ["--duration", "0.01", "--out", str(out)] + QUIET
    assert sim_main(args) == EXIT_OK
    assert (out / "joint_angles.png").is_file()
    assert sim_main(args + ["--no-plots", "--overwrite", "--duration", "0.02"]) == EXIT_OK
    assert json.loads((out / "summary.json").read_text())["steps"] == 20
    assert not list(out.glob("*.png"))                # no plot of the earlier run left beside the new summary
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o"]     # no staging directory left behind


@pytest.mark.slow
def test_an_earlier_run_is_kept_unless_overwrite_is_given(short_run, capsys):
    _status, out = short_run
    before = (out / "summary.json").read_text()
    assert sim_main(["--duration", "0.01", "--out", str(out)] + QUIET) == EXIT_BAD_INPUT
    assert "pass --overwrite" in capsys.readouterr().err
    assert (out / "summary.json").read_text() == before


@pytest.mark.parametrize("files", [["summary.json"], ["base_attitude.png", "notes.txt"], ["bag/notes.txt"]])
def test_a_directory_the_tool_did_not_write_is_never_replaced(files, tmp_path, capsys):
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("the user's own file")
    for extra in ([], ["--overwrite"]):
        assert sim_main(["--duration", "0.01", "--out", str(tmp_path)] + extra + QUIET) == EXIT_BAD_INPUT
        assert "not written by space-robot-sim" in capsys.readouterr().err
    for name in files:
        assert (tmp_path / name).read_text() == "the user's own file"
    assert not (tmp_path / MARKER).exists()


def test_an_empty_directory_is_used(tmp_path):
    assert sim_main(["--duration", "0.01", "--out", str(tmp_path), "--no-plots"] + QUIET) == EXIT_OK
    assert (tmp_path / "summary.json").is_file() and (tmp_path / MARKER).is_file()


@pytest.mark.slow
def test_plot_rereads_the_bag(short_run, tmp_path, capsys):
    _status, out = short_run
    assert plot_main([str(out / "bag"), "--out", str(tmp_path)]) == 0
    for name in PLOT_NAMES:
        assert (tmp_path / name).is_file()
    printed = json.loads(capsys.readouterr().out.splitlines()[0])
    assert printed["samples"] == 31 and "notes" not in printed


def test_plot_of_a_fixed_base_bag_says_why_it_has_no_attitude(tmp_path, capsys):
    """It printed {"samples": 0, "max_attitude_error_rad": null} and no word."""
    out = tmp_path / "sawyer"
    assert sim_main(["sawyer_lab", "--duration", "0.05", "--out", str(out), "--no-plots"] + QUIET) == EXIT_OK
    capsys.readouterr()
    assert plot_main([str(out / "bag"), "--out", str(tmp_path / "plots")]) == 0
    printed = json.loads(capsys.readouterr().out.splitlines()[0])
    assert printed["max_attitude_error_rad"] is None
    assert "no base odometry" in printed["notes"][0] and "joint_states samples plotted" in printed["notes"][0]


@pytest.mark.parametrize("args, message", [
    (["no_such_scenario"], "no such file"),
    (["no_such_scenario"], "or a thesis study: hubble_adaptive, thesis_force_motion"),     # as --help lists them
    (["--set", "controller.controller.modes=[spin]"], "--set controller.controller.modes=[spin]: controller.modes[0]: "
                                                      "must be one of"),
    (["--set", "gains=3"], "--set gains=3: gains: unknown key"),
    (["--set", "=3"], "is not KEY=VALUE"),
    # checked against the model after loading: it named the scenario file before
    (["--set", "initial_state.target.angular_velocty=[0,0,0.01]"],
     "--set initial_state.target.angular_velocty=[0,0,0.01]: initial_state.target.angular_velocty: unknown key"),
    (["--duration", "0.0005"], "duration: must be a positive whole number of steps"),
    (["--duration", "nan"], "argument --duration: must be a finite number of seconds > 0"),
    (["--duration", "inf"], "argument --duration: must be a finite number of seconds > 0"),
    (["--duration", "-1"], "argument --duration: must be a finite number of seconds > 0"),
    (["--out", "/proc/space_robot_test/x"], "choose a directory you can write"),
    (["--set", "simulation.dt=0.0015"], "nodes.yaml: dynamics.rates.odometry.servicer: 1000 Hz (period 0.001 s"),
    (["--set", "nodes.dynamics.rates.tf=30"], "dynamics.rates.tf: 30 Hz (period 0.0333333 s, timer dynamics.tf) is "
                                              "not a whole number of simulation steps"),
])
def test_bad_input_exits_2_with_the_field_named(args, message, tmp_path, capsys):
    status = cli_status(args + ([] if "--out" in args else ["--out", str(tmp_path / "o")]) + QUIET)
    assert status == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()          # checked before any output exists


def cli_status(args: list[str]) -> int:
    """sim_main's exit status, argparse's usage errors (SystemExit) included."""
    try:
        return sim_main(args)
    except SystemExit as done:
        return int(done.code)


def test_an_unwritable_output_below_a_file_is_bad_input(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert sim_main(["--duration", "0.01", "--out", str(blocker / "run")] + QUIET) == EXIT_BAD_INPUT
    assert f"{blocker} is a file, not a directory" in capsys.readouterr().err


def test_a_binary_scenario_file_is_bad_input(tmp_path, capsys):
    binary = tmp_path / "scenario.yaml"
    binary.write_bytes(bytes(range(256)))
    assert sim_main([str(binary), "--out", str(tmp_path / "o")] + QUIET) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "is not a UTF-8 text file" in err and "Traceback" not in err


def test_help_lists_the_scenarios_and_the_exit_statuses(capsys):
    with pytest.raises(SystemExit) as done:
        sim_main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for text in ("servicer_pregrasp", "sawyer_lab", "exit status:", "130", "143", "internal error"):
        assert text in out


def test_the_fixed_base_arm_writes_strict_json_and_only_the_plots_that_apply(tmp_path):
    out = tmp_path / "o"
    assert sim_main(["sawyer_lab", "--duration", "0.1", "--out", str(out)] + QUIET) == EXIT_OK
    text = (out / "summary.json").read_text()
    summary = json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in summary.json"))
    assert summary["max_attitude_error_rad"] is None and summary["momentum_drift"] is None
    assert summary["max_wheel_speed_fraction"] is None and summary["wheel_momentum_Nms"] == {}
    assert any("momentum drift" in note for note in summary["notes"])
    assert sorted(p.name for p in out.glob("*.png")) == ["joint_angles.png"]


def test_the_final_instant_is_recorded_whatever_the_recording_period(tmp_path):
    out = tmp_path / "o"
    assert sim_main(["--duration", "0.555", "--out", str(out), "--no-plots"] + QUIET) == EXIT_OK
    summary = json.loads((out / "summary.json").read_text())
    assert summary["duration_s"] == pytest.approx(0.555, abs=1e-12)
    # 100 Hz recording: 0, 0.01, ..., 0.55 (56 samples) and the final instant 0.555
    assert summary["topics"]["joint_states"]["recorded"] == 57
    assert math.isclose(summary["simulated_time_s"], 0.555, abs_tol=1e-12)


def test_relative_files_in_a_users_scenario_are_found_next_to_it(tmp_path, capsys):
    import shutil

    from space_robot_dynamics.package_share import resolve

    shutil.copy(resolve("config/models/servicer_target.yaml"), tmp_path / "my_model.yaml")
    text = resolve("config/scenarios/servicer_pregrasp.yaml").read_text()
    (tmp_path / "mine.yaml").write_text(text.replace("model: config/models/servicer_target.yaml",
                                                     "model: my_model.yaml").replace("name: servicer_pregrasp",
                                                                                      "name: mine"))
    assert sim_main([str(tmp_path / "mine.yaml"), "--duration", "0.01", "--out", str(tmp_path / "o"),
                     "--no-plots"] + QUIET) == EXIT_OK
    (tmp_path / "my_model.yaml").unlink()
    assert sim_main([str(tmp_path / "mine.yaml"), "--duration", "0.01", "--out", str(tmp_path / "p")]
                    + QUIET) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert f"no file 'my_model.yaml': looked next to the file ({tmp_path})" in err and "package share" in err


def test_plot_refuses_a_directory_that_is_not_a_bag(tmp_path, capsys):
    assert plot_main([str(tmp_path)]) == 2
    assert "not a rosbag2 directory" in capsys.readouterr().err


@pytest.mark.slow
def test_a_run_written_before_the_marker_existed_is_still_replaced_with_overwrite(tmp_path):
    out = tmp_path / "o"
    assert sim_main(["--duration", "0.01", "--out", str(out), "--no-plots"] + QUIET) == EXIT_OK
    (out / MARKER).unlink()                  # as an earlier version of the tool left it
    assert sim_main(["--duration", "0.01", "--out", str(out), "--no-plots"] + QUIET) == EXIT_BAD_INPUT
    assert sim_main(["--duration", "0.02", "--out", str(out), "--no-plots", "--overwrite"] + QUIET) == EXIT_OK
    assert json.loads((out / "summary.json").read_text())["steps"] == 20
    (out / MARKER).unlink()
    (out / "notes.txt").write_text("mine")   # anything else in it: the user's directory, never replaced
    assert sim_main(["--duration", "0.01", "--out", str(out), "--no-plots", "--overwrite"] + QUIET) == EXIT_BAD_INPUT
    assert (out / "notes.txt").read_text() == "mine"
