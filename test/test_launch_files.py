"""ROS 2 bring-up files that can be checked without ROS: launch files parse and define
generate_launch_description, the executables they start are console scripts of this package, the RViz
config reads the topics the nodes publish, and the rclpy glue imports (and explains itself) without rclpy."""
from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from space_robot_scenario.node_config import load_nodes_config

ROOT = Path(__file__).resolve().parents[1]
LAUNCH_FILES = sorted((ROOT / "launch").glob("*.launch.py"))


def console_scripts() -> dict[str, str]:
    tree = ast.parse((ROOT / "setup.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == "console_scripts":
                    entries = [ast.literal_eval(e) for e in value.elts]
                    return {name.strip(): target.strip() for name, _, target in (e.partition("=") for e in entries)}
    raise AssertionError("setup.py declares no console_scripts")


def test_there_are_launch_files():
    assert {p.name for p in LAUNCH_FILES} >= {"simulation.launch.py", "sawyer.launch.py"}


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_parses_and_defines_generate_launch_description(path):
    source = path.read_text()
    tree = ast.parse(source, filename=str(path))
    compile(tree, str(path), "exec")
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert "generate_launch_description" in functions
    # every executable of this package that the file starts is an installed console script
    scripts = console_scripts()
    started = [kw.value.value for n in ast.walk(tree) if isinstance(n, ast.Call)
               for kw in n.keywords if kw.arg == "executable" and isinstance(kw.value, ast.Constant)]
    ours = [name for name in started if name not in ("robot_state_publisher", "rviz2", "static_transform_publisher")]
    assert ours and all(name in scripts for name in ours), (ours, sorted(scripts))


def test_console_scripts_point_at_callables():
    scripts = console_scripts()
    assert {"space-robot-sim", "space-robot-plot", "dynamics_node", "controller_node", "holonomy_monitor_node",
            "sawyer_command_adapter"} <= set(scripts)
    for name, target in scripts.items():
        module, _, function = target.partition(":")
        assert callable(getattr(importlib.import_module(module), function)), name


def test_rviz_config_shows_the_published_topics():
    config = yaml.safe_load((ROOT / "rviz" / "space_robot.rviz").read_text())
    displays = config["Visualization Manager"]["Displays"]
    assert config["Visualization Manager"]["Global Options"]["Fixed Frame"] == "world"
    topics = {d["Class"].split("/")[-1] + ":" + (d.get("Topic") or d.get("Description Topic") or {}).get("Value", "")
              for d in displays}
    nodes = load_nodes_config(ROOT / "config" / "nodes.yaml")
    odometry = nodes.dynamics.odometry
    throttled = nodes.dynamics.throttled_odometry
    for expected in ("RobotModel:/robot_description", "RobotModel:/target/robot_description",
                     f"Odometry:/{throttled['servicer']}", f"Odometry:/{throttled['target']}",
                     f"Marker:/{nodes.monitor.marker}"):
        assert expected in topics, expected
    assert set(odometry) == set(throttled)
    prefixes = {d["Description Topic"]["Value"]: d["TF Prefix"] for d in displays if "Description Topic" in d}
    assert prefixes == {"/robot_description": "", "/target/robot_description": "target"}
    latched = [d["Description Topic"]["Durability Policy"] for d in displays if "Description Topic" in d]
    assert latched == ["Transient Local", "Transient Local"]


@pytest.mark.parametrize("module", ["dynamics_node", "controller_node", "holonomy_monitor_node",
                                    "sawyer_command_adapter", "scenario_player_node"])
def test_glue_imports_and_explains_itself_without_rclpy(module, capsys):
    glue = importlib.import_module(f"space_robot_nodes.ros.{module}")
    assert callable(glue.main) and callable(glue.build)
    if importlib.util.find_spec("rclpy") is None:          # with ROS, the launch test runs the nodes instead
        assert glue.main([]) == 1
        assert "rclpy is not available" in capsys.readouterr().err


# ---- executing the launch files against a stand-in of the launch API ------------------------------------
# It records how actions are constructed and runs opaque functions; it does not start processes, resolve
# substitutions other than LaunchConfiguration, nor handle signals: test/ros2 runs the launch files for real.
class _Action:
    """Records how a launch action or substitution was constructed."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


class _LaunchConfiguration(_Action):
    def perform(self, context: dict) -> str:      # launch.substitutions.LaunchConfiguration.perform(context)
        return context[self.args[0]]


class _OpaqueFunction(_Action):
    def execute(self, context: dict) -> list:     # what launch does with OpaqueFunction(function=f)
        return self.kwargs["function"](context)


def _stub_launch_api(monkeypatch) -> None:
    import types

    names = {"launch": ["LaunchDescription"], "launch.actions": ["DeclareLaunchArgument", "OpaqueFunction"],
             "launch.conditions": ["IfCondition"],
             "launch.substitutions": ["Command", "LaunchConfiguration", "PathJoinSubstitution"],
             "launch_ros": [], "launch_ros.actions": ["Node"], "launch_ros.parameter_descriptions": ["ParameterValue"],
             "launch_ros.substitutions": ["FindPackageShare"]}
    special = {"LaunchConfiguration": _LaunchConfiguration, "OpaqueFunction": _OpaqueFunction}
    for module_name, classes in names.items():
        module = types.ModuleType(module_name)
        for name in classes:
            setattr(module, name, special.get(name) or type(name, (_Action,), {}))
        monkeypatch.setitem(sys.modules, module_name, module)


def _launched_nodes(monkeypatch, launch_file: str, scenario: Path, **arguments) -> list[_Action]:
    """Every Node the launch file starts for `scenario` (and other launch arguments), opaque functions executed."""
    _stub_launch_api(monkeypatch)
    spec = importlib.util.spec_from_file_location("launch_under_test", ROOT / "launch" / launch_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    context = {"scenario": str(scenario), "use_sim_time": "true", "rviz": "false", "start_delay": "", "viewers": "",
               "joint_states": "/robot/joint_states", **arguments}
    nodes = []
    for action in module.generate_launch_description().args[0]:
        for item in action.execute(context) if isinstance(action, _OpaqueFunction) else [action]:
            if type(item).__name__ == "Node":
                nodes.append(item)
    return nodes


def _robot_state_publishers(nodes) -> dict[str, dict]:
    """frame_prefix -> {urdf root element, remappings, use_sim_time} of each robot_state_publisher."""
    out = {}
    for node in nodes:
        if node.kwargs["executable"] == "robot_state_publisher":
            params, sim_time = node.kwargs["parameters"]
            value = params["robot_description"]
            assert value.kwargs.get("value_type") is str      # launch_ros must not parse the URDF as YAML
            out[params["frame_prefix"]] = {"urdf": ET.fromstring(value.args[0]),
                                           "remappings": node.kwargs.get("remappings", []),
                                           "use_sim_time": sim_time["use_sim_time"], "name": node.kwargs["name"]}
    return out


def test_simulation_launch_describes_the_scenarios_model(monkeypatch):
    """Default scenario: the servicer (bus, wheels, Sawyer arm) on robot_description and the target with
    frame_prefix target/ on target/robot_description, as the RViz config reads them; the monitor runs."""
    nodes = _launched_nodes(monkeypatch, "simulation.launch.py",
                            ROOT / "config" / "scenarios" / "servicer_pregrasp.yaml")
    rsp = _robot_state_publishers(nodes)
    assert set(rsp) == {"", "target/"}
    servicer_links = {link.get("name") for link in rsp[""]["urdf"].findall("link")}
    assert {"base_link", "right_l6", "rw_x", "rw_y", "rw_z"} <= servicer_links
    assert "grapple_frame" in {link.get("name") for link in rsp["target/"]["urdf"].findall("link")}
    # both take the dynamics node's throttled joint states (they send /tf at 20 Hz whatever the input rate)
    throttled = ("joint_states", "joint_states_throttle")
    assert rsp[""]["remappings"] == [throttled]
    assert rsp["target/"]["remappings"] == [throttled, ("robot_description", "target/robot_description")]
    assert rsp[""]["name"] != rsp["target/"]["name"]
    assert all(r["use_sim_time"] is True for r in rsp.values())
    assert "holonomy_monitor_node" in {n.kwargs["executable"] for n in nodes}


def test_simulation_launch_follows_another_scenario(monkeypatch):
    """The bench Sawyer scenario (fixed base, no monitor): one robot_state_publisher with the Sawyer URDF,
    no target and no holonomy monitor (it would refuse a fixed-base model)."""
    nodes = _launched_nodes(monkeypatch, "simulation.launch.py", ROOT / "config" / "scenarios" / "sawyer_lab.yaml")
    rsp = _robot_state_publishers(nodes)
    assert list(rsp) == [""]
    joints = {j.get("name") for j in rsp[""]["urdf"].findall("joint") if j.get("type") == "revolute"}
    assert {f"right_j{i}" for i in range(7)} <= joints
    assert not {"rw_x", "grapple_frame"} & {link.get("name") for link in rsp[""]["urdf"].findall("link")}
    assert "holonomy_monitor_node" not in {n.kwargs["executable"] for n in nodes}


@pytest.mark.parametrize("launch_file, scenario, config, delay", [
    ("simulation.launch.py", "servicer_pregrasp.yaml", "space_robot.rviz", 10.0),
    ("simulation.launch.py", "sawyer_lab.yaml", "sawyer.rviz", 10.0),
    ("sawyer.launch.py", "sawyer_lab.yaml", "sawyer.rviz", None)])
def test_rviz_opens_the_scenarios_own_config(monkeypatch, launch_file, scenario, config, delay):
    """rviz:=true: RViz with the configuration the scenario names; the simulation holds t = 0 while RViz starts."""
    nodes = _launched_nodes(monkeypatch, launch_file, ROOT / "config" / "scenarios" / scenario, rviz="true")
    by_executable = {n.kwargs["executable"]: n for n in nodes}
    assert Path(by_executable["rviz2"].kwargs["arguments"][1]).name == config
    assert "visualization_node" in by_executable and "robot_state_publisher" in by_executable
    if delay is not None:
        assert by_executable["dynamics_node"].kwargs["parameters"][0]["start_delay"] == delay
    else:                  # the real arm: every viewer on the arm's own joint states
        remaps = [dict(n.kwargs.get("remappings", [])) for n in nodes
                  if n.kwargs["executable"] in ("robot_state_publisher", "visualization_node")]
        assert all("/robot/joint_states" in r.values() for r in remaps)
    without = _launched_nodes(monkeypatch, launch_file, ROOT / "config" / "scenarios" / scenario)
    assert "rviz2" not in {n.kwargs["executable"] for n in without}


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_runs_against_the_launch_api(monkeypatch, path):
    """generate_launch_description() and its opaque functions run (default scenarios) and start only console
    scripts of this package besides robot_state_publisher and rviz2."""
    defaults = {"simulation.launch.py": "servicer_pregrasp.yaml", "sawyer.launch.py": "sawyer_lab.yaml"}
    nodes = _launched_nodes(monkeypatch, path.name, ROOT / "config" / "scenarios" / defaults[path.name])
    ours = {n.kwargs["executable"] for n in nodes if n.kwargs["package"] == "space_robot"}
    assert ours and ours <= set(console_scripts())


def test_the_sawyer_viewers_run_without_rviz(monkeypatch):
    nodes = _launched_nodes(monkeypatch, "sawyer.launch.py", ROOT / "config" / "scenarios" / "sawyer_lab.yaml",
                            viewers="true")
    executables = {n.kwargs["executable"] for n in nodes}
    assert {"robot_state_publisher", "visualization_node"} <= executables and "rviz2" not in executables


def test_simulation_launch_starts_the_sensors_node_only_for_a_model_with_sensors(monkeypatch, tmp_path):
    from space_robot_dynamics.package_share import resolve

    model = tmp_path / "sensed_model.yaml"
    model.write_text(resolve("config/models/servicer_target.yaml").read_text()
                     + "\nsensors:\n  gyro: {rate: 100.0, angle_random_walk: 1.0e-4}\n")
    scenario = tmp_path / "sensed.yaml"
    scenario.write_text(f"name: sensed\nmodel: {model}\n")
    nodes = {n.kwargs["executable"]: n for n in _launched_nodes(monkeypatch, "simulation.launch.py", scenario)}
    assert nodes["sensors_node"].kwargs["parameters"][0] == {"scenario": str(scenario)}
    assert nodes["sensors_node"].kwargs["parameters"][1]["use_sim_time"] is True
    default = _launched_nodes(monkeypatch, "simulation.launch.py", ROOT / "config" / "scenarios" /
                              "servicer_pregrasp.yaml")
    assert "sensors_node" not in {n.kwargs["executable"] for n in default}
