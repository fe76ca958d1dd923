"""Shared fixtures: models are built once per session (xacro expansion and URDF parsing take ~0.1 s)."""
import pytest

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel


@pytest.fixture(scope="session")
def servicer_target() -> SystemModel:
    return SystemModel(load_model_config("config/models/servicer_target.yaml"))
