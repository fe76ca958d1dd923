"""Sawyer command adapter core: Float64MultiArray efforts -> intera_core_msgs/JointCommand (TORQUE_MODE)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from graph_probe import TopicProbe

from space_robot_dynamics.errors import ConfigError
from space_robot_nodes import conversions as cv
from space_robot_nodes.lockstep_graph import Graph
from space_robot_nodes.message_types import INTERA_JOINT_COMMAND, RosbagsMessageTypes
from space_robot_nodes.sawyer_adapter_core import SawyerAdapterCore
from space_robot_scenario.node_config import load_nodes_config

TYPES = RosbagsMessageTypes()
DT = 1e-3
CONFIG = load_nodes_config("config/nodes.yaml").sawyer_adapter
EFFORT = np.array([1.0, -2.0, 3.0, -4.0, 0.5, -0.5, 0.25])


def adapter(config=CONFIG, until=0.1):
    graph = Graph(DT)
    listen = {config.joint_command: INTERA_JOINT_COMMAND, config.joint_command_timeout: cv.FLOAT64,
              config.diagnostics: cv.DIAGNOSTIC_ARRAY}
    if config.suppress_gravity_compensation:
        listen[config.suppress_gravity_topic] = cv.EMPTY
    probe = graph.add(TopicProbe(TYPES, listen, {config.arm_command: cv.FLOAT64_MULTI_ARRAY}))
    core = graph.add(SawyerAdapterCore(TYPES, config))
    probe.script(0.0, config.arm_command, lambda t: cv.float64_multi_array(TYPES, EFFORT), until=until)
    return graph, probe, core


def test_torque_mode_commands_at_the_control_rate():
    graph, probe, core = adapter()
    graph.run_ticks(100)
    commands = probe.heard[CONFIG.joint_command]
    assert len(commands) == 100                                # 1 kHz
    last = commands[-1]
    assert last.mode == 3 == last.TORQUE_MODE
    assert list(last.names) == [f"right_j{i}" for i in range(7)]
    assert np.array_equal(np.asarray(last.effort), EFFORT) and len(last.position) == 0
    assert cv.seconds(last.header.stamp) == pytest.approx(0.099)
    timeouts = probe.heard[CONFIG.joint_command_timeout]
    assert len(timeouts) == 1 and timeouts[0].data == CONFIG.intera_command_timeout   # 10 Hz
    raw = TYPES.typestore.serialize_cdr(last, INTERA_JOINT_COMMAND)
    assert list(TYPES.typestore.deserialize_cdr(raw, INTERA_JOINT_COMMAND).names) == list(last.names)


def test_bad_command_keeps_the_last_valid_one():
    graph, probe, core = adapter(until=0.02)
    probe.script(0.021, CONFIG.arm_command, lambda t: cv.float64_multi_array(TYPES, EFFORT[:3]), until=0.03)
    graph.run_ticks(31)
    assert np.array_equal(np.asarray(probe.last(CONFIG.joint_command).effort), EFFORT)
    graph.run_ticks(70)
    status = probe.last(CONFIG.diagnostics).status[0]
    assert cv.level_of(status) == cv.ERROR and "expected 7 values, got 3" in status.message


def test_timeout_hold_position_stops_publishing():
    graph, probe, core = adapter(until=0.1)
    graph.run_ticks(300)
    times = np.array(probe.times[CONFIG.joint_command])
    assert times[-1] == pytest.approx(0.1 + CONFIG.command_timeout, abs=1.5 * DT)
    status = probe.last(CONFIG.diagnostics).status[0]
    assert cv.level_of(status) == cv.ERROR and "Intera holds position" in status.message


def test_timeout_zero_torque_keeps_publishing_zeros():
    config = dataclasses.replace(CONFIG, timeout_behaviour="zero_torque")
    graph, probe, core = adapter(config, until=0.1)
    graph.run_ticks(300)
    assert len(probe.heard[config.joint_command]) == 300
    assert not np.asarray(probe.last(config.joint_command).effort).any()


def test_gravity_compensation_suppression_when_asked():
    config = dataclasses.replace(CONFIG, suppress_gravity_compensation=True)
    graph, probe, core = adapter(config)
    graph.run_ticks(1000)
    assert len(probe.heard[config.suppress_gravity_topic]) == 10   # 10 Hz: faster than Intera's 0.2 s timeout


def test_suppression_slower_than_intera_timeout_is_refused():
    with pytest.raises(ConfigError, match="sawyer_adapter.suppress_rate"):
        load_nodes_config("config/nodes.yaml", {"sawyer_adapter.suppress_gravity_compensation": True,
                                                "sawyer_adapter.suppress_rate": 4.0})
