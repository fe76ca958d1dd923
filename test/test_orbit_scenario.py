"""A scenario's `orbit:` section at load (docs/orbit.md sec. 1): the switch, and what it refuses, naming the field."""
import math

import pytest

from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_nodes.controller_core import ControllerCore
from space_robot_nodes.message_types import RosbagsMessageTypes
from space_robot_scenario.scenario import load_scenario

ORBIT = {"altitude": 770000.0, "inclination_deg": 98.5}


def test_envisat_capture_is_in_orbit_and_a_null_orbit_is_free_space():
    scenario = load_scenario("envisat_capture")
    assert scenario.orbit.j2 and scenario.orbit.semi_major_axis == pytest.approx(6378137.0 + 770000.0)
    assert scenario.mean_motion == pytest.approx(math.sqrt(3.986004418e14 / (6378137.0 + 770000.0) ** 3))
    assert "station_keeping" in scenario.controller.modes
    assert load_scenario("envisat_capture", {"scenario": {"orbit": None}}).orbit is None
    assert load_scenario("capture").orbit is None and load_scenario("capture").mean_motion == 0.0


@pytest.mark.parametrize("name, field, words", [
    ("sawyer_lab", "subtrees[0].base_joint", "held to the world frame"),
    ("capture_sensed", "sensors", "not modelled yet"),
])
def test_a_model_that_cannot_be_in_orbit_is_refused_naming_the_field(name, field, words):
    with pytest.raises(ConfigError) as error:
        load_scenario(name, {"scenario": {"orbit": ORBIT}})
    assert field in str(error.value) and words in str(error.value)
    assert "config/models/" in str(error.value)           # the model file's field, named in its file


def test_uniform_gravity_and_an_orbit_are_refused_together():
    with pytest.raises(ConfigError, match="gravity"):
        load_scenario("capture", {"scenario": {"orbit": ORBIT}, "model": {"gravity": [0.0, 0.0, -9.81]}})


def test_station_keeping_needs_thrusters_on_the_bus():
    scenario = load_scenario("capture", {"controller": {"controller.modes": ["joint_tracking", "attitude_hold",
                                                                              "station_keeping"]}})
    system = SystemModel(scenario.model)
    with pytest.raises(ConfigError, match="controller.modes: station_keeping needs base thrusters"):
        ControllerCore(RosbagsMessageTypes(), ServicerController(system, scenario.controller),
                       scenario.nodes.controller)
