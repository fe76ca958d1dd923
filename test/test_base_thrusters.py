"""Base thrusters (space_robot_dynamics/model/base_thrusters.py): the model file's section checked at load, the
wrench in the simulator checked against the momentum balance it must produce, and the dynamics node's
base_thrusters/command input (held, timed out, bad commands rejected with the field named).

Momentum balance (world frame, about the world origin O): a force f (base axes) through the base link's origin r_b
and a couple tau give dp/dt = R_b f and dL_O/dt = r_b x (R_b f) + R_b tau. The test integrates the right-hand sides
by the trapezoid rule over the recorded 1 ms steps. Its error is ~T dt^2 / 12 |d^2/dt^2 (R_b f)|: with the base
turning at up to ~0.4 rad/s, ~1e-8 of the impulse, so 1e-6 relative. Applying f in world axes instead of base
axes would leave an error of O(1) here, because the base turns by ~0.4 rad.
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest
import yaml
from graph_probe import TopicProbe

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.model_config import read_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_nodes import conversions as cv
from space_robot_nodes.dynamics_core import DynamicsCore
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_scenario import load_scenario

MODEL = "config/models/servicer_target.yaml"
THRUSTERS = {"subtree": "servicer", "max_force": 50.0, "max_torque": 20.0}
DT = 1e-3
TYPES = RosbagsMessageTypes()


def graph_ticks(sim: Simulator) -> int:
    """Physics steps taken so far (the lockstep graph's ticks)."""
    return int(round(sim.state.t / DT))


def servicer_with(thrusters) -> SystemModel:
    raw = yaml.safe_load(open(MODEL))
    if thrusters is not None:
        raw["base_thrusters"] = thrusters
    return SystemModel(read_model_config(ConfigReader(raw, MODEL)))


@pytest.fixture(scope="module")
def system():
    return servicer_with(THRUSTERS)


@pytest.mark.parametrize("section, field, problem", [
    ({**THRUSTERS, "subtree": "bus"}, "base_thrusters.subtree", "no subtree 'bus'"),
    ({**THRUSTERS, "max_force": -1.0}, "base_thrusters.max_force", "must be > 0"),
    ({**THRUSTERS, "max_torque": math.nan}, "base_thrusters.max_torque", ""),
    ({**THRUSTERS, "isp": 220.0}, "base_thrusters.isp", "unknown key"),
])
def test_a_bad_thrusters_section_is_named_at_load(section, field, problem):
    with pytest.raises(ConfigError) as info:
        servicer_with(section)
    assert info.value.field.endswith(field) and problem in info.value.problem, info.value


def test_thrusters_need_a_free_flying_base():
    raw = yaml.safe_load(open("config/models/servicer_target_attached.yaml"))
    fixed = [s["name"] for s in raw["subtrees"] if s.get("base_joint") == "fixed"][0]
    raw["base_thrusters"] = {**THRUSTERS, "subtree": fixed}
    with pytest.raises(ConfigError) as info:
        SystemModel(read_model_config(ConfigReader(raw, "config/models/servicer_target_attached.yaml")))
    assert info.value.field == "base_thrusters.subtree" and "free-flyer" in info.value.problem


def test_the_thrust_changes_momentum_as_the_balance_says(system):
    sim = Simulator(system, SimulationSettings(dt=DT))
    force, torque = np.array([12.0, -5.0, 3.0]), np.array([4.0, 2.0, -6.0])     # N, N m, base axes
    sim.command_thrusters(force, torque)
    model, data = system.model, system.model.createData()
    base = system.model.getFrameId("base_link")

    def rates():
        pin.framesForwardKinematics(model, data, sim.state.q)
        placement = data.oMf[base]
        f_world = placement.rotation @ force
        return np.concatenate((f_world, np.cross(placement.translation, f_world) + placement.rotation @ torque))

    start = np.concatenate(sim.momentum_about(np.zeros(3)))
    integral, previous = np.zeros(6), rates()
    for _ in range(2000):
        sim.step()
        current = rates()
        integral += 0.5 * DT * (previous + current)
        previous = current
    change = np.concatenate(sim.momentum_about(np.zeros(3))) - start
    turned = np.linalg.norm(pin.log3(data.oMf[base].rotation))
    assert turned > 0.1                                   # the base turned: body axes are not world axes
    assert np.abs(change - integral).max() <= 1e-6 * np.abs(integral).max(), (change, integral)


def test_bad_thrust_commands_name_the_field_and_change_nothing(system):
    sim = Simulator(system, SimulationSettings(dt=DT))
    sim.command_thrusters([1.0, 0.0, 0.0])
    for force, torque, field in (([51.0, 0.0, 0.0], None, "base_thrusters.force"),
                                 (None, [0.0, 0.0, 21.0], "base_thrusters.torque"),
                                 ([math.nan, 0.0, 0.0], None, "base_thrusters.force"),
                                 ([1.0, 0.0], None, "base_thrusters.force")):
        with pytest.raises(CommandError) as info:
            sim.command_thrusters(force, torque)
        assert info.value.field == field
    assert sim.external_wrenches[Simulator.THRUSTERS].force.tolist() == [1.0, 0.0, 0.0]
    sim.command_thrusters()                               # all zero: the wrench is gone
    assert Simulator.THRUSTERS not in sim.external_wrenches
    with pytest.raises(CommandError) as info:
        Simulator(servicer_with(None), SimulationSettings(dt=DT)).command_thrusters([1.0, 0.0, 0.0])
    assert info.value.field == "base_thrusters" and "no base thrusters" in info.value.problem


def test_the_dynamics_node_holds_times_out_and_rejects_thrust_commands(system):
    """base_thrusters/command: applied from the next step, held for command_timeout, then off (OK: no thrust is
    the thrusters' rest); a wrong frame, a NaN or a thrust beyond the limits is an ERROR and the last one stays."""
    nodes = load_scenario("servicer_pregrasp").nodes
    topic, timeout = nodes.dynamics.base_thrusters_command, nodes.dynamics.command_timeout
    period = 1.0 / nodes.dynamics.diagnostics_rate
    graph = Graph(DT)
    sim = Simulator(system, SimulationSettings(dt=DT))
    dynamics = graph.add(DynamicsCore(TYPES, sim, nodes.dynamics))
    probe = graph.add(TopicProbe(TYPES, {nodes.dynamics.diagnostics: cv.DIAGNOSTIC_ARRAY}, {topic: cv.WRENCH_STAMPED}))
    good = cv.wrench_stamped(TYPES, 0.0, "base_link", [10.0, 0.0, 0.0], [0.0, 0.0, 1.0])
    bad = [cv.wrench_stamped(TYPES, 0.0, "world", [1.0, 0, 0], [0, 0, 0]),
           cv.wrench_stamped(TYPES, 0.0, "", [math.nan, 0, 0], [0, 0, 0]),
           cv.wrench_stamped(TYPES, 0.0, "", [60.0, 0, 0], [0, 0, 0])]
    for k, message in enumerate(bad):          # one diagnostics period each (each report names its last error)
        start = 0.010 + k * period
        probe.script(at=start, topic=topic, message=good)
        probe.script(at=start + 0.005, topic=topic, message=message)
        graph.run_ticks(int(round((start + 0.010) / DT)) - graph_ticks(sim))
        applied = sim.external_wrenches[Simulator.THRUSTERS]       # the good one holds
        assert applied.force.tolist() == [10.0, 0.0, 0.0] and applied.torque.tolist() == [0.0, 0.0, 1.0]
        assert applied.expressed_in == "local" and dynamics.thruster_input.rejected == k + 1
        graph.run_ticks(int(round((start + period) / DT)) - graph_ticks(sim))
    graph.run_ticks(int(round((timeout + period) / DT)))      # past the timeout of the last good command
    assert Simulator.THRUSTERS not in sim.external_wrenches
    reports = [s for m in probe.heard[nodes.dynamics.diagnostics] for s in m.status
               if s.name == "dynamics: base_thrusters"]
    errors = " | ".join(s.message for s in reports if s.level == cv.ERROR)
    for field in ("header.frame_id", "wrench.force"):
        assert f"{topic}.{field}" in errors, errors
    assert "exceeds the limit 50 N" in errors
    assert reports[-1].level == cv.OK and "thrusters off" in reports[-1].message


def test_the_controllers_model_without_the_target_drops_the_targets_thrusters():
    """ControlModel(without=target) (the joined system's control model) keeps the servicer's thrusters and leaves
    out those of a subtree it removes, instead of failing to resolve them."""
    from space_robot_control.control_model import ControlModel

    on_target = ControlModel(servicer_with({**THRUSTERS, "subtree": "target"}), without=("target",))
    assert on_target.rigid.base_thrusters is None
    on_servicer = ControlModel(servicer_with(THRUSTERS), without=("target",))
    assert on_servicer.rigid.base_thrusters.base_link == "base_link"
