"""Shared fixtures: models are built once per session (xacro expansion and URDF parsing take ~0.1 s).

The `compiled_step` marker (setup.cfg): a test that needs the compiled flexible step, the C++ library the install
builds (space_robot_dynamics/simulation/_flexible_step*.so). When the library is missing, such a test fails with the
reason, or is skipped with it under SPACE_ROBOT_PYTHON_STEP_ONLY=1 (a machine that cannot build it)."""
import os

import pytest

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.model.model_config import load_model_config, read_model_config
from space_robot_dynamics.model.system_model import SystemModel


@pytest.fixture(scope="session")
def servicer_target() -> SystemModel:
    return SystemModel(load_model_config("config/models/servicer_target.yaml"))


@pytest.fixture(scope="session")
def pyramid() -> SystemModel:
    """The servicer with four reaction wheels in a pyramid (xacro wheel_layout), no target."""
    data = {"name": "pyramid", "arm_joints": [f"right_j{i}" for i in range(7)],
            "subtrees": [{"name": "servicer", "urdf": "urdf/servicer.urdf.xacro", "base_joint": "free_flyer",
                          "base_link": "base_link", "xacro_args": {"wheel_layout": "pyramid"}}],
            "reaction_wheels": {"joints": ["rw_1_joint", "rw_2_joint", "rw_3_joint", "rw_4_joint"],
                                "max_torque": 0.2, "max_speed": 628.3}}
    return SystemModel(read_model_config(ConfigReader(data, source="test")))


def pytest_runtest_setup(item):
    """Runs before the test's fixtures are set up: a missing library costs no fixture."""
    if item.get_closest_marker("compiled_step") is None:
        return
    from space_robot_dynamics.simulation.compiled_flexible_step import load
    library, error = load()
    if library is None:
        if os.environ.get("SPACE_ROBOT_PYTHON_STEP_ONLY") == "1":
            pytest.skip(f"SPACE_ROBOT_PYTHON_STEP_ONLY=1: {error}")
        pytest.fail(f"the compiled flexible step is missing: {error}", pytrace=False)
