"""Capture in the node graph (docs/contact.md sec. 10): the gripper command travels user -> controller -> dynamics
node, the grasp closes in the simulator, and grasp/wrench, grasp/state and grasp/events say so; the controller and
the monitor switch to the joined system on grasp/state by themselves; bad input is an ERROR diagnostic, never a
crash.

The published wrench is checked against the simulator's own multiplier (constraint_force, itself checked against an
independent KKT system in test_contact_loop.py) recomputed from the published state, and its frame_id against the
grasp's end-effector frame; grasp/state's entries against the simulator's contact events.
"""
from __future__ import annotations

import numpy as np
import pytest
from graph_probe import TopicProbe
from grasp_states import drifting, fixture_at_hand

from space_robot_control.controller_config import load_controller_config
from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_nodes import conversions as cv
from space_robot_nodes.controller_core import ControllerCore
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.grasp_state_message import GRASP_STATE_FIELDS, read_grasp_state
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_nodes.monitor_core import build_monitor
from space_robot_scenario import load_scenario

TYPES = RosbagsMessageTypes()
DT = 1e-3


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("config/scenarios/capture.yaml")


@pytest.fixture(scope="module")
def controller_config():
    return load_controller_config("config/controller.yaml")


def diagnostics(probe, topic, name):
    return [s for m in probe.heard[topic] for s in m.status if s.name == name]


def capture_graph(system, scenario, controller_config, monitor=True, seed=5):
    """Dynamics, controller, (monitor) and a probe playing the user, with the fixture 3 mm from the hand and both
    spacecraft drifting slowly (inside the capture envelope)."""
    nodes = scenario.nodes
    q = fixture_at_hand(system, offset=[0.002, -0.002, 0.001])
    v = drifting(system, np.random.default_rng(seed), arm_rate=0.002, base_rate=(0.002, 0.002),
                 target_rate=(0.002, 0.003))
    sim = Simulator(system, SimulationSettings(dt=DT), q, v)
    graph = Graph(DT)
    dyn = nodes.dynamics
    listen = {dyn.grasp_wrench: cv.WRENCH_STAMPED, dyn.grasp_state: cv.FLOAT64_MULTI_ARRAY,
              dyn.grasp_events: cv.STRING, dyn.diagnostics: cv.DIAGNOSTIC_ARRAY,
              nodes.monitor.status: cv.FLOAT64_MULTI_ARRAY}
    dynamics = graph.add(DynamicsCore(TYPES, sim, dyn))
    controller = graph.add(ControllerCore(TYPES, ServicerController(system, controller_config), nodes.controller))
    monitor_core = graph.add(build_monitor(TYPES, system, scenario)) if monitor else None
    probe = graph.add(TopicProbe(TYPES, listen, {nodes.controller.gripper_command: cv.BOOL}))
    return graph, sim, dynamics, controller, monitor_core, probe


def test_the_gripper_command_closes_the_grasp_and_the_topics_say_so(servicer_target, scenario, controller_config):
    system = servicer_target
    graph, sim, dynamics, controller, monitor, probe = capture_graph(system, scenario, controller_config)
    nodes = scenario.nodes
    probe.script(at=0.05, topic=nodes.controller.gripper_command, message=cv.boolean(TYPES, True))
    graph.run_ticks(290)
    frame, force, torque = sim.contact_wrench()      # t = 0.290 s: what the next tick publishes (grasp/wrench 100 Hz)
    graph.run_ticks(1)

    events = sim.contact_events
    assert [e.kind for e in events] == ["grasp"], events
    assert sim.contact_state().holding
    # grasp/events: one line per event, as they happen
    heard = [m.data for m in probe.heard[nodes.dynamics.grasp_events]]
    assert len(heard) == 1 and "grasp" in heard[0]
    # grasp/state: named entries; the event's figures
    state = read_grasp_state(probe.last(nodes.dynamics.grasp_state))
    assert tuple(state) == GRASP_STATE_FIELDS
    assert state["holding"] == 1.0 and state["mode"] == 1.0
    assert state["grasp_time_s"] == pytest.approx(events[0].t, abs=1e-12)
    assert min(state[k] for k in ("shear_force_n", "bending_torque_nm")) >= 0.0
    assert state["momentum_change_across_grasp"] == pytest.approx(events[0].momentum.relative_change, abs=0.0)
    assert state["momentum_change_across_grasp"] < 1e-12      # an internal impulse: round-off only
    assert np.allclose([state[f"impulse_force_{a}"] for a in "xyz"], events[0].impulse[:3], rtol=0.0, atol=0.0)
    # grasp/wrench: the loop's multiplier, in the end-effector frame, at the published instant's state
    wrench = probe.last(nodes.dynamics.grasp_wrench)
    assert wrench.header.frame_id == system.grasp.config.end_effector_frame == "right_hand"
    assert frame == "right_hand"
    published = np.r_[cv.xyz_of(wrench.wrench.force), cv.xyz_of(wrench.wrench.torque)]
    assert cv.seconds(wrench.header.stamp) == pytest.approx(0.290, abs=1e-9)
    assert np.allclose(published, np.r_[force, torque], rtol=1e-12, atol=1e-12)
    assert np.linalg.norm(published) > 0.0                      # the arm holds a drifting target: a real wrench
    # grasp/state's normal/tangential figures: those of the wrench published at the same tick (approach axis z)
    topic_s, topic_w = nodes.dynamics.grasp_state, nodes.dynamics.grasp_wrench
    t_state = probe.times[topic_s][-1]
    parts = read_grasp_state(probe.heard[topic_s][-1])
    same = [m for m, t in zip(probe.heard[topic_w], probe.times[topic_w]) if abs(t - t_state) < 1e-9]
    assert len(same) == 1 and system.grasp.config.approach_axis == (0.0, 0.0, 1.0)
    w = np.r_[cv.xyz_of(same[0].wrench.force), cv.xyz_of(same[0].wrench.torque)]
    assert parts["axial_force_n"] == pytest.approx(-w[2], abs=1e-12)
    assert parts["twist_torque_nm"] == pytest.approx(w[5], abs=1e-12)
    assert parts["shear_force_n"] == pytest.approx(np.hypot(w[0], w[1]), abs=1e-12)
    assert parts["bending_torque_nm"] == pytest.approx(np.hypot(w[3], w[4]), abs=1e-12)
    assert parts["shear_force_n"] > 0.0
    # the controller switched to the joined system; the monitor to robot + target
    assert controller.controller.capture_mode is not None
    assert controller.gripper_commands == 1
    capture = diagnostics(probe, nodes.dynamics.diagnostics, "controller: capture")[-1]
    assert "holding the target" in capture.message
    assert monitor.monitor.attached
    assert "grasp closed" in monitor.last_contact_event
    contact = diagnostics(probe, nodes.dynamics.diagnostics, "dynamics: contact")[-1]
    assert cv.level_of(contact) == cv.OK and "grasp" in contact.message


def test_release_switches_back(servicer_target, scenario, controller_config):
    system = servicer_target
    graph, sim, _dynamics, controller, monitor, probe = capture_graph(system, scenario, controller_config)
    topic = scenario.nodes.controller.gripper_command
    probe.script(at=0.05, topic=topic, message=cv.boolean(TYPES, True))
    probe.script(at=0.25, topic=topic, message=cv.boolean(TYPES, False))
    graph.run_ticks(400)
    assert [e.kind for e in sim.contact_events] == ["grasp", "release"]
    assert not sim.contact_state().holding
    assert controller.controller.capture_mode is None
    assert not monitor.monitor.attached
    assert "grasp opened" in monitor.last_contact_event
    wrench = probe.last(scenario.nodes.dynamics.grasp_wrench)
    assert cv.xyz_of(wrench.wrench.force).tolist() == [0.0, 0.0, 0.0]      # free: nothing on the hand


def test_a_grasp_out_of_tolerance_is_reported_not_forced(servicer_target, scenario, controller_config):
    """The fixture 5 cm from the hand (tolerance 2 cm): the grasp fails, grasp/events and a WARN say why, the
    controller stays on the free servicer."""
    system = servicer_target
    graph, sim, _dynamics, controller, _monitor, probe = capture_graph(system, scenario, controller_config)
    q = fixture_at_hand(system, offset=[0.05, 0.0, 0.0])
    sim.reset(q, np.zeros(system.nv))
    probe.script(at=0.05, topic=scenario.nodes.controller.gripper_command, message=cv.boolean(TYPES, True))
    graph.run_ticks(200)
    assert [e.kind for e in sim.contact_events] == ["grasp_failed"]
    assert not sim.contact_state().holding and controller.controller.capture_mode is None
    line = probe.last(scenario.nodes.dynamics.grasp_events).data
    assert "grasp_failed" in line and "position" in line
    contact = diagnostics(probe, scenario.nodes.dynamics.diagnostics, "dynamics: contact")[-1]
    assert cv.level_of(contact) == cv.WARN


def test_a_gripper_command_without_a_target_is_an_error_diagnostic(controller_config):
    """servicer_target_pyramid.yaml has no grasp section: the command is rejected with an ERROR naming the missing
    section; the controller goes on commanding."""
    from space_robot_dynamics import build_model
    from space_robot_scenario.node_config import load_nodes_config

    system = build_model("config/models/servicer_target_pyramid.yaml")
    assert system.grasp is None
    nodes = load_nodes_config("config/nodes.yaml")
    graph = Graph(DT)
    sim = Simulator(system, SimulationSettings(dt=DT), system.neutral())
    graph.add(DynamicsCore(TYPES, sim, nodes.dynamics))
    core = graph.add(ControllerCore(TYPES, ServicerController(system, controller_config), nodes.controller))
    probe = graph.add(TopicProbe(TYPES, {nodes.controller.diagnostics: cv.DIAGNOSTIC_ARRAY,
                                         nodes.controller.arm_command: cv.FLOAT64_MULTI_ARRAY},
                                 {nodes.controller.gripper_command: cv.BOOL}))
    probe.script(at=0.05, topic=nodes.controller.gripper_command, message=cv.boolean(TYPES, True))
    graph.run_ticks(250)
    goals = diagnostics(probe, nodes.controller.diagnostics, "controller: goals")
    assert any(cv.level_of(s) == cv.ERROR and "no `grasp` section" in s.message for s in goals)
    assert core.goals_rejected == 1 and core.gripper_commands == 0
    assert len(probe.heard[nodes.controller.arm_command]) > 200            # commands went on throughout
    assert np.all(np.isfinite(sim.state.q))


def test_a_malformed_gripper_message_is_an_error_diagnostic(servicer_target, scenario, controller_config):
    """A message whose data is not a bool (a scripted stand-in) is rejected by the controller with an ERROR naming
    the topic, and nothing reaches the gripper."""
    system = servicer_target
    graph, sim, _dynamics, controller, _monitor, probe = capture_graph(system, scenario, controller_config,
                                                                      monitor=False)

    class NotABool:
        data = 0.7

    probe.script(at=0.05, topic=scenario.nodes.controller.gripper_command, message=NotABool())
    graph.run_ticks(200)
    goals = diagnostics(probe, scenario.nodes.dynamics.diagnostics, "controller: goals")
    assert any(cv.level_of(s) == cv.ERROR and "gripper_controller/command" in s.message for s in goals)
    assert sim.contact_events == () and controller.gripper_commands == 0
