"""The one rule for requirement verdicts (space_robot_runtime/requirement_verdicts.py), and that the scenario and
study paths follow it: a time limit beyond a short run's end is not evaluated, never failed."""
import json

import pytest

from space_robot_runtime.cli import EXIT_OK, sim_main
from space_robot_runtime.requirement_verdicts import overall, unreached_time_limit


@pytest.mark.parametrize(("verdicts", "expected"), [
    ([True, True], True), ([True, None], None), ([None, False, True], False), ([], True)])
def test_requirements_met_is_false_if_any_failed_else_null_if_any_not_evaluated(verdicts, expected):
    assert overall(verdicts) is expected


def test_a_time_limit_not_reached_fails_only_when_the_run_lasted_until_its_end():
    met, why = unreached_time_limit(60.0, 11.5, 20.0, "detumbled")       # a 20 s run, the grasp at 11.5 s
    assert met is None and "71.500 s" in why and "run at least that long" in why
    assert unreached_time_limit(60.0, 11.5, 71.5, "detumbled") == (False, None)
    assert unreached_time_limit(40.0, 0.0, 45.0, "settled") == (False, None)


def test_a_short_scenario_run_leaves_its_settling_time_unjudged_and_exits_0(tmp_path, capsys):
    """hubble_adaptive_graph --duration 2 said `settling_time_s NOT met: none reached > limit 40` and exited 1."""
    out = tmp_path / "short"
    status = sim_main(["hubble_adaptive_graph", "--duration", "2", "--out", str(out), "--no-plots"])
    said = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    settling = summary["requirements"]["settling_time_s"]
    assert settling["met"] is None and "before the limit's end at 40.000 s" in settling["not_evaluated_because"]
    assert "NOT met" not in said and "settling_time_s not evaluated" in said
    assert summary["requirements_met"] is None and status == EXIT_OK


def test_a_capture_cut_short_after_the_grasp_leaves_its_detumble_time_unjudged():
    """capture --duration 20 said `max_detumble_time NOT met: none reached > limit 60 (from the grasp)` and exited 1,
    8.5 s after the grasp; the limit's end is counted from the grasp."""
    from types import SimpleNamespace

    from space_robot_runtime.run_summary import RunStatus, _requirements

    limits = dict.fromkeys(("final_tracking_error", "max_attitude_error", "final_pregrasp_distance",
                            "final_pregrasp_angle", "grasped", "max_momentum_change_across_grasp",
                            "max_peak_grasp_force", "max_peak_grasp_torque"))
    summary = {"final_goal_error_rad": None, "max_attitude_error_rad": 0.01,
               "pregrasp": {"distance_m": 0.0, "angle_rad": 0.0}, "grasped": True, "grasp_time_s": 11.5,
               "momentum_change_across_grasp": 1e-9, "detumble_time_s": None, "peak_grasp_force_n": 10.0,
               "peak_grasp_torque_nm": 1.0, "capture": {"released": False}}

    def detumble(run_end):
        req = SimpleNamespace(**limits, max_detumble_time=60.0)
        return _requirements(summary, req, RunStatus(run_end, simulated_time=run_end), None)["max_detumble_time"]
    short = detumble(20.0)
    assert short["met"] is None and "71.500 s" in short["not_evaluated_because"]
    assert detumble(80.0)["met"] is False             # lasted past grasp + 60 s and still tumbling: not met
    summary["capture"]["released"] = True
    assert detumble(20.0)["met"] is False             # let go of the target: never detumbled by this grasp
