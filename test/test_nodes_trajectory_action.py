"""FollowJointTrajectory goals (space_robot_nodes.trajectory_execution) on the simulated servicer in the lockstep
graph (dynamics + controller cores, 1 kHz): success within the goal tolerance, the two tolerance aborts and
the arm's stop, preemption by a goal or the topic, cancel, rejections naming the field; then the rclpy glue
(space_robot_nodes.ros.trajectory_action_server) against a stand-in of rclpy.action and control_msgs.

The stand-in models the goal handle's state machine and a Future a coroutine awaits; not rclpy's executor (when
the execute coroutine resumes), the action's services and topics over DDS, nor shutdown: the real action server
and client are tested under ROS 2 Humble in test/ros2/test_simulation_graph.py.

Goals are submitted between control periods, as an rclpy executor delivers them between timer callbacks.
"""
from __future__ import annotations

import copy
import dataclasses
import enum
import math
import sys
import types as pytypes

import numpy as np
import pytest
from graph_probe import TopicProbe

from space_robot_control.controller_config import load_controller_config
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.config_reader import ConfigReader, load_yaml_file
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_nodes import conversions as cv
from space_robot_nodes import trajectory_execution as te
from space_robot_nodes.controller_core import ControllerCore
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_nodes.ros import trajectory_action_server as glue
from space_robot_nodes.trajectory_execution import JointTolerance, TrajectoryActionGoal, TrajectoryFeedback
from space_robot_scenario.node_config import apply_overrides, load_nodes_config, read_nodes_config

TYPES = RosbagsMessageTypes()
DT = 1e-3
NODES = load_nodes_config("config/nodes.yaml")
CTL = NODES.controller
WN = 10.0                       # rad/s, config/controller.yaml joint_tracking.natural_frequency (read below)
STOWED = [0.0, -1.2, 0.0, 2.2, 0.0, 0.6, 0.0]          # the demo scenario's start: clear of limits
MOVE = np.array([0.3, 0.2, 0.0, -0.4, 0.0, 0.3, 0.0])   # rad, a motion of four joints


@pytest.fixture(scope="module")
def controller_config():
    config = load_controller_config("config/controller.yaml")
    assert config.joint_tracking.natural_frequency == WN and config.joint_tracking.damping_ratio == 1.0
    return config


class Rig:
    """Dynamics and controller cores in one graph, a probe that can publish on the trajectory topic, and
    every event of the controller's TrajectoryExecution with the time and simulated state it came at."""

    def __init__(self, system, config, action=None):
        self.system = system
        self.graph = Graph(DT)
        q0 = system.neutral()
        for name, angle in zip(system.arm_joints, STOWED):
            system.set_joint_angle(q0, name, angle)
        self.sim = Simulator(system, SimulationSettings(dt=DT), q0)
        self.dynamics = self.graph.add(DynamicsCore(TYPES, self.sim, NODES.dynamics))
        self.probe = self.graph.add(TopicProbe(TYPES, publish={CTL.trajectory: cv.JOINT_TRAJECTORY}))
        nodes = CTL if action is None else dataclasses.replace(CTL, trajectory_action=action)
        self.core = self.graph.add(ControllerCore(TYPES, ServicerController(system, config), nodes))
        self.execution = self.core.trajectory_action
        self.events = []          # (t, event, arm positions, arm velocities) with the state at t
        self.execution.connect(self._record)
        self.joints = list(system.arm_joints)
        self._q = np.array([system.model.joints[system.joint_id(n)].idx_q for n in self.joints])
        self._v = np.array([system.v_index(n) for n in self.joints])

    def _record(self, event):
        # during the control phase: the simulator has not stepped yet, its state is the one at graph.now()
        self.events.append((self.graph.now(), event, self.arm(), self.sim.state.v[self._v].copy()))

    def arm(self) -> np.ndarray:
        return self.sim.state.q[self._q].copy()

    def run(self, seconds: float) -> None:
        self.graph.run_ticks(round(seconds / DT))

    def goal(self, move=MOVE, duration=1.0, **fields) -> TrajectoryActionGoal:
        return TrajectoryActionGoal(self.joints, [(self.arm() + move, None, None, duration)], **fields)

    def results(self):
        return [(t, e, q, v) for t, e, q, v in self.events if isinstance(e, te.TrajectoryResult)]

    def feedback(self):
        return [(t, e, q, v) for t, e, q, v in self.events if isinstance(e, TrajectoryFeedback)]

    def last_update(self) -> float:
        return self.graph.now() - DT


def tolerances(names, position=0.0, velocity=0.0, acceleration=0.0):
    return [JointTolerance(n, position, velocity, acceleration) for n in names]


# ---- execution in the closed loop ---------------------------------------------------------------------
def test_goal_succeeds_at_its_end_time_within_the_goal_tolerance(servicer_target, controller_config):
    rig = Rig(servicer_target, controller_config)
    rig.run(0.010)
    target = rig.arm() + MOVE
    tight = 1e-4          # rad: above the 2-3e-5 rad tracking error of this motion, below the default 0.01
    assert rig.execution.submit("a", rig.goal(goal_tolerance=tolerances(rig.joints, tight))) is None
    end = rig.last_update() + 1.0     # the trajectory starts from the state of the last update
    rig.run(1.2)
    (t, result, q, v), = rig.results()
    assert (result.status, result.error_code) == (te.SUCCEEDED, te.SUCCESSFUL)
    assert end - 1e-9 <= t < end + DT          # the first update at or after the end time
    assert np.max(np.abs(q - target)) <= tight
    assert np.max(np.abs(v)) <= CTL.trajectory_action.default_goal_tolerance.velocity    # the default applies
    assert np.max(np.abs(q - target)) > 1e-7    # what the next test's tolerance asks for is not met here
    assert not rig.execution.active and "goal reached" in result.error_string

    feedback = rig.feedback()
    stamps = np.array([t for t, *_ in feedback])
    assert stamps[0] == pytest.approx(end - 1.0 + DT)          # at the first update of the goal
    assert np.allclose(np.diff(stamps), 1.0 / CTL.trajectory_action.feedback_rate, atol=1e-9)
    for t, fb, q, v in feedback:
        assert fb.stamp == t and fb.joint_names == tuple(rig.joints)
        assert np.array_equal(fb.actual_positions, q) and np.array_equal(fb.actual_velocities, v)   # measured
        assert np.array_equal(fb.error_positions, fb.desired_positions - q)
        assert np.array_equal(fb.error_velocities, fb.desired_velocities - v)
    # the desired motion is the commanded one: from rest to rest in T = 1 s, the minimum-jerk quintic
    # start + MOVE (10 s^3 - 15 s^4 + 6 s^5), s = (t - t0) / T (1e-9 rad: the start velocity is measured, ~0)
    for t, fb, *_ in feedback:
        s = min((t - (end - 1.0)) / 1.0, 1.0)
        assert np.allclose(fb.desired_positions, target - MOVE + MOVE * (10 * s**3 - 15 * s**4 + 6 * s**5),
                           rtol=0.0, atol=1e-9)


def test_a_goal_tolerance_tighter_than_the_tracking_aborts_and_holds(servicer_target, controller_config):
    rig = Rig(servicer_target, controller_config)
    rig.run(0.010)
    goal = rig.goal(goal_tolerance=tolerances(rig.joints, 1e-7), goal_time_tolerance=0.05)
    assert rig.execution.submit("a", goal) is None
    end = rig.last_update() + 1.0
    rig.run(1.2)
    (t, result, q, _v), = rig.results()
    assert (result.status, result.error_code) == (te.ABORTED, te.GOAL_TOLERANCE_VIOLATED)
    # the first update past end + goal_time_tolerance (which one that is on the 1 ms grid is up to rounding)
    assert end + 0.05 - 1e-9 <= t <= end + 0.05 + DT + 1e-9
    assert "position error" in result.error_string and "exceeds 1e-07 rad" in result.error_string
    assert any(n in result.error_string for n in rig.joints)
    # the controller holds the position measured at the abort, not the trajectory's last point
    reference = rig.core.controller.follower.sample(rig.graph.now())
    assert np.array_equal(reference.positions, q) and not reference.active
    assert not rig.core.output.trajectory_active


def test_path_tolerance_violation_aborts_and_the_arm_stops_where_it_was(servicer_target, controller_config):
    rig = Rig(servicer_target, controller_config)
    rig.run(0.010)
    target = rig.arm() + MOVE
    # 1e-5 rad is exceeded as the motion gathers speed (tracking error 2-3e-5 rad at the peak)
    assert rig.execution.submit("a", rig.goal(duration=1.5, path_tolerance=tolerances(rig.joints, 1e-5))) is None
    end = rig.last_update() + 1.5
    path = []                                     # (time, arm positions) at every tick
    for _ in range(1400):
        rig.graph.run_ticks(1)
        path.append((rig.graph.now(), rig.arm()))
    (t, result, q_abort, v_abort), = rig.results()
    assert (result.status, result.error_code) == (te.ABORTED, te.PATH_TOLERANCE_VIOLATED)
    assert t < end and "path tolerance violated" in result.error_string and "exceeds 1e-05 rad" in result.error_string
    # Computed torque makes each joint's error e = q_hold - q obey e'' + 2 wn e' + wn^2 e = 0. The hold starts
    # one control period d after the state it holds (that period's torque still followed the trajectory), so
    # e(0) = -v0 d, e'(0) = -v0 and q - q_hold = v0 (d + (1 + wn d) t) exp(-wn t): the arm overshoots by
    # v0 (d + 1/wn) exp(-1 / (1 + wn d)) at t = 1 / (wn (1 + wn d)), then returns to where it was.
    after = np.array([q for s, q in path if s > t + DT / 2]) - q_abort
    assert len(after) > 1200                     # 1.2 s after the abort
    moving = np.abs(v_abort) > 1e-2
    assert moving.sum() >= 3                     # the abort came mid-motion
    d = DT
    predicted = np.abs(v_abort[moving]) * (d + 1.0 / WN) * math.exp(-1.0 / (1.0 + WN * d))
    peak = np.abs(after[:, moving]).max(axis=0)
    # 2 %: the zero-order hold's half-period delay and the 1 kHz discretisation of 100 ms dynamics (~1 %)
    assert np.allclose(peak, predicted, rtol=0.02), (peak, predicted)
    assert np.max(np.abs(after[-1])) < 1e-6      # back at the held position (decay bound 3e-7 rad at 1.2 s)
    assert np.min(np.abs(after[-1] + q_abort - target)[moving]) > 0.1     # nowhere near the goal


def test_a_new_goal_or_a_topic_trajectory_preempts_the_active_goal(servicer_target, controller_config):
    rig = Rig(servicer_target, controller_config)
    rig.run(0.010)
    assert rig.execution.submit("a", rig.goal(duration=1.5)) is None
    rig.run(0.3)
    assert rig.execution.submit("b", rig.goal(move=-MOVE / 2, duration=1.0)) is None
    (t, first, *_), = rig.results()
    assert t == rig.graph.now() and first.goal_id == "a"           # at once, not at the next update
    assert (first.status, first.error_code) == (te.ABORTED, te.INVALID_GOAL)
    assert "preempted by a new FollowJointTrajectory goal" in first.error_string
    assert rig.execution.goal_id == "b"

    # a malformed trajectory on the topic is rejected and preempts nothing; a valid one preempts goal b
    now = rig.graph.now()
    bad = rig.joints[:6] + ["right_j7"]
    rig.probe.script(now + 0.1, CTL.trajectory, cv.joint_trajectory(TYPES, 0.0, bad, [(1.0, np.zeros(7))]))
    goal = rig.arm() - MOVE / 4
    rig.probe.script(now + 0.2, CTL.trajectory, cv.joint_trajectory(TYPES, 0.0, rig.joints, [(1.0, goal)]))
    rig.run(0.15)
    assert len(rig.results()) == 1 and rig.execution.goal_id == "b"
    rig.run(0.1)
    (t, second, *_), = rig.results()[1:]
    assert second.goal_id == "b" and (second.status, second.error_code) == (te.ABORTED, te.INVALID_GOAL)
    assert f"preempted by a trajectory on {CTL.trajectory}" in second.error_string
    assert t == pytest.approx(now + 0.2) and not rig.execution.active
    rig.run(1.5)
    assert np.max(np.abs(rig.arm() - goal)) < 1e-5            # the topic's trajectory is followed
    assert len(rig.results()) == 2


def test_cancel_holds_the_measured_position(servicer_target, controller_config):
    rig = Rig(servicer_target, controller_config)
    rig.run(0.010)
    target = rig.arm() + MOVE
    assert rig.execution.submit("a", rig.goal()) is None
    rig.run(0.5)
    assert rig.execution.cancel("someone else's") is False and rig.execution.active
    held = rig.core.state.q[rig._q].copy()           # the state of the last update, which the hold takes
    assert rig.execution.cancel("a") is True
    (_t, result, *_), = rig.results()
    assert (result.goal_id, result.status, result.error_code) == ("a", te.CANCELED, te.SUCCESSFUL)
    assert "canceled" in result.error_string and not rig.execution.active
    assert rig.execution.cancel("a") is False
    reference = rig.core.controller.follower.sample(rig.graph.now())
    assert np.array_equal(reference.positions, held) and not reference.active
    rig.run(1.5)
    assert np.max(np.abs(rig.arm() - held)) < 1e-5 and np.max(np.abs(rig.sim.state.v[rig._v])) < 1e-4
    assert np.min(np.abs(rig.arm() - target)[MOVE != 0]) > 0.09     # stopped half way (MOVE / 2 >= 0.1 rad)


def test_a_goal_ends_when_the_controller_loses_its_state(servicer_target, controller_config):
    """joint_states stop (a driver gone): after state_timeout the controller publishes nothing and the goal is
    aborted at that control period, not left waiting; with the state back the arm holds where it was."""
    rig = Rig(servicer_target, controller_config)
    rig.run(0.010)
    assert rig.execution.submit("a", rig.goal()) is None
    rig.run(0.3)
    held = rig.core.state.q[rig._q].copy()
    attached_wanted = rig.dynamics.wanted
    rig.dynamics.wanted = lambda topic: topic != NODES.dynamics.joint_states and attached_wanted(topic)
    last_state = rig.last_update()                 # the last joint_states arrived for this update
    rig.run(0.2)
    (t, result, *_), = rig.results()
    assert (result.status, result.error_code) == (te.ABORTED, te.PATH_TOLERANCE_VIOLATED)
    assert "lost its state" in result.error_string and "state_timeout" in result.error_string
    # the first period whose state is older than state_timeout (messages are stamped on arrival)
    assert last_state + CTL.state_timeout < t <= last_state + CTL.state_timeout + DT + 1e-9
    rig.dynamics.wanted = attached_wanted
    rig.run(1.5)
    assert np.max(np.abs(rig.arm() - held)) < 0.05      # held near the last measured pose (the arm coasted
    assert np.max(np.abs(rig.sim.state.v[rig._v])) < 1e-3   # with zero torque meanwhile), and at rest


def test_invalid_goals_are_rejected_naming_the_field_and_the_active_goal_goes_on(servicer_target,
                                                                                   controller_config):
    rig = Rig(servicer_target, controller_config)
    names = list(servicer_target.arm_joints)
    # before the first control update there is no measured state to start from
    early = rig.execution.submit("early", rig.goal())
    assert (early.status, early.error_code) == (te.REJECTED, te.INVALID_GOAL)
    assert "no measured state yet" in early.error_string
    rig.run(0.010)
    assert rig.execution.submit("a", rig.goal()) is None
    rig.run(0.05)
    here = rig.arm()
    point = [(here + 0.1, None, None, 1.0)]
    nan = here.copy()
    nan[2] = np.nan
    cases = [
        (dict(joint_names=names[:6] + ["right_j7"]), te.INVALID_JOINTS, "joint_names[6]: unknown joint 'right_j7'"),
        (dict(joint_names=names[:6], points=[(here[:6], None, None, 1.0)]), te.INVALID_JOINTS, "missing joints"),
        (dict(joint_names=names + names[:1], points=[(np.r_[here, 0.0], None, None, 1.0)]), te.INVALID_JOINTS,
         "duplicate joint"),
        (dict(points=[(here[:6], None, None, 1.0)]), te.INVALID_GOAL, "points[0].positions: expected 7 values"),
        (dict(points=[(here, np.zeros(5), None, 1.0)]), te.INVALID_GOAL, "points[0].velocities: expected 7"),
        (dict(points=[(nan, None, None, 1.0)]), te.INVALID_GOAL, "points[0].positions: non-finite values at "
                                                                  "indices [2]"),
        (dict(points=[(here + 0.1, None, None, 1.0), (here, None, None, 1.0)]), te.INVALID_GOAL,
         "points[1].time_from_start: must be >"),
        (dict(points=[(here + [0, 0, 0, 5.0, 0, 0, 0], None, None, 1.0)]), te.INVALID_GOAL,
         "points[0].positions: right_j3"),
        (dict(path_tolerance=[JointTolerance("right_j9", 0.1)]), te.INVALID_JOINTS,
         "path_tolerance[0].name: unknown joint 'right_j9'"),
        (dict(goal_tolerance=tolerances(["right_j1", "right_j1"], 0.1)), te.INVALID_JOINTS,
         "goal_tolerance[1].name: duplicate joint"),
        (dict(goal_tolerance=[JointTolerance("right_j1", -2.0)]), te.INVALID_GOAL,
         "goal_tolerance[0].position: must be > 0 (the tolerance), 0 (the default) or -1 (no limit), got -2.0"),
        (dict(path_tolerance=[JointTolerance("right_j1", 0.1, math.nan)]), te.INVALID_GOAL,
         "path_tolerance[0].velocity: must be > 0"),
        (dict(path_tolerance=[JointTolerance("right_j1", 0.1, 0.0, 1.0)]), te.INVALID_GOAL,
         "path_tolerance[0].acceleration: cannot be checked"),
        (dict(goal_time_tolerance=-0.5), te.INVALID_GOAL, "goal_time_tolerance: must be > 0"),
        (dict(goal_time_tolerance="soon"), te.INVALID_GOAL, "goal_time_tolerance: must be a number"),
    ]
    for fields, code, text in cases:
        goal = dataclasses.replace(TrajectoryActionGoal(names, point), **fields)
        rejection = rig.execution.submit("bad", goal)
        assert rejection is not None, fields
        assert (rejection.goal_id, rejection.status, rejection.error_code) == ("bad", te.REJECTED, code), fields
        assert text in rejection.error_string, (text, rejection.error_string)
        assert rig.execution.goal_id == "a"
    assert "FollowJointTrajectory goal rejected" in rig.core.last_goal_message
    rig.run(1.0)
    (_t, result, *_), = rig.results()            # goal a was neither preempted nor disturbed
    assert (result.goal_id, result.status) == ("a", te.SUCCEEDED)


def test_tolerance_special_values_zero_keeps_the_default_minus_one_removes_it(servicer_target,
                                                                               controller_config):
    strict = dataclasses.replace(CTL.trajectory_action, feedback_rate=1000.0,
                                 default_goal_tolerance=dataclasses.replace(
                                     CTL.trajectory_action.default_goal_tolerance, position=1e-9),
                                 default_goal_time_tolerance=0.02)
    outcomes = {}
    joints = list(servicer_target.arm_joints)
    for label, fields in [("default", dict(goal_tolerance=tolerances(["right_j0"], 0.0))),
                          ("removed", dict(goal_tolerance=tolerances(joints, -1.0, -1.0))),
                          ("no time limit", dict(goal_time_tolerance=-1.0))]:
        rig = Rig(servicer_target, controller_config, action=strict)
        rig.run(0.010)
        assert rig.execution.submit(label, rig.goal(move=MOVE / 3, duration=0.8, **fields)) is None
        assert "followed as commanded" in rig.core.last_goal_message        # not time-scaled: ends at 0.8 s
        end = rig.last_update() + 0.8
        rig.run(1.0)
        # time after the end, in whole control periods (on the grid, 20 ms is 20 or 21 periods up to rounding)
        outcomes[label] = [(round((t - end) / DT), r.status, r.error_code) for t, r, *_ in rig.results()]
        if label == "removed":                 # feedback_rate at the control rate: one per update
            stamps = [t for t, *_ in rig.feedback()]
            assert np.allclose(np.diff(stamps), DT) and len(stamps) == round((end - stamps[0]) / DT) + 1
    (periods, *default), = outcomes.pop("default")
    assert periods in (20, 21) and default == [te.ABORTED, te.GOAL_TOLERANCE_VIOLATED]
    assert outcomes == {"removed": [(0, te.SUCCEEDED, te.SUCCESSFUL)],
                        "no time limit": []}                 # still waiting for 1e-9 rad, 0.2 s after the end


# ---- configuration -----------------------------------------------------------------------------------
@pytest.mark.parametrize("key, value, field", [
    ("feedback_rate", 0.0, "controller.trajectory_action.feedback_rate"),
    ("default_goal_tolerance", {"position": -0.01}, "controller.trajectory_action.default_goal_tolerance.position"),
    ("default_path_tolerance", {"velocity": math.inf}, "controller.trajectory_action.default_path_tolerance.velocity"),
    ("default_path_tolerance", {"effort": 1.0}, "controller.trajectory_action.default_path_tolerance.effort"),
    ("default_goal_time_tolerance", 0.0, "controller.trajectory_action.default_goal_time_tolerance"),
    ("name", "/arm_controller/follow_joint_trajectory", "controller.trajectory_action.name"),
    ("goal_tolerance", {"position": 0.1}, "controller.trajectory_action.goal_tolerance"),
])
def test_configuration_errors_name_the_field(key, value, field):
    data = load_yaml_file("config/nodes.yaml").data
    bad = apply_overrides(data, {f"controller.trajectory_action.{key}": value})
    with pytest.raises(ConfigError) as error:
        read_nodes_config(ConfigReader(bad, "nodes.yaml"))
    assert error.value.field == field


def test_feedback_faster_than_the_control_rate_is_a_configuration_error(servicer_target, controller_config):
    too_fast = dataclasses.replace(CTL.trajectory_action, feedback_rate=2000.0)
    with pytest.raises(ConfigError, match="must not exceed the control rate") as error:
        Rig(servicer_target, controller_config, action=too_fast)
    assert error.value.field == "controller.trajectory_action.feedback_rate"


# ---- the rclpy glue against a stand-in of rclpy.action and control_msgs -----------------------------------
def message_class(class_name: str, **defaults):
    """A message class like rclpy's generated ones: keyword construction, unknown fields refused."""
    class Message:
        __slots__ = tuple(defaults)

        def __init__(self, **fields):
            unknown = set(fields) - set(defaults)
            assert not unknown, f"{class_name} has no field(s) {sorted(unknown)}"
            for key, default in defaults.items():
                setattr(self, key, fields[key] if key in fields else copy.deepcopy(default))
    Message.__name__ = class_name
    return Message


POINT = TYPES.new("trajectory_msgs/msg/JointTrajectoryPoint")
FakeJointTolerance = message_class("JointTolerance", name="", position=0.0, velocity=0.0, acceleration=0.0)
FakeFollowJointTrajectory = pytypes.SimpleNamespace(
    Goal=message_class("FollowJointTrajectory_Goal", trajectory=TYPES.new(cv.JOINT_TRAJECTORY),
                       multi_dof_trajectory=TYPES.new("trajectory_msgs/msg/MultiDOFJointTrajectory"),
                       path_tolerance=[], component_path_tolerance=[], goal_tolerance=[],
                       component_goal_tolerance=[], goal_time_tolerance=cv.duration_msg(TYPES, 0.0)),
    Result=message_class("FollowJointTrajectory_Result", error_code=0, error_string=""),
    Feedback=message_class("FollowJointTrajectory_Feedback", header=TYPES.new("std_msgs/msg/Header"),
                           joint_names=[], desired=POINT, actual=POINT, error=POINT, multi_dof_joint_names=[]),
)


class FakeFuture:
    """rclpy.task.Future as a coroutine awaits it: yields until done."""

    def __init__(self):
        self._done, self._result = False, None

    def done(self):
        return self._done

    def set_result(self, result):
        self._done, self._result = True, result

    def __await__(self):
        while not self._done:
            yield
        return self._result


class FakeGoalHandle:
    """rclpy's ServerGoalHandle with rcl_action's goal state machine (an illegal transition raises)."""

    _TRANSITIONS = {("accepted", "execute"): "executing", ("accepted", "cancel_goal"): "canceling",
                    ("executing", "cancel_goal"): "canceling", ("executing", "succeed"): "succeeded",
                    ("executing", "abort"): "aborted", ("canceling", "succeed"): "succeeded",
                    ("canceling", "abort"): "aborted", ("canceling", "canceled"): "canceled"}

    def __init__(self, uuid: int, request):
        self.goal_id = pytypes.SimpleNamespace(uuid=np.full(16, uuid, dtype=np.uint8))
        self.request = request
        self.state = "accepted"
        self.feedback = []

    def _event(self, event):
        key = (self.state, event)
        if key not in self._TRANSITIONS:
            raise RuntimeError(f"invalid goal state transition {key}")
        self.state = self._TRANSITIONS[key]

    @property
    def is_cancel_requested(self):
        return self.state == "canceling"

    def execute(self):
        self._event("execute")

    def succeed(self):
        self._event("succeed")

    def abort(self):
        self._event("abort")

    def canceled(self):
        self._event("canceled")

    def publish_feedback(self, feedback):
        assert isinstance(feedback, FakeFollowJointTrajectory.Feedback)
        self.feedback.append(feedback)


class FakeActionServer:
    def __init__(self, node, action_type, action_name, execute_callback, *, goal_callback, cancel_callback):
        self.node, self.action_type, self.name = node, action_type, action_name
        self.execute_callback, self.goal_callback, self.cancel_callback = execute_callback, goal_callback, \
            cancel_callback

    def send_goal(self, uuid: int, goal):
        """What rclpy does with a goal request: goal_callback, then (accepted) execute() and the coroutine."""
        assert self.goal_callback(goal) is RESPONSES.GoalResponse.ACCEPT
        handle = FakeGoalHandle(uuid, goal)
        handle.execute()
        return handle, self.execute_callback(handle)

    def cancel(self, handle):
        if self.cancel_callback(handle) is RESPONSES.CancelResponse.ACCEPT:
            handle._event("cancel_goal")


RESPONSES = pytypes.SimpleNamespace(GoalResponse=enum.Enum("GoalResponse", "REJECT ACCEPT"),
                                    CancelResponse=enum.Enum("CancelResponse", "REJECT ACCEPT"))


class FakeNode:
    def __init__(self):
        self.logged = []

    def get_logger(self):
        log = self.logged.append
        return pytypes.SimpleNamespace(error=log, warn=log, info=log)


@pytest.fixture
def fake_ros(monkeypatch):
    action = pytypes.ModuleType("rclpy.action")
    action.ActionServer = FakeActionServer
    action.GoalResponse, action.CancelResponse = RESPONSES.GoalResponse, RESPONSES.CancelResponse
    task = pytypes.ModuleType("rclpy.task")
    task.Future = FakeFuture
    control_action = pytypes.ModuleType("control_msgs.action")
    control_action.FollowJointTrajectory = FakeFollowJointTrajectory
    for name, module in {"rclpy": pytypes.ModuleType("rclpy"), "rclpy.action": action, "rclpy.task": task,
                         "control_msgs": pytypes.ModuleType("control_msgs"),
                         "control_msgs.action": control_action}.items():
        monkeypatch.setitem(sys.modules, name, module)


def step(coroutine):
    """Resume an execute coroutine once, as the executor does; its return value once it finished."""
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    return None


def goal_message(rig, move=MOVE, duration=1.0, names=None, **fields):
    names = rig.joints if names is None else names
    target = rig.arm()[:len(names)] + move[:len(names)]
    trajectory = cv.joint_trajectory(TYPES, 0.0, names, [(duration, target)])
    return FakeFollowJointTrajectory.Goal(trajectory=trajectory, **fields)


def test_glue_serves_the_action_on_the_configured_name(fake_ros, servicer_target, controller_config):
    rig = Rig(servicer_target, controller_config)
    node = FakeNode()
    server = glue.serve_trajectory_action(node, TYPES, rig.execution, CTL.trajectory_action.name)
    assert server.server.name == "arm_controller/follow_joint_trajectory"
    assert server.server.action_type is FakeFollowJointTrajectory and server.server.node is node
    sys.modules["control_msgs.action"] = None              # control_msgs missing: the node goes on without
    assert glue.serve_trajectory_action(node, TYPES, rig.execution, "x") is None
    assert "control_msgs is not available" in node.logged[-1] and "arm_controller/joint_trajectory" in node.logged[-1]


def test_glue_goal_feedback_result_and_rejection(fake_ros, servicer_target, controller_config):
    rig = Rig(servicer_target, controller_config)
    server = glue.TrajectoryActionServer(FakeNode(), TYPES, rig.execution, "arm", FakeFollowJointTrajectory)
    rig.run(0.010)
    tolerance = [FakeJointTolerance(name="right_j3", position=1e-4)]
    handle, run = server.server.send_goal(1, goal_message(rig, goal_tolerance=tolerance,
                                                          goal_time_tolerance=cv.duration_msg(TYPES, 0.25)))
    assert step(run) is None and handle.state == "executing"           # awaiting its result
    assert rig.execution.goal_id == bytes([1] * 16)
    rig.run(0.5)
    assert step(run) is None
    rig.run(0.7)
    result = step(run)
    assert handle.state == "succeeded" and (result.error_code, result.error_string.startswith("goal reached")) \
        == (0, True)
    stamps = np.array([cv.seconds(f.header.stamp) for f in handle.feedback])      # node time of each update
    assert len(stamps) == 20 and np.allclose(np.diff(stamps), 1.0 / CTL.trajectory_action.feedback_rate, atol=1e-9)
    for fb in handle.feedback:
        assert list(fb.joint_names) == rig.joints and len(fb.actual.velocities) == 7
        for kind in ("positions", "velocities"):
            desired, actual, error = (np.asarray(getattr(p, kind)) for p in (fb.desired, fb.actual, fb.error))
            assert np.array_equal(error, desired - actual)

    # rejections end at once, aborted with the code and the reason, and leave the core alone
    for uuid, goal, code, text in [
            (2, goal_message(rig, names=rig.joints[:6] + ["right_j7"]), te.INVALID_JOINTS, "joint_names[6]"),
            (3, goal_message(rig, path_tolerance=[FakeJointTolerance(name="right_j0", position=-3.0)]),
             te.INVALID_GOAL, "path_tolerance[0].position"),
            (4, goal_message(rig, multi_dof_trajectory=TYPES.new("trajectory_msgs/msg/MultiDOFJointTrajectory",
                                                                 joint_names=["base"])),
             te.INVALID_JOINTS, "multi_dof_trajectory.joint_names: this controller has no multi-DOF joints")]:
        handle, run = server.server.send_goal(uuid, goal)
        result = step(run)
        assert handle.state == "aborted" and result.error_code == code and text in result.error_string
    assert not rig.execution.active and not server._running


def test_glue_cancel_and_preemption(fake_ros, servicer_target, controller_config):
    rig = Rig(servicer_target, controller_config)
    node = FakeNode()
    server = glue.TrajectoryActionServer(node, TYPES, rig.execution, "arm", FakeFollowJointTrajectory)
    rig.run(0.010)
    first, run_first = server.server.send_goal(1, goal_message(rig))
    step(run_first)
    rig.run(0.2)
    second, run_second = server.server.send_goal(2, goal_message(rig, move=-MOVE / 2))
    assert step(run_second) is None                           # accepted, preempting the first
    result = step(run_first)
    assert first.state == "aborted" and "preempted" in result.error_string and result.error_code == te.INVALID_GOAL
    assert any("preempted" in str(m) for m in node.logged)
    rig.run(0.2)
    server.server.cancel(second)
    assert second.state == "canceling" and not rig.execution.active       # the core holds at once
    result = step(run_second)
    assert second.state == "canceled" and result.error_code == te.SUCCESSFUL and "canceled" in result.error_string
    # a goal canceled before its execution started never reaches the core
    third = FakeGoalHandle(3, goal_message(rig))
    third._event("cancel_goal")
    result = step(server.execute(third))
    assert third.state == "canceled" and "before it started" in result.error_string and not rig.execution.active
