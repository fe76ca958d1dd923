"""Dynamics node core in the lockstep graph: published topics, frame conventions, command safety.

The frame check is independent of the code under test: the base twist published in the child frame is
compared with finite differences of the published world-frame poses.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from graph_probe import TopicProbe
from scipy.spatial.transform import Rotation

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import build_model
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_nodes import conversions as cv
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_scenario.node_config import load_nodes_config

TYPES = RosbagsMessageTypes()
DT = 1e-3
NODES = load_nodes_config("config/nodes.yaml")
DYN = NODES.dynamics
LISTEN = {DYN.joint_states: cv.JOINT_STATE, "base/odom": cv.ODOMETRY, "target/odom": cv.ODOMETRY,
          DYN.tf: cv.TF_MESSAGE, DYN.clock: cv.CLOCK, DYN.momentum_linear: cv.VECTOR3_STAMPED,
          DYN.momentum_angular: cv.VECTOR3_STAMPED, DYN.diagnostics: cv.DIAGNOSTIC_ARRAY}
COMMANDS = {DYN.arm_command: cv.FLOAT64_MULTI_ARRAY, DYN.wheel_command: cv.FLOAT64_MULTI_ARRAY}


def build(system, v0=None, listen=LISTEN, publish=None):
    q0 = system.neutral()
    sim = Simulator(system, SimulationSettings(dt=DT), q0, v0)
    graph = Graph(DT)
    dynamics = graph.add(DynamicsCore(TYPES, sim, DYN))
    probe = graph.add(TopicProbe(TYPES, listen, publish))
    return graph, dynamics, probe


def statuses(probe, name):
    return [s for msg in probe.heard[DYN.diagnostics] for s in msg.status if s.name == name]


def test_topics_types_and_fields(servicer_target):
    system = servicer_target
    graph, _dynamics, probe = build(system)
    graph.run_ticks(21)                                        # t = 0 ... 0.020 s
    js = probe.last(DYN.joint_states)
    assert list(js.name) == list(system.arm_joints + system.wheel_joints)
    assert len(js.position) == len(js.velocity) == len(js.effort) == 10
    assert len(probe.heard[DYN.joint_states]) == 21            # 1 kHz
    assert len(probe.heard["target/odom"]) == 3                # 100 Hz (config)
    odom = probe.last("base/odom")
    assert (odom.header.frame_id, odom.child_frame_id) == ("world", "base_link")
    assert probe.last("target/odom").child_frame_id == "target/base_link"
    tf = probe.last(DYN.tf)
    assert {(t.header.frame_id, t.child_frame_id) for t in tf.transforms} == \
        {("world", "base_link"), ("world", "target/base_link")}
    clock = probe.last(DYN.clock)
    assert cv.seconds(clock.clock) == pytest.approx(0.020, abs=1e-12)
    assert cv.seconds(js.header.stamp) == pytest.approx(0.020, abs=1e-12)
    assert probe.last(DYN.momentum_angular).header.frame_id == "world"
    names = {s.name for msg in probe.heard[DYN.diagnostics] for s in msg.status}
    # servicer_target has a grasp section: its contacts are reported too (docs/contact.md sec. 10)
    assert names == {"dynamics: arm_command", "dynamics: wheel_command", "dynamics: simulation", "dynamics: contact"}


def test_odometry_twist_is_in_the_child_frame(servicer_target):
    """v and w published in base_link agree with finite differences of the world-frame pose (rotated in)."""
    system = servicer_target
    v0 = np.zeros(system.nv)
    vs = system.v_slice(system.subtrees[0].config.root_joint_name)
    v0[vs] = [0.05, -0.02, 0.01, 0.1, -0.2, 0.3]            # tumbling and drifting bus, base-link frame
    graph, _dynamics, probe = build(system, v0, listen={"base/odom": cv.ODOMETRY})
    graph.run_ticks(301)
    odoms = probe.heard["base/odom"]
    k = 200
    before, now, after = odoms[k - 1], odoms[k], odoms[k + 1]

    def pose(msg):
        p = msg.pose.pose
        return cv.xyz_of(p.position), Rotation.from_quat(cv.xyzw_of(p.orientation))

    (p0, r0), (_p1, r1), (p2, r2) = pose(before), pose(now), pose(after)
    linear_world = (p2 - p0) / (2 * DT)
    # body angular velocity: R(t)^T dR/dt = [w]x, central difference through the rotation vector
    angular_body = (r1.inv() * r2).as_rotvec() / (2 * DT) + (r0.inv() * r1).as_rotvec() / (2 * DT)
    twist = now.twist.twist
    # central differences: error ~ |w|^2 |v| dt^2 ~ 1e-8; 1e-6 leaves margin and still catches a frame mix-up
    # (world vs body differ by |w| * 3 s ~ 1 rad of rotation here)
    assert cv.xyz_of(twist.linear) == pytest.approx(r1.inv().apply(linear_world), abs=1e-6)
    assert cv.xyz_of(twist.angular) == pytest.approx(angular_body, abs=1e-6)
    assert abs(Rotation.from_quat(cv.xyzw_of(now.pose.pose.orientation)).magnitude()) > 0.05


def test_bad_commands_are_rejected_and_the_last_valid_one_is_kept(servicer_target):
    system = servicer_target
    graph, dynamics, probe = build(system, publish=COMMANDS)
    good = np.array([1.0, -1.0, 0.5, -0.5, 0.2, -0.2, 0.1])
    arm = DYN.arm_command
    probe.script(0.0, arm, lambda t: cv.float64_multi_array(TYPES, good), until=0.010)
    probe.script(0.011, arm, lambda t: cv.float64_multi_array(TYPES, good[:5]), until=0.020)          # short
    probe.script(0.021, arm, lambda t: cv.float64_multi_array(TYPES, np.r_[good[:6], np.nan]), until=0.030)
    probe.script(0.0, DYN.wheel_command, lambda t: cv.float64_multi_array(TYPES, [0.01, 0.0, -0.01]),
                 until=0.030)
    graph.run_ticks(31)
    efforts = np.array([np.asarray(m.effort)[:7] for m in probe.heard[DYN.joint_states]])
    assert np.array_equal(efforts[-1], good)                  # still the last valid command at t = 30 ms
    assert dynamics.arm_input.rejected == 20 and dynamics.arm_input.accepted == 11
    assert cv.level_of(statuses(probe, "dynamics: arm_command")[-1]) == cv.OK     # the t = 0 report
    graph.run_ticks(70)                                        # to the next 10 Hz report, t = 0.1 s
    report = statuses(probe, "dynamics: arm_command")[-1]
    assert cv.level_of(report) == cv.ERROR
    assert "arm_command: non-finite values at indices [6]" in report.message
    assert graph.now() == pytest.approx(0.101) and dynamics.sim.state.t == pytest.approx(0.101)


def test_command_timeout_means_zero_torque_and_is_reported(servicer_target):
    system = servicer_target
    graph, dynamics, probe = build(system, publish=COMMANDS)
    command = np.full(7, 0.5)
    probe.script(0.0, DYN.arm_command, lambda t: cv.float64_multi_array(TYPES, command), until=0.100)
    graph.run_ticks(201)
    times = np.array(probe.times[DYN.joint_states])
    efforts = np.array([np.asarray(m.effort)[:7] for m in probe.heard[DYN.joint_states]])
    # effort reported at t is what acted over [t - dt, t]; the last command arrived at 0.100 s
    timeout = DYN.command_timeout
    held = (times > 0.0) & (times <= 0.100 + timeout + 1e-9)
    zero = times > 0.100 + timeout + DT + 1e-9
    assert np.all(efforts[held] == 0.5) and np.all(efforts[zero] == 0.0)
    last = statuses(probe, "dynamics: arm_command")[-1]
    assert cv.level_of(last) == cv.ERROR and "zero torque" in last.message
    assert dynamics.arm_input.timeouts == 1
    wheel = statuses(probe, "dynamics: wheel_command")[-1]
    assert cv.level_of(wheel) == cv.WARN and "no command received yet" in wheel.message


def test_applied_effort_is_after_the_actuator_limits(servicer_target):
    system = servicer_target
    graph, _dynamics, probe = build(system, publish=COMMANDS)
    limits = system.arm_effort_limit
    probe.script(0.0, DYN.arm_command, lambda t: cv.float64_multi_array(TYPES, 2 * limits), until=0.01)
    probe.script(0.0, DYN.wheel_command, lambda t: cv.float64_multi_array(TYPES, [1.0, -1.0, 0.0]), until=0.01)
    graph.run_ticks(5)
    effort = np.asarray(probe.last(DYN.joint_states).effort)
    assert effort[:7] == pytest.approx(limits)                 # URDF effort limits
    assert effort[7:] == pytest.approx([0.2, -0.2, 0.0])       # reaction_wheels.max_torque


@pytest.mark.parametrize("model", ["config/models/sawyer_airbearing.yaml", "config/models/airbearing_testbed.yaml",
                                   "config/models/servicer_target.yaml"])
def test_state_survives_the_messages_for_every_base_joint(model):
    """(q, v) -> published odometry/joint_states (Pinocchio frame kinematics, mount included) -> StateAssembler
    -> (q, v) again, for spherical (mounted 0.9 m up), planar and free-flyer bases."""
    from space_robot_dynamics.model.model_config import load_model_config
    from space_robot_dynamics.model.system_model import SystemModel
    from space_robot_nodes.robot_state import BaseKinematics, StateAssembler, floating_subtrees

    system = SystemModel(load_model_config(model))
    rng = np.random.default_rng(3)
    q = pin.integrate(system.model, system.neutral(), 0.5 * rng.normal(size=system.nv))   # a generic pose
    v = rng.normal(size=system.nv)
    names = list(system.actuated_joint_names())
    assembler = StateAssembler(system, "world", tuple(names))
    angles = [system.joint_angle(q, n) for n in names]
    rates = [v[system.v_index(n)] for n in names]
    assembler.take_joint_state(cv.joint_state(TYPES, 0.0, names, angles, rates, np.zeros(len(names))), 0.0)
    bases = BaseKinematics(system)
    for subtree in floating_subtrees(system):
        base = bases.compute_one(subtree, q, v)
        msg = cv.odometry(TYPES, 0.0, "world", subtree.base_link, base.position, base.orientation_xyzw,
                          base.linear_velocity, base.angular_velocity)
        assembler.take_odometry(subtree.name, msg, 0.0, "odom")
    assert assembler.ready
    assert pin.difference(system.model, q, assembler.q) == pytest.approx(np.zeros(system.nv), abs=1e-12)
    assert assembler.v == pytest.approx(v, abs=1e-12)


@pytest.mark.parametrize(("flexible_step", "expected"), [
    pytest.param("compiled", ("compiled", None), marks=pytest.mark.compiled_step),
    ("python", ("python", "simulation.flexible_step is 'python'"))])
def test_diagnostics_say_which_flexible_step_runs(flexible_step, expected):
    """docs/flexibility.md sec. 12: the compiled step on the flexible servicer, the reason when it does not run."""
    system = build_model(load_model_config("config/models/servicer_flexible.yaml"))
    graph = Graph(DT)
    graph.add(DynamicsCore(TYPES, Simulator(system, SimulationSettings(dt=DT, flexible_step=flexible_step)), DYN))
    probe = graph.add(TopicProbe(TYPES, LISTEN, None))
    graph.run_ticks(2)
    values = {v.key: v.value for v in statuses(probe, "dynamics: simulation")[-1].values}
    assert (values["flexible_step"], values.get("flexible_step_not_compiled_because")) == expected
