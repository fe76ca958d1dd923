"""Scenario loading: names, overrides (reach, blame), YAML 1.2 numbers, relative files, and everything that can
be checked before a run starts (goals by the controller's own rules, initial state, timer periods)."""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

from space_robot_dynamics.config_reader import load_yaml_file, parse_yaml
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.package_share import resolve
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import find_scenario, load_scenario, parse_overrides, shipped_scenarios

DEFAULT = "servicer_pregrasp"


def scenario_with(*sets):
    return load_scenario(DEFAULT, parse_overrides(list(sets)))


def test_load_scenario_takes_what_the_cli_takes():
    by_name = load_scenario("servicer_pregrasp")
    assert load_scenario("servicer_pregrasp.yaml").name == by_name.name
    assert load_scenario("config/scenarios/servicer_pregrasp.yaml").source == by_name.source
    assert load_scenario(resolve("config/scenarios/servicer_pregrasp.yaml")).source == by_name.source
    assert {"servicer_pregrasp", "sawyer_lab"} <= set(shipped_scenarios())
    with pytest.raises(ConfigError, match=r"'nope': no such file .*which has: .*servicer_pregrasp"):
        find_scenario("nope")


@pytest.mark.parametrize("text, value", [("1.0e30", 1.0e30), ("1e3", 1000.0), ("5e-4", 5e-4), ("2.5E+2", 250.0),
                                         ("-.5", -0.5), (".inf", float("inf")), ("1.5", 1.5)])
def test_yaml_numbers_follow_yaml_1_2(text, value):
    parsed = parse_yaml(f"x: {text}")["x"]
    assert isinstance(parsed, float) and parsed == value


def test_an_exponent_without_a_dot_is_a_number_in_files_and_in_overrides(tmp_path):
    # PyYAML (YAML 1.1) reads 1.0e30 as the string '1.0e30': "must be a number, got '1.0e30'"
    model = tmp_path / "model.yaml"
    model.write_text(resolve("config/models/servicer_target.yaml").read_text()
                     .replace("max_speed: 628.3", "max_speed: 1.0e30"))
    assert load_yaml_file(model).data["reaction_wheels"]["max_speed"] == 1.0e30
    scenario = scenario_with(f"model={model}", "simulation.dt=1e-3", "evaluation.requirements.max_attitude_error=1e-3")
    assert scenario.model.wheel_max_speed == 1.0e30 and scenario.simulation.dt == 1e-3


def test_set_reaches_the_scenario_itself_and_nested_list_entries():
    scenario = scenario_with("simulation.dt=0.0005", "duration=3", "recording.rate=50",
                             "model.subtrees.servicer.xacro_args.wheel_layout=pyramid",
                             "model.subtrees.1.frame_prefix=tgt/",
                             "initial_state.target.angular_velocity=[0.0, 0.0, 0.05]")
    assert scenario.simulation.dt == 0.0005 and scenario.duration == 3.0 and scenario.recording.rate == 50.0
    assert scenario.model.subtrees[0].xacro_args == {"wheel_layout": "pyramid"}
    assert scenario.model.subtrees[1].frame_prefix == "tgt/"
    assert scenario.initial_state_data["target"]["angular_velocity"] == [0.0, 0.0, 0.05]
    assert [o.field for o in scenario.overrides][:3] == ["simulation.dt", "duration", "recording.rate"]


def test_the_target_mass_properties_are_scaled_by_its_xacro_arguments():
    """urdf/target.urdf.xacro: mass 1500 kg and principal moments 300 kg m^2 times the scale factors."""
    scenario = scenario_with("model.subtrees.target.xacro_args.mass_scale=0.9",
                             "model.subtrees.target.xacro_args.inertia_scale_x=1.2",
                             "model.subtrees.target.xacro_args.inertia_scale_z=0.8")
    system = SystemModel(scenario.model)
    inertia = system.model.inertias[system.subtree("target").root_joint_id]
    assert inertia.mass == pytest.approx(1350.0, rel=1e-12)
    assert np.allclose(inertia.inertia, np.diag([360.0, 300.0, 240.0]), rtol=1e-12, atol=0)
    nominal = SystemModel(scenario_with().model)
    assert nominal.model.inertias[nominal.subtree("target").root_joint_id].mass == 1500.0


@pytest.mark.parametrize("args, message", [
    ({"inertia_scale_z": 2.5}, r"link\[target/base_link\].inertial.inertia: is not a physical inertia tensor"),
    ({"mass_scale": "heavy"}, r"xacro failed on .*target.urdf.xacro: could not convert string to float: 'heavy'"),
])
def test_unphysical_target_scale_factors_are_refused_when_the_model_is_built(args, message):
    overrides = [f"model.subtrees.target.xacro_args.{k}={v}" for k, v in args.items()]
    with pytest.raises(ConfigError, match=message):
        SystemModel(scenario_with(*overrides).model)


def test_the_pyramid_wheels_are_one_set_away():
    scenario = scenario_with("model=config/models/servicer_target_pyramid.yaml")
    run = SimulationRun(scenario)
    assert run.system.wheel_joints == ("rw_1_joint", "rw_2_joint", "rw_3_joint", "rw_4_joint")
    assert run.servicer_controller.wheel_joints == run.system.wheel_joints


@pytest.mark.parametrize("item, message", [
    ("simulation.dt=-1", r"^--set simulation.dt=-1: simulation.dt: must be > 0"),
    ("duration=0", r"^--set duration=0: duration: must be > 0"),
    ("model.gravity=[1]", r"^--set model.gravity=\[1\]: gravity: must have 3 entries, got 1 \(in .*servicer_target"),
    ("model.subtrees.servicer.xacro_args=3", r"^--set model.subtrees.servicer.xacro_args=3: subtrees\[0\].xacro_args"),
    ("model.subtrees.target.xacro_args.inertia_scale=1.1",
     r"^--set model.subtrees.target.xacro_args.inertia_scale=1.1: subtrees\[1\].xacro_args.inertia_scale: is not an "
     r"argument of target.urdf.xacro \(its arguments: inertia_scale_x, inertia_scale_y, inertia_scale_z, mass_scale\)"),
    ("model.subtrees.target.xacro_args.mass_scale=[1]", r"xacro_args.mass_scale: must be a string, number or boolean"),
    ("model.subtrees.hubble.name=x", r"^--set model.subtrees.hubble.name=x: subtrees: has no entry 'hubble' .*"
                                     r"'servicer', 'target'"),
    ("model.gravity.x=1", r"^--set model.gravity.x=1: gravity: has no entry 'x'"),
    ("model.name.first=a", r"^--set model.name.first=a: name: is 'servicer_target', neither a mapping nor a list"),
    ("nodes.dynamics.rates.state=500", r"^--set nodes.dynamics.rates.state=500: dynamics.rates.state: 500 Hz is below"),
    ("controller.joint_tracking.damping_ratio=no", r"^--set controller.joint_tracking.damping_ratio=no: "
                                                   r"joint_tracking.damping_ratio: must be a number"),
    ("monitor=nofile.yaml", r"^--set monitor=nofile.yaml: monitor: no file 'nofile.yaml': looked next to the file"),
])
def test_a_bad_override_is_blamed_on_the_override_not_on_the_file(item, message):
    with pytest.raises(ConfigError, match=message):
        scenario_with(item)


def test_the_scenarios_own_overrides_are_blamed_on_the_scenario(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(resolve("config/scenarios/sawyer_lab.yaml").read_text()
                    .replace("gravity: [0.0, 0.0, 0.0]", "gravity: [0.0, 0.0]"))
    with pytest.raises(ConfigError, match=rf"^{path}: overrides.model.gravity: gravity: must have 3 entries"):
        load_scenario(path)


def write_scenario(tmp_path, replace: dict[str, str]):
    text = resolve("config/scenarios/servicer_pregrasp.yaml").read_text()
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return load_scenario(path)


GOAL = "      - time_from_start: 6.0\n        positions: [0.297419, -0.565761, -0.910255, 1.743777, -0.247794, " \
       "-1.160595, -0.542281]"


@pytest.mark.parametrize("replacement, message", [
    (GOAL + "\n      - time_from_start: 5.0\n        positions: [0, 0, 0, 0, 0, 0, 0]",
     r"goals.trajectory.points\[1\].time_from_start: must be > points\[0\].time_from_start \(6.0 s\), got 5.0 s"),
    (GOAL.replace("1.743777", "3.5"), r"goals.trajectory.points\[0\].positions: right_j3 = 3.5 rad is outside its "
                                       r"limits"),
    (GOAL.replace("time_from_start: 6.0", "time_from_start: 0.0"),
     r"goals.trajectory.points\[0\].positions: a first point at time_from_start 0 must match the current state"),
])
def test_a_goal_the_controller_would_refuse_is_refused_at_load(replacement, message, tmp_path):
    scenario = write_scenario(tmp_path, {GOAL: replacement})
    with pytest.raises(ConfigError, match=message) as raised:
        SimulationRun(scenario)
    assert raised.value.source == scenario.source


def test_a_goal_for_a_controller_without_tracking_is_refused_at_load():
    with pytest.raises(ConfigError, match=r"goals.trajectory.trajectory: joint_tracking mode is off"):
        SimulationRun(scenario_with("controller.controller.modes=[attitude_hold]"))
    SimulationRun(scenario_with("controller.controller.modes=[attitude_hold]", "goals.trajectory=null"))


def test_an_initial_state_beyond_the_joint_limits_is_refused_at_load(tmp_path):
    scenario = write_scenario(tmp_path, {"    right_j3: 2.2": "    right_j3: 3.2"})
    with pytest.raises(ConfigError, match=r"initial_state.joint_positions.right_j3: 3.2 is outside the joint's "
                                          r"position limits \[-3.04\d*, 3.04\d*\]"):
        SimulationRun(scenario)


def test_a_period_that_is_not_whole_steps_names_the_file_the_setting_and_the_fix():
    scenario = scenario_with("nodes.dynamics.rates.momentum=300")
    with pytest.raises(ConfigError) as raised:
        SimulationRun(scenario)
    error = raised.value
    assert error.source == str(scenario.files["nodes"]) and error.field == "dynamics.rates.momentum"
    assert "choose a rate that divides 1000 Hz, e.g. 333.333 Hz, or a simulation.dt that divides" in error.problem


def test_a_scenario_file_that_is_not_text_or_not_a_mapping(tmp_path):
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"name: x\x00\x01")
    with pytest.raises(ConfigError, match="binary file"):
        load_scenario(binary)
    listing = tmp_path / "l.yaml"
    listing.write_text(textwrap.dedent("""\
        - a
        - b
        """))
    with pytest.raises(ConfigError, match="<root>: must be a mapping, got list"):
        load_scenario(listing)


def test_declared_xacro_arguments_follow_relative_includes_and_give_up_on_others(tmp_path):
    from space_robot_dynamics.model.urdf_source import declared_arguments

    assert declared_arguments(resolve("urdf/servicer.urdf.xacro")) >= {"wheel_layout"}
    (tmp_path / "part.xacro").write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
                                         '<xacro:arg name="inner" default="1"/></robot>')
    main = tmp_path / "main.urdf.xacro"
    main.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:arg name="outer" default="1"/>'
                    '<xacro:include filename="part.xacro"/></robot>')
    assert declared_arguments(main) == {"outer", "inner"}
    main.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
                    '<xacro:include filename="$(find other)/part.xacro"/></robot>')
    assert declared_arguments(main) is None
