"""The shipped `capture` scenario (docs/contact.md sec. 11): `space-robot-sim capture` exits 0 with its requirements
met and writes the summary keys, the plots and the bag that scripts rely on; a capture goal or a gripper goal that
cannot be carried out is a clear error at load, naming the field.

The full scenario (80 s simulated, ~30 s here) runs once for the module. Its figures are checked against bounds
independent of the run's own requirements: the relative momentum change across the grasp at round-off (1e-12:
RK4 and the impulse solve move ~1e-15 of the momentum; a momentum-transfer bug moves the target's ~20 kg m/s
momentum, ~1e-3 relative), the peak grasp wrench below the controller's limits plus the one control period
before the switch to the joined model, and the loop drift below 1e-9 m / rad (Baumgarte holds it at ~1e-14).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_runtime.cli import sim_main
from space_robot_runtime.run_plots import CAPTURE_PLOT_NAMES, PLOT_NAMES
from space_robot_runtime.run_summary import RunStatus, _requirements
from space_robot_scenario import load_scenario, parse_overrides

CAPTURE_KEYS = ("grasped", "grasp_time_s", "momentum_change_across_grasp", "detumble_time_s", "peak_grasp_force_n",
                "peak_grasp_torque_nm")


@pytest.fixture(scope="module")
def capture_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("capture") / "out"
    code = sim_main(["capture", "--out", str(out), "--overwrite"])
    return code, out, json.loads((out / "summary.json").read_text())


@pytest.mark.slow
def test_capture_runs_and_meets_its_requirements(capture_run):
    code, out, summary = capture_run
    assert code == 0, summary.get("requirements")
    assert summary["complete"]
    assert all(check["met"] for check in summary["requirements"].values()), summary["requirements"]
    assert set(summary["requirements"]) == {"grasped", "max_momentum_change_across_grasp", "max_detumble_time",
                                            "max_peak_grasp_force", "max_peak_grasp_torque"}
    for name in PLOT_NAMES + CAPTURE_PLOT_NAMES:
        assert (out / name).stat().st_size > 0, name
    assert (out / "bag" / "metadata.yaml").is_file()
    recorded = summary["topics"]
    assert recorded["grasp/wrench"]["type"] == "geometry_msgs/msg/WrenchStamped"
    assert recorded["grasp/wrench"]["recorded"]
    assert recorded["grasp/state"]["recorded"] and recorded["grasp/events"]["recorded"] == 1
    # the approach from the standoff in is the controller's Cartesian mode: one goal on the fixture
    assert recorded["cartesian_controller/goal"]["type"] == "geometry_msgs/msg/PoseStamped"
    assert recorded["cartesian_controller/goal"]["recorded"] == 1


@pytest.mark.slow
def test_capture_summary_figures(capture_run):
    _code, _out, s = capture_run
    assert all(key in s for key in CAPTURE_KEYS)
    assert s["grasped"] is True
    controller = load_scenario("capture").controller.capture
    # the gripper closes at 11.55 s (0.5 s publish + 0.05 s start delay + 6 s reach + 1 s follow + 4 s of the
    # Cartesian approach): within the capture envelope then, the grasp is at the first step
    assert 11.5 < s["grasp_time_s"] < 11.6
    assert 0.0 <= s["momentum_change_across_grasp"] < 1e-12
    assert 0.0 < s["detumble_time_s"] < 60.0
    assert 0.0 < s["peak_grasp_force_n"] <= controller.force_limit
    # the torque sits at its limit while the limiter scales the arm's stop: 0.1 % for the control period's lag
    assert 0.0 < s["peak_grasp_torque_nm"] <= controller.torque_limit * 1.001
    capture = s["capture"]
    assert capture["max_drift_position_m"] < 1e-9 and capture["max_drift_angle_rad"] < 1e-9
    assert capture["impact_energy_loss_J"] > 0.0 and not capture["released"]
    assert 0.0 < capture["max_wheel_momentum_Nms"]
    # holding the target, the arm ends where the detumble takes it: an error against the approach's trajectory
    # goal would be a figure without meaning, so there is none, and the notes say why
    assert s["final_goal_error_rad"] is None and s["final_goal_error_per_joint_rad"] is None
    assert any(note.startswith("final goal error: none (the arm holds the target") for note in s["notes"])


@pytest.mark.slow
def test_a_tracking_requirement_on_a_held_target_is_not_evaluated_and_says_why(capture_run):
    _code, _out, s = capture_run
    requirements = dataclasses.replace(load_scenario("capture").evaluation.requirements, final_tracking_error=0.01)
    check = _requirements(s, requirements, RunStatus(requested_duration=80.0, simulated_time=80.0), 6.55)
    tracking = check["final_tracking_error"]
    assert tracking["met"] is None and tracking["value"] is None
    held = f"the arm holds the target from the grasp at {s['grasp_time_s']:.3f} s on"
    assert tracking["not_evaluated_because"] == held


def _written(tmp_path: Path, old: str, new: str) -> Path:
    text = Path("config/scenarios/capture.yaml").read_text()
    assert old in text
    path = tmp_path / "capture_edit.yaml"
    path.write_text(text.replace(old, new))
    return path


@pytest.mark.parametrize("old, new, field, problem", [
    ("    standoff: 0.15                  # m\n", "    standoff: -0.15\n", "goals.capture.standoff", "must be > 0"),
    ("    approach_time: 2.0", "    approach_time: 0.0", "goals.capture.approach_time", "must be > 0"),
    ("    seed_positions: [0.297419, -0.565761, -0.910255, 1.743777, -0.247794, -1.160595, -0.542281]",
     "    seed_positions: [0.3, -0.5]", "goals.capture.seed_positions", "must have 7 entries"),
    ("  capture:                          #", "  gripper: [{at: 1.0, close: maybe}]\n  capture:  #",
     "goals.gripper[0].close", ""),
    ("  detumble_rate: 1.0e-3\n", "  detumble_rate: -1.0e-3\n", "evaluation.detumble_rate", "must be > 0"),
    ("    approach: cartesian\n", "    approach: visual\n", "goals.capture.approach", "must be one of"),
    ("    cartesian_time: 4.0", "    cartesian_time: 0.0", "goals.capture.cartesian_time", "must be > 0"),
])
def test_bad_capture_goals_are_named_at_load(tmp_path, old, new, field, problem):
    with pytest.raises(ConfigError) as info:
        load_scenario(_written(tmp_path, old, new))
    assert info.value.field.endswith(field) and problem in info.value.problem, info.value


def test_the_joint_approach_is_one_set_away():
    """`--set goals.capture.approach=joint` on the shipped scenario: the trajectory to contact instead of the Cartesian
    mode; its cartesian_time is still checked, and unused."""
    goal = load_scenario("capture", parse_overrides(["goals.capture.approach=joint"])).capture_goal
    assert goal.approach == "joint" and goal.cartesian_time == 0.0
    with pytest.raises(ConfigError) as info:
        load_scenario("capture", parse_overrides(["goals.capture.approach=joint", "goals.capture.cartesian_time=-1"]))
    assert info.value.field.endswith("goals.capture.cartesian_time") and "must be > 0" in info.value.problem


def test_the_cartesian_approach_on_a_flexible_arm_is_an_error_at_load():
    with pytest.raises(ConfigError) as info:
        load_scenario("capture", parse_overrides(["model=config/models/servicer_flexible.yaml"]))
    assert info.value.field.endswith("goals.capture.approach") and "use approach: joint" in info.value.problem
    flexible = ["model=config/models/servicer_flexible.yaml", "goals.capture.approach=joint"]
    assert load_scenario("capture", parse_overrides(flexible)).capture_goal.approach == "joint"


def test_a_capture_on_a_model_without_a_grasp_is_an_error_at_load(tmp_path):
    """A gripper or capture goal needs a target to grasp: the model file's `grasp` section."""
    path = _written(tmp_path, "model: config/models/servicer_target.yaml",
                    "model: config/models/servicer_target_pyramid.yaml")
    with pytest.raises(ConfigError) as info:
        load_scenario(path)
    assert info.value.field.endswith("goals.capture") and "no `grasp` section" in info.value.problem


def test_a_grasp_frame_that_does_not_exist_is_an_error_at_load(tmp_path, capsys):
    """The frames are checked when the model is built, before anything runs: exit 2 and the field named."""
    code = sim_main(["capture", "--set", "model.grasp.target_frame=target/handle", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "grasp.target_frame" in err and "no link or frame named 'target/handle'" in err, err
    assert not (tmp_path / "out").exists()


def test_negative_grasp_tolerances_are_an_error_at_load():
    with pytest.raises(ConfigError) as info:
        load_scenario("capture", {"model": {"grasp.tolerances.position": -0.02}})
    assert "grasp.tolerances.position" in info.value.field and "must be > 0" in info.value.problem


# A target tumbling at 3 deg/s about an unfavourable axis, 4 % heavier (capture_robustness campaign, run 13): the
# stack's internal loads need more than the Sawyer wrist's 9 N m (right_j5) from the grasp on. Before the overload
# release, the clipped computed torque let the stack swing the arm about until it whirled at ~100 rad/s, the grasp
# wrench reached 1.9e6 N and momentum drifted by 9 N m s (integration lost); with 10x the effort limits the same run
# detumbles in 57 s within the wrench limits, so it is the arm's limits, not the law.
TOO_FAST = ["--set", "initial_state.target.angular_velocity=[0.004016162513795225, 0.024800300625358512, "
                     "0.046098433027106554]",
            "--set", "model.subtrees.target.xacro_args.mass_scale=1.036693073134756",
            "--set", "model.subtrees.target.xacro_args.inertia_scale_x=1.0872918816463626",
            "--set", "model.subtrees.target.xacro_args.inertia_scale_y=0.9109780304889468",
            "--set", "model.subtrees.target.xacro_args.inertia_scale_z=0.9388266298148036"]


@pytest.mark.slow
def test_a_target_the_arm_cannot_hold_is_released_safely_and_said(tmp_path):
    """The overload watch (controller.yaml capture.overload_*): the gripper opens once the arm has been at an effort
    limit for 0.5 s while holding, or sooner when the grasp wrench passes 1.5x its limits meanwhile; the grasp
    wrench stays within the scenario's limits, the momentum is conserved to the core's bounds (no runaway), and an
    ERROR diagnostic names the joint."""
    out = tmp_path / "out"
    code = sim_main(["capture", *TOO_FAST, "--duration", "14", "--no-plots", "--out", str(out)])
    s = json.loads((out / "summary.json").read_text())
    assert code == 1 and s["complete"] and s["grasped"]          # the detumble requirement is not met
    capture, grasp = s["capture"], s["grasp_time_s"]
    assert capture["released"] and grasp < capture["release_time_s"] < grasp + 1.0
    requirements = load_scenario("capture").evaluation.requirements
    assert s["peak_grasp_force_n"] <= requirements.max_peak_grasp_force
    assert s["peak_grasp_torque_nm"] <= requirements.max_peak_grasp_torque
    assert s["momentum_drift"]["max_angular_kg_m2_s"] < 1e-6 and s["momentum_drift"]["max_linear_kg_m_s"] < 1e-6
    assert s["diagnostics"]["controller: capture"]["ERROR"] > 0
    from rosbags.highlevel import AnyReader
    with AnyReader([out / "bag"]) as reader:
        said = {status.message for c, _t, raw in reader.messages(
            connections=[c for c in reader.connections if c.topic == "diagnostics"])
            for status in reader.deserialize(raw, c.msgtype).status if status.name == "controller: goals"}
    assert any(m.startswith("released the target at") and "'right_j5'" in m for m in said), said
