"""The seed 000 study as a shipped scenario (`space-robot-sim seed000_flexible_link`): flexible and rigid arm in one
run, open-loop torques from the scenario player, the differences in summary.json, flexible_modes and the deformed
beam in the bag.

Checked against an independent computation and against what the recording must contain:
- the summary's figures are those of two Simulators stepped directly with the paper's torques, sampled at the same
  instants (the runtime's path through messages, the recorder, the trace and forward kinematics adds nothing:
  agreement to 1e-12 m and rad);
- the paper's statement on the angles holds: base and joint angle differences within a fraction of a degree;
- joint_states carries link 2's tip chain (robot_state_publisher draws the deformed arm from it), flexible_modes
  the modal coordinates, the Marker's free end sits magnification x the tip deflection off the undeformed tip;
  the robot description has the tip chain;
- a comparison run or a torque profile that does not fit is refused at load, naming the field.
The paper's own figures are discussed in docs/flexibility.md sec. 8 (not asserted: it gives no mass model).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import build_model
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_runtime.run_trace import read_bag
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario, parse_overrides
from space_robot_scenario.robot_descriptions import robot_descriptions

DT, DURATION = 1e-3, 5.0


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    scenario = load_scenario("seed000_flexible_link")
    out = tmp_path_factory.mktemp("seed000")
    result = SimulationRun(scenario).run(out_dir=out, plots=True, progress=False)
    return scenario, result


def direct(model_name: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """End effector (world, m), arm joint angles (rad), bus quaternion at every step, from a bare Simulator."""
    system = build_model(model_name)
    sim = Simulator(system, SimulationSettings(dt=DT))
    data, frame = system.model.createData(), system.frame_id("end_effector")
    ee, joints, quats = [], [], []

    def record():
        pin.framesForwardKinematics(system.model, data, sim.state.q)
        ee.append(data.oMf[frame].translation.copy())
        joints.append([system.joint_angle(sim.state.q, n) for n in system.arm_joints])
        quats.append(sim.observe().bases["manipulator"].orientation_xyzw)

    record()
    for k in range(round(DURATION / DT)):
        tau = 0.5 * np.sin(2 * np.pi * (k + 0.5) * DT)
        sim.step([tau, tau])
        record()
    return np.array(ee), np.array(joints), np.array(quats)


@pytest.mark.slow
def test_summary_figures_are_the_direct_computation(run):
    _scenario, result = run
    summary = result.summary
    ee_flex, q_flex, quat_flex = direct("planar_two_link_flexible")
    ee_rigid, q_rigid, quat_rigid = direct("planar_two_link")
    ee_difference = np.linalg.norm(ee_flex - ee_rigid, axis=1).max()
    joint_difference = np.abs(q_flex - q_rigid).max()
    from space_robot_runtime.run_trace import rotation_angle
    base_difference = max(rotation_angle(a, b[None, :])[0] for a, b in zip(quat_flex, quat_rigid))
    assert summary["max_end_effector_difference_m"] == pytest.approx(ee_difference, abs=1e-12)
    assert summary["max_joint_angle_difference_rad"] == pytest.approx(joint_difference, abs=1e-12)
    assert summary["max_base_angle_difference_rad"] == pytest.approx(base_difference, abs=1e-12)
    assert summary["max_tip_deflection_m"] > 1e-3                     # m: the link bends by millimetres
    # the paper: "the differences lay within fraction of degree"
    assert np.degrees(summary["max_joint_angle_difference_rad"]) < 1.0
    assert np.degrees(summary["max_base_angle_difference_rad"]) < 1.0
    assert summary["comparison"]["name"] == "rigid" and summary["comparison"]["complete"]
    names = {p.name for p in result.plots}
    assert {"flexible_modes.png", "comparison.png"} <= names


@pytest.mark.slow
def test_bag_carries_the_deformation(run):
    scenario, result = run
    trace, _info = read_bag(result.bag)
    assert trace.flexible_names == ("link_2/bending_y_1", "link_2/bending_z_1")
    assert "link_2/tip_y" in trace.joint_names and "link_2/tip_rz" in trace.joint_names
    t, positions = trace.joint_positions.arrays()
    _, modal = trace.flexible_positions.arrays()
    tip_y = positions[:, trace.joint_names.index("link_2/tip_y")]
    assert np.allclose(tip_y, modal[:, 0], rtol=0, atol=1e-15)          # one mode: tip deflection = delta (eq. 2)
    assert np.abs(tip_y).max() == pytest.approx(result.summary["max_tip_deflection_m"], rel=1e-12)
    assert result.summary["topics"]["flexible_links/marker"]["recorded"] > 0
    description = robot_descriptions(scenario.model)[0].urdf
    assert 'name="link_2/tip_y"' in description and 'name="link_2/deformed_tip"' in description


def test_marker_magnifies_the_deflection():
    from space_robot_nodes.deformation_marker import DeformationMarkerBuilder
    from space_robot_nodes.message_types import RosbagsMessageTypes

    system = build_model("planar_two_link_flexible")
    q = system.neutral()
    mode = system.flexibility.modal[0]
    q[mode.q] = mode.scale * 1e-3                   # 1 mm tip deflection
    system.coordinates.project(q)
    builder = DeformationMarkerBuilder(RosbagsMessageTypes(), system, "world", 100.0, 16, 0.01)
    points = builder.points(q)
    # the stretched arm along +x from the base centre: link 2's tip at x = 2.5 m, the deflection along +y
    assert points[-1] == pytest.approx([2.5, 0.1, 0.0], abs=1e-12)         # m: 1 mm x 100
    assert points[0] == pytest.approx([1.5, 0.0, 0.0], abs=1e-12)          # the clamped root does not move
    assert len(points) == 2 * 15


@pytest.mark.parametrize("override, field", [
    ("comparison.end_effector_frame=nowhere", "frame"),
    ("torque_profile.sinusoids.arm_joint_9={amplitude: 1, period: 1}", "torque_profile.sinusoids.arm_joint_9"),
    ("controller=config/controller.yaml", "torque_profile"),
])
def test_bad_comparison_or_profile_is_refused(override, field):
    with pytest.raises(ConfigError) as raised:
        SimulationRun(load_scenario("seed000_flexible_link", parse_overrides([override])))
    assert raised.value.field.endswith(field), str(raised.value)
