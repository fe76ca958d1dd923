"""`space-robot-sim NAME` for the thesis studies (config/studies, space_robot_runtime/study_run.py): summary.json
with the names scripts rely on, figures, exit status by the requirements, bad input before anything runs."""
import json

import pytest
import yaml

from space_robot_runtime.cli import EXIT_BAD_INPUT, EXIT_OK, sim_main
from space_robot_runtime.study_run import find_study, shipped_studies


def test_shipped_studies_are_found_by_name():
    assert {"thesis_force_motion", "hubble_adaptive"} <= set(shipped_studies())
    assert find_study("servicer_pregrasp") is None          # a scenario, not a study


@pytest.mark.slow
def test_force_motion_study_writes_its_summary_and_figures(tmp_path, capsys):
    out = tmp_path / "fm"
    assert sim_main(["thesis_force_motion", "--duration", "6", "--out", str(out)]) == EXIT_OK
    summary = json.loads((out / "summary.json").read_text())
    assert summary["thesis_settling_time_s"] == 25.0
    assert 4.0 < summary["settling_time_s"] < 6.0
    assert summary["final_force_error_n"] < 0.1 and summary["requirements_met"] is True
    assert {p.name for p in out.glob("*.png")} == {"tracking_errors.png", "contact_force.png", "inputs.png",
                                                     "velocities.png"}
    assert "thesis: 25 s" in capsys.readouterr().out


def test_adaptive_study_cut_short_does_not_judge_its_settling_time_and_exits_0(tmp_path, capsys):
    """2 s is too short to settle, and the 40 s limit lies beyond the run's end: settling_time_s is null, its
    requirement not evaluated (it said NOT met and exited 1 before), requirements_met null, exit status 0."""
    out = tmp_path / "ad"
    assert sim_main(["hubble_adaptive", "--duration", "2", "--out", str(out), "--no-plots"]) == EXIT_OK
    summary = json.loads((out / "summary.json").read_text())
    settling = summary["requirements"]["settling_time_s"]
    assert summary["settling_time_s"] is None and settling["met"] is None and summary["requirements_met"] is None
    assert "run at least that long" in settling["not_evaluated_because"]
    assert "settling_time_s not evaluated" in capsys.readouterr().out
    assert summary["final_parameter_estimates"]["target/target_base_joint.m"]["true"] == 11000.0
    assert summary["requirements"]["max_lyapunov_increase"]["met"] is True


def test_bad_study_input_exits_2_naming_the_field(tmp_path, capsys):
    assert sim_main(["thesis_force_motion", "--set", "gains.kp=1", "--out", str(tmp_path / "a")]) == EXIT_BAD_INPUT
    assert "--set" in capsys.readouterr().err
    data = yaml.safe_load(find_study("thesis_force_motion").read_text())
    data["gains"]["kd"] = -25.0
    data["model"] = str(find_study("thesis_force_motion").parents[2] / "config/models/thesis_6dof.yaml")
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    assert sim_main([str(path), "--out", str(tmp_path / "b")]) == EXIT_BAD_INPUT
    assert "gains.kd" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()


def test_an_interrupted_study_writes_nothing(tmp_path):
    import pytest

    from space_robot_runtime.study_run import StudyInterrupted, find_study, run_study

    class Stop:
        requested = True

    with pytest.raises(StudyInterrupted):
        run_study(find_study("thesis_force_motion"), 1.0, tmp_path / "i", False, False, Stop())
    assert list(tmp_path.iterdir()) == []
