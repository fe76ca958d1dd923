"""A model file's `sensors:` section reaches the scenario, validated at load; shipped scenarios declare none."""
import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_scenario import load_scenario, parse_overrides
from space_robot_scenario.scenario import shipped_scenarios

SHARE_MODEL = "config/models/servicer_target.yaml"
SENSORS = """
sensors:
  seed: 4
  gyro: {rate: 100.0, angle_random_walk: 2.9e-6, rate_random_walk: 1.0e-8, saturation: 0.35}
  star_tracker: {rate: 10.0, cross_boresight: 5.0e-6, about_boresight: 4.0e-5, latency: 0.1}
  target_pose:
    rate: 5.0
    latency: 0.2
    position_noise: {at_zero_range: 0.002, per_metre: 0.004}
    attitude_noise: {at_zero_range: 0.002, per_metre: 0.003}
    field_of_view: 0.7
    max_range: 20.0
"""


def scenario_with(tmp_path, sensors: str):
    from space_robot_dynamics.package_share import resolve

    model = tmp_path / "sensed_model.yaml"
    model.write_text(resolve(SHARE_MODEL).read_text() + sensors)
    scenario = tmp_path / "sensed.yaml"
    scenario.write_text(f"name: sensed\nmodel: {model}\nduration: 1.0\n")
    return scenario


def test_the_sensors_of_a_model_file_reach_the_scenario(tmp_path):
    scenario = load_scenario(scenario_with(tmp_path, SENSORS))
    assert scenario.sensors.seed == 4
    assert list(scenario.sensors.sensors) == ["gyro", "star_tracker", "target_pose"]
    built = scenario.sensors.build()
    assert built["gyro"].config.saturation == 0.35


def test_sensor_settings_take_set_overrides_of_the_model_file(tmp_path):
    scenario = load_scenario(scenario_with(tmp_path, SENSORS), parse_overrides(["model.sensors.seed=9"]))
    assert scenario.sensors.seed == 9


@pytest.mark.parametrize("text, words", [
    (SENSORS.replace("rate: 100.0", "rate: -1.0"), "sensors.gyro.rate: must be > 0"),
    (SENSORS.replace("  seed: 4\n", "  seed: 4\n  lidar: {}\n"), "sensors.lidar: unknown key"),
    (SENSORS.replace("max_range: 20.0", "max_range: .nan"), "sensors.target_pose.max_range: must be finite"),
])
def test_a_bad_sensors_section_is_refused_at_load_naming_the_model_file_and_field(tmp_path, text, words):
    with pytest.raises(ConfigError, match="sensed_model.yaml: " + words):
        load_scenario(scenario_with(tmp_path, text))


SENSED_SCENARIOS = ("capture_sensed",)          # the shipped scenarios that turn sensing on


def test_only_the_sensed_scenarios_declare_sensors():
    """The seed scenarios' figures stay as they were: sensing is on in the scenarios made for it only."""
    for path in shipped_scenarios():
        scenario = load_scenario(path)
        sensed = path in SENSED_SCENARIOS
        assert bool(scenario.sensors.sensors) == sensed, path
        assert (scenario.estimators is not None) == sensed, path
        assert scenario.state_source.any_estimates == sensed, path


def test_the_example_of_docs_sensing_md_is_a_valid_sensors_section():
    import re
    from pathlib import Path

    import yaml

    from space_robot_dynamics.config_reader import ConfigReader
    from space_robot_sensing.sensor_suite import SENSOR_NAMES, read_sensor_suite

    text = (Path(__file__).resolve().parents[1] / "docs" / "sensing.md").read_text()
    block = re.search(r"```yaml\n(sensors:.*?)```", text, re.S).group(1)
    suite = read_sensor_suite(ConfigReader(yaml.safe_load(block)["sensors"], "docs/sensing.md", "sensors"))
    assert tuple(suite.sensors) == SENSOR_NAMES               # every sensor shown
