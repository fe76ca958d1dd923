"""The public API: the names each package exports, imported on first use, and scenarios by the names the CLI takes.

The examples of docs/python_api.md are run by test_python_api_doc.py.
"""
import importlib
import subprocess
import sys

import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_runtime.cli import scenario_path
from space_robot_scenario import find_scenario, load_scenario

PACKAGES = ["space_robot_dynamics", "space_robot_control", "space_robot_monitoring", "space_robot_sensing",
            "space_robot_estimation", "space_robot_scenario", "space_robot_nodes", "space_robot_runtime",
            "space_robot_identification", "space_robot_campaign"]
# names docs/python_api.md promises, and where each lives
REQUIRED = {
    "space_robot_dynamics": {"SystemModel": "model.system_model", "build_model": "model.system_model",
                             "read_model_config": "model.model_config", "Simulator": "simulation.simulator",
                             "SimulationSettings": "simulation.simulator",
                             "momentum_about_point": "simulation.system_momentum"},
    "space_robot_control": {"ServicerController": "servicer_controller"},
    "space_robot_monitoring": {"HolonomyMonitor": "holonomy_monitor", "ThesisMomentumModel": "momentum_matrices",
                               "MechanicalConnection": "mechanical_connection", "Fibre": "mechanical_connection",
                               "CentroidalMomentum": "momentum_matrices", "subtree_partition": "system_partition"},
    "space_robot_sensing": {"read_sensor_suite": "sensor_suite", "Gyro": "gyro", "StarTracker": "star_tracker",
                            "RelativePoseSensor": "relative_pose_sensor"},
    "space_robot_estimation": {"AttitudeFilter": "attitude_filter", "nees": "consistency"},
    "space_robot_scenario": {"load_scenario": "scenario", "parse_overrides": "overrides",
                             "RobotDescription": "robot_descriptions", "NodesConfig": "node_config"},
    "space_robot_nodes": {"DynamicsCore": "dynamics_core", "ControllerCore": "controller_core"},
    "space_robot_runtime": {"SimulationRun": "simulation_run"},
    "space_robot_identification": {"load_identification_config": "identification_config",
                                   "ParameterizedSimulation": "parameterized_simulation", "fit": "fitting"},
    "space_robot_campaign": {"load_campaign": "campaign_config", "run_campaign": "campaign_run",
                             "RayExecutor": "executors", "InProcessExecutor": "executors"},
}


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_resolves(package):
    module = importlib.import_module(package)
    assert module.__all__ == sorted(set(module.__all__))
    for name in module.__all__:
        assert getattr(module, name) is not None
        assert name in dir(module)
    for name, submodule in REQUIRED[package].items():
        assert name in module.__all__
        assert getattr(module, name) is getattr(importlib.import_module(f"{package}.{submodule}"), name)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'no_such_name'"):
        module.no_such_name      # noqa: B018


def test_importing_a_package_is_cheap_and_ros_free():
    """The packages import their names on first use: importing one loads neither Pinocchio nor SciPy, and no
    exported name brings in rclpy."""
    code = ("import sys\n"
            f"for p in {PACKAGES!r}: __import__(p)\n"
            "heavy = [m for m in ('pinocchio', 'scipy', 'rclpy', 'matplotlib', 'ray', 'pyarrow') if m in sys.modules]\n"
            "assert not heavy, heavy\n"
            "for p in " + repr(PACKAGES) + ":\n"
            "    m = sys.modules[p]\n"
            "    for n in m.__all__: getattr(m, n)\n"
            "assert 'rclpy' not in sys.modules\n"
            "assert 'ray' not in sys.modules and 'pyarrow' not in sys.modules\n")   # the [campaign] extra: when used
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("text", ["servicer_pregrasp", "servicer_pregrasp.yaml",
                                  "config/scenarios/servicer_pregrasp.yaml"])
def test_load_scenario_takes_the_names_the_cli_takes(text):
    assert find_scenario(text) == scenario_path(text)
    assert load_scenario(text).name == "servicer_pregrasp"


def test_load_scenario_takes_a_path_in_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "mine.yaml").write_text(find_scenario("sawyer_lab").read_text())
    monkeypatch.chdir(tmp_path)
    assert find_scenario("mine.yaml") == scenario_path("mine.yaml") == tmp_path / "mine.yaml"
    assert load_scenario("mine.yaml").name == "sawyer_lab"
    with pytest.raises(ConfigError, match="scenario: 'nothing_here': no such file"):
        load_scenario("nothing_here")


def test_no_exported_name_is_shadowed_by_a_submodule():
    """Importing a package's submodule sets it as an attribute of the package: an exported function named like its
    module (space_robot_monitoring.thesis_criterion was the module thesis_criterion.py once HolonomyMonitor had been
    imported) then resolves to the module. Every submodule is imported first, in a fresh interpreter."""
    code = ("import importlib, pkgutil, types, warnings\n"
            "warnings.simplefilter('ignore', DeprecationWarning)     # the moved modules' old paths\n"
            f"for p in {PACKAGES!r}:\n"
            "    package = importlib.import_module(p)\n"
            "    for info in pkgutil.walk_packages(package.__path__, p + '.'):\n"
            "        private = info.name.rsplit('.', 1)[-1].startswith('_')     # e.g. the ctypes library\n"
            "        if not private and not info.name.startswith('space_robot_nodes.ros'):     # rclpy glue\n"
            "            importlib.import_module(info.name)\n"
            "    shadowed = [n for n in package.__all__ if isinstance(getattr(package, n), types.ModuleType)]\n"
            "    assert not shadowed, (p, shadowed)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
