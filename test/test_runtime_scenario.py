"""The default scenario end to end in the standalone runtime: the arm reaches the pre-grasp pose while the
wheels hold the bus attitude, within the requirements the scenario states (and justifies); with the wheels
off the same motion turns the bus. Also the bench-Sawyer scenario (no wheels, fixed base)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario

DEFAULT = "config/scenarios/servicer_pregrasp.yaml"
WHEELS_OFF = {"controller": {"controller.modes": ["joint_tracking"]}}


@pytest.fixture(scope="module")
def scenario():
    return load_scenario(DEFAULT)


@pytest.fixture(scope="module")
def wheels_on(scenario, servicer_target):
    return SimulationRun(scenario, servicer_target).run(progress=False).summary


@pytest.fixture(scope="module")
def wheels_off(servicer_target):
    return SimulationRun(load_scenario(DEFAULT, WHEELS_OFF), servicer_target).run(progress=False).summary


def test_the_pregrasp_goal_is_what_the_scenario_says(scenario, servicer_target):
    """FK of the goal joint angles at the initial bus pose puts right_hand 0.15 m out of the grapple fixture,
    pointing into it (the scenario file's claim, checked with Pinocchio frame placements)."""
    system = servicer_target
    q, _ = scenario.initial_state(system)
    for name, angle in zip(scenario.trajectory_goal.joint_names, scenario.trajectory_goal.points[-1][1]):
        system.set_joint_angle(q, name, angle)
    data = system.model.createData()
    pin.framesForwardKinematics(system.model, data, q)
    hand = data.oMf[system.model.getFrameId("right_hand")]
    grapple = data.oMf[system.model.getFrameId("target/grapple_frame")]
    ev = scenario.evaluation
    pregrasp = grapple.translation + ev.standoff * grapple.rotation @ np.array(ev.grapple_axis)
    assert hand.translation == pytest.approx(pregrasp, abs=1e-5)                        # IK solved to 1e-12
    assert hand.rotation @ np.array(ev.approach_axis) == pytest.approx(-grapple.rotation[:, 0], abs=1e-5)
    low, high = system.model.lowerPositionLimit, system.model.upperPositionLimit
    inside = [(low[system.q_slice(n)][0] < a < high[system.q_slice(n)][0])
              for n, a in zip(scenario.trajectory_goal.joint_names, scenario.trajectory_goal.points[-1][1])]
    assert all(inside)


@pytest.mark.slow
def test_default_scenario_meets_its_requirements(wheels_on):
    s = wheels_on
    assert s["requirements_met"], s["requirements"]
    assert s["duration_s"] == pytest.approx(8.0)
    # No external force acts: total momentum stays at its initial zero (RK4 round-off; 1e-9 N s is ~1e-11 of
    # the momentum the arm carries at its peak, so a leak would show).
    assert s["momentum_drift"]["max_linear_kg_m_s"] < 1e-9 and s["momentum_drift"]["max_angular_kg_m2_s"] < 1e-9
    for name, counts in s["diagnostics"].items():
        assert set(counts) == {"OK"}, (name, counts)           # no WARN/ERROR anywhere in a nominal run
    assert 0.0 < s["max_wheel_speed_fraction"] < 1.0


@pytest.mark.slow
def test_without_wheels_the_arm_turns_the_bus(wheels_on, wheels_off, scenario):
    limit = scenario.evaluation.requirements.max_attitude_error
    assert wheels_off["max_attitude_error_rad"] > limit                    # the requirement fails
    assert wheels_off["max_attitude_error_rad"] > 1e3 * wheels_on["max_attitude_error_rad"]
    assert wheels_off["final_goal_error_rad"] < 1e-4                      # the arm still reaches its joint goal
    assert wheels_off["pregrasp"]["distance_m"] > 3 * wheels_on["pregrasp"]["distance_m"]
    assert max(abs(h) for h in wheels_off["wheel_momentum_Nms"].values()) < 1e-3
    # the setpoint goes to a controller whose attitude mode is off: rejected and reported, not fatal
    assert wheels_off["diagnostics"]["controller: goals"].get("ERROR", 0) == 1


def test_bench_sawyer_scenario_tracks_without_wheels_or_floating_base():
    scenario = load_scenario("config/scenarios/sawyer_lab.yaml")
    system = SystemModel(scenario.model)
    assert system.model.gravity.linear.tolist() == [0.0, 0.0, 0.0]       # Intera compensates gravity
    s = SimulationRun(scenario, system).run(duration=3.5, progress=False).summary
    assert s["final_goal_error_rad"] < 1e-4 and s["max_attitude_error_rad"] is None
    assert "holonomy_monitor: holonomy" not in s["diagnostics"]


@pytest.mark.parametrize("override, field", [({"dynamics.rates.state": 500.0}, "dynamics.rates.state"),
                                             ({"dynamics.rates.odometry.servicer": 100.0},
                                              "dynamics.rates.odometry.servicer")])
def test_state_topics_slower_than_the_controller_are_rejected(override, field):
    """The controller needs a new joint state and bus odometry every period; the free-drifting target's
    odometry may be slower (config/nodes.yaml publishes it at 100 Hz)."""
    from space_robot_dynamics.errors import ConfigError

    with pytest.raises(ConfigError, match=field.replace(".", r"\.") + ": .* below the controller's rate"):
        load_scenario(DEFAULT, {"nodes": override})
    assert load_scenario(DEFAULT).nodes.dynamics.odometry_rates["target"] < load_scenario(DEFAULT).controller.rate


def test_a_scenario_goal_naming_an_unknown_joint_is_rejected_at_load(tmp_path):
    """A typo in the scenario's own trajectory is a configuration error naming the field, not a run whose goal
    the controller refuses half-way."""
    from pathlib import Path

    from space_robot_dynamics.errors import ConfigError

    text = Path(DEFAULT).read_text().replace("joint_names: [right_j0,", "joint_names: [right_jX,")
    assert "right_jX" in text
    (tmp_path / "typo.yaml").write_text(text)     # its config/ paths resolve in the package share
    with pytest.raises(ConfigError, match=r"goals\.trajectory\.joint_names: unknown arm joints \['right_jX'\]"):
        load_scenario(tmp_path / "typo.yaml")
