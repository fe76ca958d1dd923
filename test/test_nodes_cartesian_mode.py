"""The controller node's Cartesian approach mode (docs/controllers.md sec. 1) in the lockstep graph: a PoseStamped
goal in the target's
grapple frame switches the arm to the generalized-Jacobian controller and the hand reaches the drifting fixture; a
joint trajectory switches back; bad goals and force setpoints are ERROR diagnostics that change nothing.

The hand's pose relative to the fixture is measured on the simulator's own state (Pinocchio's forward kinematics of
the dynamics node's model), not on what the controller reports.
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
from graph_probe import TopicProbe
from grasp_states import drifting, fixture_at_hand

from space_robot_control.controller_config import load_controller_config
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_nodes import conversions as cv
from space_robot_nodes.controller_core import ControllerCore
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_scenario import load_scenario

TYPES = RosbagsMessageTypes()
DT = 1e-3
START_OFFSET = (0.03, -0.02, 0.01)        # m, world: where the fixture starts from the hand's goal
# 6 s is 6 time constants of the 1/s pose loop: 3.7 cm of initial error shrinks to ~0.1 mm; the fixture drifts at
# ~2 mrad/s, so the rate-loop lag (1/20 s) adds ~0.1 mm (measured at 6 s: 0.14 mm, 0.12 mrad). 1 mm and 2 mrad leave
# room for the wheels saturating in the first second.
POSITION_BOUND, ANGLE_BOUND = 1e-3, 2e-3


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("servicer_pregrasp")


def hand_in_fixture(system, q):
    model, data = system.model, system.model.createData()
    pin.framesForwardKinematics(model, data, q)
    return data.oMf[model.getFrameId("target/grapple_frame")].actInv(data.oMf[model.getFrameId("right_hand")])


def pose_stamped(frame: str, placement: pin.SE3, position=None):
    p = placement.translation if position is None else position
    return cv.pose_stamped(TYPES, 0.0, frame, p, pin.Quaternion(placement.rotation).coeffs())


def graph_with(system, scenario, q, v, listen):
    graph = Graph(DT)
    nodes = scenario.nodes
    sim = Simulator(system, SimulationSettings(dt=DT), q, v)
    graph.add(DynamicsCore(TYPES, sim, nodes.dynamics))
    controller = graph.add(ControllerCore(TYPES, ServicerController(system, load_controller_config(
        "config/controller.yaml")), nodes.controller))
    probe = graph.add(TopicProbe(TYPES, {nodes.controller.diagnostics: cv.DIAGNOSTIC_ARRAY},
                                 {topic: msgtype for topic, msgtype in listen.items()}))
    return graph, sim, controller, probe


def statuses(probe, topic, name):
    return [s for m in probe.heard[topic] for s in m.status if s.name == name]


@pytest.mark.slow
def test_a_cartesian_goal_in_the_fixture_frame_brings_the_hand_there(servicer_target, scenario):
    system, ctl = servicer_target, scenario.nodes.controller
    goal = hand_in_fixture(system, fixture_at_hand(system))          # the hand on the fixture, as grasped
    q = fixture_at_hand(system, offset=START_OFFSET)
    v = drifting(system, np.random.default_rng(3), arm_rate=0.0, base_rate=(0.0, 0.0), target_rate=(0.001, 0.002))
    graph, sim, controller, probe = graph_with(system, scenario, q, v, {ctl.cartesian_goal: cv.POSE_STAMPED,
                                                                        ctl.trajectory: cv.JOINT_TRAJECTORY})
    start = hand_in_fixture(system, sim.state.q)
    assert np.linalg.norm((goal.actInv(start)).translation) > 0.03          # the test starts away from the goal
    probe.script(at=0.01, topic=ctl.cartesian_goal, message=pose_stamped("target/grapple_frame", goal))
    graph.run_ticks(6000)
    error = goal.actInv(hand_in_fixture(system, sim.state.q))
    assert controller.cartesian_active
    assert np.linalg.norm(error.translation) < POSITION_BOUND, error
    assert np.linalg.norm(pin.log3(error.rotation)) < ANGLE_BOUND, error
    cartesian = statuses(probe, ctl.diagnostics, "controller: cartesian")
    assert cartesian[0].message.startswith("inactive") and cartesian[-1].message.startswith("tracking")
    # a joint trajectory takes the arm back to joint space (holding where it is)
    model = system.model
    arm = [float(sim.state.q[model.joints[model.getJointId(n)].idx_q]) for n in system.arm_joints]
    hold = TYPES.make(cv.JOINT_TRAJECTORY, header=cv.header(TYPES, 0.0, ""), joint_names=list(system.arm_joints),
                      points=[TYPES.make("trajectory_msgs/msg/JointTrajectoryPoint", positions=arm, velocities=[],
                                         accelerations=[], effort=[],
                                         time_from_start=TYPES.make("builtin_interfaces/msg/Duration", sec=1,
                                                                    nanosec=0))])
    probe.script(at=6.01, topic=ctl.trajectory, message=hold)
    graph.run_ticks(300)
    assert not controller.cartesian_active
    assert statuses(probe, ctl.diagnostics, "controller: cartesian")[-1].message.startswith("inactive")


@pytest.mark.parametrize("frame, position, field", [
    ("target/no_such_frame", (0.0, 0.0, 0.0), "header.frame_id"),
    ("world", (math.nan, 0.0, 0.0), "pose.position"),
])
def test_a_bad_cartesian_goal_is_an_error_and_changes_nothing(servicer_target, scenario, frame, position, field):
    system, ctl = servicer_target, scenario.nodes.controller
    q, v = scenario.initial_state(system)
    graph, sim, controller, probe = graph_with(system, scenario, q, v, {ctl.cartesian_goal: cv.POSE_STAMPED,
                                                                        ctl.force_setpoint: cv.WRENCH_STAMPED})
    probe.script(at=0.01, topic=ctl.cartesian_goal, message=pose_stamped(frame, pin.SE3.Identity(), position))
    nan_force = cv.wrench_stamped(TYPES, 0.0, "right_hand", [math.nan, 0.0, 0.0], [0.0, 0.0, 0.0])
    probe.script(at=0.02, topic=ctl.force_setpoint, message=nan_force)
    graph.run_ticks(200)
    assert not controller.cartesian_active and controller.updates > 100
    goals = statuses(probe, ctl.diagnostics, "controller: contact goals")
    errors = [s.message for s in goals if s.level == cv.ERROR]
    assert any(f"{ctl.cartesian_goal}.{field}" in m for m in errors), errors
    assert any(f"{ctl.force_setpoint}.wrench.force" in m for m in errors), errors
    assert np.isfinite(sim.state.q).all()


def test_a_flexible_arm_has_no_cartesian_mode_and_says_so(scenario):
    """The resolved-rate law computes rigid joint torques: on the flexible servicer (elastic joints, flexible links)
    it does not converge, so the node has no Cartesian mode there and a goal is an ERROR, not a slow failure."""
    from space_robot_dynamics import build_model

    system = build_model("config/models/servicer_flexible.yaml")
    core = ControllerCore(TYPES, ServicerController(system, load_controller_config("config/controller.yaml")),
                          scenario.nodes.controller)
    assert core.cartesian is None
    core.on_cartesian_goal(pose_stamped("world", pin.SE3.Identity()))
    assert not core.cartesian_active and core.contact_goals.rejected == 1
    level, text = core.contact_goals.events[-1]
    assert level == cv.ERROR and "no Cartesian mode" in text
