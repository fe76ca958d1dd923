"""space_robot_scenario: config/nodes.yaml as the one source of every node default, the old import paths of the
modules that moved out of space_robot_nodes, and the scenario's section readers."""
import copy
import dataclasses
import importlib
import sys

import pytest

from space_robot_dynamics.config_reader import ConfigReader, load_yaml_file
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.package_share import resolve
from space_robot_scenario import load_scenario, node_config, parse_overrides

SHIPPED = load_yaml_file(resolve("config/nodes.yaml")).data


def _leaves(data, prefix=()):
    for key, value in data.items():
        if isinstance(value, dict) and value:
            yield from _leaves(value, (*prefix, key))
        else:
            yield (*prefix, key), value


def _without(data, path):
    out = copy.deepcopy(data)
    node = out
    for key in path[:-1]:
        node = node[key]
    del node[path[-1]]
    return out


def _changed(value):
    """Another valid value of the same kind (topics renamed, numbers doubled, flags flipped)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value * 2
    if isinstance(value, str):
        return f"changed/{value}" if value else "changed_frame"
    if isinstance(value, list):
        return [_changed(v) for v in value]
    if isinstance(value, dict):
        return {k: _changed(v) for k, v in value.items()}
    return value


def _config(data):
    return dataclasses.replace(node_config.read_nodes_config(ConfigReader(data, "nodes test")), source=None)


def test_no_node_default_is_written_in_code(monkeypatch):
    """Every value read from an empty nodes file comes from the shipped YAML: with every leaf of that YAML changed,
    an empty file reads the changed values, and none of the old ones. A value written in code would keep its value
    (tried: grasp_events="grasp/events" in node_config.py fails here)."""
    changed = {k: _changed(v) for k, v in SHIPPED.items()}
    changed["sawyer_adapter"]["timeout_behaviour"] = "zero_torque"
    changed["sawyer_adapter"]["command_timeout"] = 0.01
    changed["sawyer_adapter"]["suppress_rate"] = 20.0
    changed["controller"]["setpoint_norm_tolerance"] = 0.25
    changed["visualization"]["end_effector_frame"] = "right_hand"
    monkeypatch.setattr(node_config, "_shipped", lambda: changed)
    config = _config({})
    assert config == _config(changed)
    strings = {v for _, v in _leaves(SHIPPED) if isinstance(v, str) and "/" in v}
    read = {v for _, v in _leaves(dataclasses.asdict(config)) if isinstance(v, str)}
    assert not strings & read, sorted(strings & read)


def _entries():
    """Every leaf of the shipped file, and each subtree mapping (taken whole) as one entry."""
    whole = [tuple(w.split(".")) for w in node_config.WHOLE_MAPPINGS]
    leaves = [p for p, _ in _leaves(SHIPPED) if not any(p[:len(w)] == w for w in whole)]
    present = [w for w in whole if w[0] in SHIPPED and w[1] in SHIPPED[w[0]] and w[2] in SHIPPED[w[0]][w[1]]]
    return leaves + present


@pytest.mark.parametrize("path", _entries(), ids=lambda p: ".".join(p))
def test_a_key_left_out_takes_the_shipped_value(path):
    assert _config(_without(SHIPPED, path)) == _config(SHIPPED)


def test_subtree_mappings_are_taken_whole():
    """Odometry topics and rates are keyed by subtree: a file's own mapping replaces the shipped one (an empty one
    means no floating base), it is not merged with the shipped subtrees."""
    config = _config({"dynamics": {"topics": {"odometry": {"robot": "robot/odom"}},
                                   "rates": {"odometry": {}}}})
    assert config.dynamics.odometry == {"robot": "robot/odom"}
    assert config.dynamics.odometry_rates == {}
    assert config.controller.odometry == {"servicer": "base/odom", "target": "target/odom"}
    assert _config({"dynamics": {"topics": {"odometry": {}}}}).dynamics.odometry == {}


def test_a_bad_entry_is_named_in_the_file_that_gave_it():
    with pytest.raises(ConfigError, match=r"dynamics\.topics\.joint_states: must be a relative topic name"):
        _config({"dynamics": {"topics": {"joint_states": "/absolute"}}})
    with pytest.raises(ConfigError, match=r"dynamics\.rates\.tipo: unknown key"):
        _config({"dynamics": {"rates": {"tipo": 3.0}}})


@pytest.mark.parametrize("old, name, new", [
    ("space_robot_nodes.scenario", "load_scenario", "space_robot_scenario.scenario"),
    ("space_robot_nodes.scenario", "parse_overrides", "space_robot_scenario.overrides"),
    ("space_robot_nodes.scenario", "TrajectoryGoal", "space_robot_scenario.goals"),
    ("space_robot_nodes.node_config", "read_nodes_config", "space_robot_scenario.node_config"),
    ("space_robot_nodes.robot_descriptions", "robot_descriptions", "space_robot_scenario.robot_descriptions"),
    ("space_robot_nodes.capture_goals", "with_capture_plan", "space_robot_scenario.capture_plan"),
])
def test_the_old_paths_still_work_for_one_release_and_say_where_to_go(old, name, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to space_robot_scenario"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError, match="no_such_name"):
        module.no_such_name     # noqa: B018


def test_the_old_package_names_still_work_for_one_release():
    import space_robot_nodes
    import space_robot_scenario

    with pytest.warns(DeprecationWarning, match="space_robot_nodes.load_scenario moved to space_robot_scenario"):
        assert space_robot_nodes.load_scenario is space_robot_scenario.load_scenario
    assert "load_scenario" not in space_robot_nodes.__all__


def test_a_set_in_a_file_the_scenario_does_not_have_is_refused():
    """seed000_flexible_link runs open loop (`controller: null`): a controller entry set on it would be silently
    ignored, so it is refused, naming the --set."""
    with pytest.raises(ConfigError, match=r"--set controller\.controller\.rate=500.*controller: is null"):
        load_scenario("seed000_flexible_link", parse_overrides(["controller.controller.rate=500"]))
