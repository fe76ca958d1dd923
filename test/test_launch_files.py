"""ROS 2 bring-up files that can be checked without ROS: launch files parse and define
generate_launch_description, the executables they start are console scripts of this package, the RViz
config reads the topics the nodes publish, and the rclpy glue imports (and explains itself) without rclpy."""
from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest
import yaml

from space_robot_nodes.node_config import load_nodes_config

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
    ours = [name for name in started if name not in ("robot_state_publisher", "rviz2")]
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
    for expected in ("RobotModel:/robot_description", "RobotModel:/target/robot_description",
                     f"Odometry:/{odometry['servicer']}", f"Odometry:/{odometry['target']}",
                     f"Marker:/{nodes.monitor.marker}"):
        assert expected in topics, expected
    prefixes = {d["Description Topic"]["Value"]: d["TF Prefix"] for d in displays if "TF Prefix" in d}
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
