"""Holonomy-monitor node core: diagnostics and the compact status topic, fed by scripted state messages."""
from __future__ import annotations

import numpy as np
import pytest
from graph_probe import TopicProbe

from space_robot_nodes import conversions as cv
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_nodes.monitor_core import MARKER, STATUS_FIELDS, STATUS_LABEL, build_monitor
from space_robot_nodes.robot_state import floating_subtrees
from space_robot_scenario import load_scenario

TYPES = RosbagsMessageTypes()
DT = 1e-3


@pytest.fixture(scope="module")
def scenario():
    return load_scenario("config/scenarios/servicer_pregrasp.yaml")


def monitored(system, scenario, bus_velocity_after=None, nan_after=None, nan_until=np.inf):
    """Monitor + probe publishing the scenario's initial state at rest (then perturbed) every 10 ms."""
    mon = scenario.nodes.monitor
    graph = Graph(DT)
    feeds = {mon.joint_states: cv.JOINT_STATE, **{mon.odometry[s.name]: cv.ODOMETRY for s in floating_subtrees(system)}}
    probe = graph.add(TopicProbe(TYPES, {mon.diagnostics: cv.DIAGNOSTIC_ARRAY, mon.status: cv.FLOAT64_MULTI_ARRAY,
                                         mon.marker: MARKER}, feeds, period=0.01, phase=0))
    core = graph.add(build_monitor(TYPES, system, scenario))
    q0, _ = scenario.initial_state(system)
    names = list(system.arm_joints + system.wheel_joints)
    angles = np.array([system.joint_angle(q0, n) for n in names])

    def joint_state(t):
        position = angles.copy()
        if nan_after is not None and nan_after < t < nan_until:
            position[2] = np.nan
        return cv.joint_state(TYPES, t, names, position, np.zeros(len(names)), np.zeros(len(names)))

    probe.script(0.0, mon.joint_states, joint_state, until=10.0)
    for s in floating_subtrees(system):
        qs = system.q_slice(s.config.root_joint_name)

        def odometry(t, s=s, qs=qs):
            linear = np.zeros(3)
            if bus_velocity_after is not None and s.name == "servicer" and t > bus_velocity_after:
                linear = np.array([0.05, 0.0, 0.0])          # 500 kg bus pushed to 5 cm/s: an external impulse
            return cv.odometry(TYPES, t, "world", s.base_link, q0[qs][:3], q0[qs][3:], linear, np.zeros(3))
        probe.script(0.0, mon.odometry[s.name], odometry, until=10.0)
    return graph, probe, core, mon


def test_status_layout_and_a_quiet_state(servicer_target, scenario):
    graph, probe, core, mon = monitored(servicer_target, scenario)
    graph.run_ticks(101)
    status = probe.last(mon.status)
    assert status.layout.dim[0].label == STATUS_LABEL and len(status.data) == len(STATUS_FIELDS)
    assert status.layout.dim[0].size == len(STATUS_FIELDS)
    fields = dict(zip(STATUS_LABEL.split(","), status.data))
    assert fields["level"] == cv.OK and fields["linear_residual_fraction"] == 0.0
    assert fields["constraint_rank"] == 6
    diag = probe.last(mon.diagnostics).status[0]
    assert diag.name == "holonomy_monitor: holonomy" and cv.level_of(diag) == cv.OK
    assert any(kv.key.startswith("angular_momentum_residual") for kv in diag.values)
    assert len(probe.heard[mon.status]) == 6                   # 50 Hz over 0.1 s, t = 0 included
    marker = probe.last(mon.marker)
    assert marker.header.frame_id == "base_link" and (marker.color.g, marker.color.r) == (0.8, 0.1)


def test_a_momentum_change_is_flagged(servicer_target, scenario):
    graph, probe, core, mon = monitored(servicer_target, scenario, bus_velocity_after=0.05)
    graph.run_ticks(101)
    fields = dict(zip(STATUS_LABEL.split(","), probe.last(mon.status).data))
    assert fields["level"] == cv.ERROR
    assert fields["linear_momentum_residual_x"] == pytest.approx(core.monitor.robot.mass * 0.05, rel=1e-9)
    diag = probe.last(mon.diagnostics).status[0]
    assert cv.level_of(diag) == cv.ERROR and "external force" in diag.message
    assert probe.last(mon.marker).color.r == 0.9


def test_a_bad_state_is_reported_and_the_node_keeps_running(servicer_target, scenario):
    graph, probe, core, mon = monitored(servicer_target, scenario, nan_after=0.05)
    graph.run_ticks(101)
    diag = probe.last(mon.diagnostics).status[0]
    assert cv.level_of(diag) == cv.ERROR and "non-finite position or velocity for joints ['right_j2']" in diag.message
    assert core.errors >= 1 and core.cycles == 3                # cycles at 0, 20, 40 ms ran; later ones refused
    assert len(probe.heard[mon.diagnostics]) == 2               # 10 Hz over 0.1 s, t = 0 included
    assert len(probe.heard[mon.status]) == 3                    # one per cycle that ran


def test_one_bad_cycle_between_two_reports_is_reported(servicer_target, scenario):
    """Only the state of t = 40 ms is bad: cycles at 20, 60, 80 and 100 ms are fine, and the report at 100 ms
    still carries the ERROR of the cycle at 40 ms, with its time."""
    graph, probe, core, mon = monitored(servicer_target, scenario, nan_after=0.035, nan_until=0.045)
    graph.run_ticks(101)
    assert core.errors == 1 and core.cycles == 5
    reports = [m.status[0] for m in probe.heard[mon.diagnostics]]
    assert [cv.level_of(d) for d in reports] == [cv.OK, cv.ERROR]
    values = {kv.key: kv.value for kv in reports[-1].values}
    assert float(values["cycle_time_s"]) == pytest.approx(0.04) and values["cycles_since_last_report"] == "5"
    assert probe.last(mon.marker).color.r == 0.9

