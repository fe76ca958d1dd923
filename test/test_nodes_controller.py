"""Controller node core in the lockstep graph: goal validation, state timeout, commands only with a state."""
from __future__ import annotations

import re

import numpy as np
import pytest
from graph_probe import TopicProbe

from space_robot_control.controller_config import load_controller_config
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_nodes import conversions as cv
from space_robot_nodes.controller_core import ControllerCore
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_nodes.robot_state import floating_subtrees
from space_robot_scenario.node_config import load_nodes_config

TYPES = RosbagsMessageTypes()
DT = 1e-3
NODES = load_nodes_config("config/nodes.yaml")
CTL = NODES.controller
GOALS = {CTL.trajectory: cv.JOINT_TRAJECTORY, CTL.attitude_setpoint: cv.QUATERNION_STAMPED}
OUTPUTS = {CTL.arm_command: cv.FLOAT64_MULTI_ARRAY, CTL.wheel_command: cv.FLOAT64_MULTI_ARRAY,
           CTL.diagnostics: cv.DIAGNOSTIC_ARRAY}


@pytest.fixture(scope="module")
def controller_config():
    return load_controller_config("config/controller.yaml")


def goal_status(probe):
    return [s for m in probe.heard[CTL.diagnostics] for s in m.status if s.name == "controller: goals"]


def closed_loop(system, config):
    graph = Graph(DT)
    sim = Simulator(system, SimulationSettings(dt=DT), system.neutral())
    graph.add(DynamicsCore(TYPES, sim, NODES.dynamics))
    probe = graph.add(TopicProbe(TYPES, OUTPUTS, GOALS))
    controller = graph.add(ControllerCore(TYPES, ServicerController(system, config), CTL))
    return graph, sim, probe, controller


def test_no_state_no_command(servicer_target, controller_config):
    graph = Graph(DT)
    probe = graph.add(TopicProbe(TYPES, OUTPUTS))
    graph.add(ControllerCore(TYPES, ServicerController(servicer_target, controller_config), CTL))
    graph.run_ticks(150)
    assert probe.heard[CTL.arm_command] == [] and probe.heard[CTL.wheel_command] == []
    state = [s for m in probe.heard[CTL.diagnostics] for s in m.status if s.name == "controller: state"][-1]
    assert cv.level_of(state) == cv.WARN and "no command published" in state.message


def test_bad_goals_are_rejected_and_the_reference_kept(servicer_target, controller_config):
    system = servicer_target
    graph, sim, probe, controller = closed_loop(system, controller_config)
    arm = list(system.arm_joints)
    q_start = np.array([system.joint_angle(sim.state.q, n) for n in arm])
    unknown = ["right_j0", "right_j1", "right_j2", "right_j3", "right_j4", "right_j5", "right_j7"]
    probe.script(0.010, CTL.trajectory, cv.joint_trajectory(TYPES, 0.0, unknown, [(1.0, np.zeros(7))]))
    probe.script(0.020, CTL.trajectory, cv.joint_trajectory(TYPES, 0.0, arm, [(1.0, [0, 0, np.nan, 0, 0, 0, 0])]))
    probe.script(0.030, CTL.trajectory, cv.joint_trajectory(TYPES, 0.0, arm[:6], [(1.0, np.zeros(6))]))
    probe.script(0.040, CTL.attitude_setpoint, cv.quaternion_stamped(TYPES, 0.0, "base_link", [0, 0, 0, 1]))
    probe.script(0.050, CTL.attitude_setpoint, cv.quaternion_stamped(TYPES, 0.0, "world", [0, 0, 0.5, 0.5]))
    graph.run_ticks(101)
    messages = [s.message for s in goal_status(probe)]
    assert controller.goals_rejected == 5 and controller.goals_accepted == 0
    assert cv.level_of(goal_status(probe)[-1]) == cv.ERROR
    assert "attitude setpoint rejected" in messages[-1] and "not a unit quaternion" in messages[-1]
    assert controller.output.trajectory_active is False
    q_now = np.array([system.joint_angle(sim.state.q, n) for n in arm])
    assert np.max(np.abs(q_now - q_start)) < 1e-9              # held where it was
    assert len(probe.heard[CTL.arm_command]) == 101            # the node kept running at 1 kHz
    report = messages[-1]                                      # the t = 0.1 s report lists every rejection
    assert report.count("rejected") == 5
    for reason in ("right_j7", "non-finite", "missing joints", "must be 'world', got 'base_link'"):
        assert reason in report, reason


def test_goal_before_the_first_state_is_applied_at_the_first_update(servicer_target, controller_config):
    system = servicer_target
    graph, sim, probe, controller = closed_loop(system, controller_config)
    arm = list(system.arm_joints)
    goal = np.array([system.joint_angle(sim.state.q, n) for n in arm]) + 0.05
    probe.script(0.0, CTL.trajectory, cv.joint_trajectory(TYPES, 0.0, arm, [(0.5, goal)]))
    graph.run_ticks(1501)
    assert controller.goals_accepted == 1
    q_now = np.array([system.joint_angle(sim.state.q, n) for n in arm])
    assert np.max(np.abs(q_now - goal)) < 1e-6


def test_stale_state_stops_the_commands(servicer_target, controller_config):
    system = servicer_target
    graph = Graph(DT)
    feeds = {CTL.joint_states: cv.JOINT_STATE, **{CTL.odometry[s.name]: cv.ODOMETRY for s in floating_subtrees(system)}}
    probe = graph.add(TopicProbe(TYPES, OUTPUTS, feeds, phase=0))
    controller = graph.add(ControllerCore(TYPES, ServicerController(system, controller_config), CTL))
    names = list(system.arm_joints + system.wheel_joints)
    probe.script(0.0, CTL.joint_states, lambda t: cv.joint_state(TYPES, t, names, np.zeros(10), np.zeros(10),
                                                                  np.zeros(10)), until=0.05)
    for s in floating_subtrees(system):
        probe.script(0.0, CTL.odometry[s.name], lambda t, s=s: cv.odometry(
            TYPES, t, "world", s.base_link, np.zeros(3), [0, 0, 0, 1], np.zeros(3), np.zeros(3)), until=0.05)
    graph.run_ticks(301)
    times = np.array(probe.times[CTL.arm_command])
    assert times[0] == 0.0 and times[-1] == pytest.approx(0.05 + CTL.state_timeout, abs=1.5 * DT)
    assert controller.skipped > 0
    state = [s for m in probe.heard[CTL.diagnostics] for s in m.status if s.name == "controller: state"][-1]
    assert cv.level_of(state) == cv.ERROR and "old" in state.message and "no command published" in state.message


def test_a_trajectory_arriving_after_its_start_time_keeps_its_times_and_says_so(servicer_target, controller_config):
    """header.stamp already past on arrival (a delayed message, a stale planner stamp): the points keep their stamped
    times, as joint_trajectory_controller's do; the goals status says how late (WARN) and counts it. A stamp ahead
    of the controller's time is on time."""
    system = servicer_target
    graph, _sim, probe, controller = closed_loop(system, controller_config)
    arm = list(system.arm_joints)
    hold = [system.joint_angle(system.neutral(), n) for n in arm]
    probe.script(0.100, CTL.trajectory, cv.joint_trajectory(TYPES, 0.060, arm, [(0.5, hold)]))     # 40 ms late
    graph.run_ticks(150)
    late = goal_status(probe)[-1]
    how_late = float(re.search(r"accepted ([0-9.]+) s after its start time", late.message).group(1))
    assert cv.level_of(late) == cv.WARN and abs(how_late - 0.040) <= 1.5 * DT, late.message     # a control period
    to_the_end = float(re.search(r"\(([0-9.]+) s to the last\)", late.message).group(1))
    assert abs(to_the_end - (0.060 + 0.5 - 0.100)) <= 1.5 * DT, late.message     # reached at stamp + 0.5 s
    assert controller.trajectories_late == 1
    probe.script(0.200, CTL.trajectory, cv.joint_trajectory(TYPES, 0.250, arm, [(0.5, hold)]))     # 50 ms ahead
    graph.run_ticks(150)
    on_time = goal_status(probe)[-1]
    assert cv.level_of(on_time) == cv.OK and "after its start time" not in on_time.message
    assert controller.trajectories_late == 1
    assert dict((kv.key, kv.value) for kv in on_time.values)["trajectories_late"] == "1"


def test_control_periods_the_clock_jumped_over_are_counted_as_missed(servicer_target, controller_config):
    """Under ROS 2 the control timer follows the joint_states stamps and runs once per jump (timer_schedule.py):
    the periods jumped over are state samples the node never acted on, reported as missed_periods."""
    from space_robot_nodes.timer_schedule import TimerSchedule

    graph, _sim, _probe, controller = closed_loop(servicer_target, controller_config)
    graph.run_ticks(101)
    assert controller.missed_periods == 0 and controller.updates == 101      # lockstep: every period
    alone = ControllerCore(TYPES, ServicerController(servicer_target, controller_config), CTL)
    alone.attach(lambda *_: None, lambda: 0.0, lambda _topic: True)
    control = [t for t in alone.timers if t.name == "control"]
    schedule = TimerSchedule(control, 0.0)
    for now in (0.0, 0.001, 0.004, 0.010, 0.0105, 0.011):     # jumps of 1, 3, 6 periods, then half a period
        schedule.run(now)
    assert alone.missed_periods == 2 + 5
