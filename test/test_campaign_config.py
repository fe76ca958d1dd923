"""Campaign files: the shipped one loads; bad input is refused with the campaign field named, at load (the
file alone) or before any run (against the scenario: keys, values, figures)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from campaign_files import write_campaign

from space_robot_campaign.campaign_check import check_against_scenario
from space_robot_campaign.campaign_config import load_campaign
from space_robot_dynamics.errors import ConfigError


@pytest.mark.parametrize("name, runs, grid, cases, scenario, random", [
    ("pregrasp_robustness", 5 * 10, 5, 1, "servicer_pregrasp", ["tumble_axis", "target_mass_scale"]),
    ("capture_robustness", 4 * 6, 4, 1, "capture", ["tumble_axis", "target_mass_scale"]),
    ("capture_sensing_robustness", 4 * 3 * 2, 3, 4, "capture_sensed", ["tumble_axis"]),
    ("capture_orbit", 2 * 2 * 2, 2, 2, "capture", ["tumble_axis"]),
])
def test_the_shipped_campaigns_load_and_check_against_their_scenarios(name, runs, grid, cases, scenario, random):
    campaign = load_campaign(name)
    assert campaign.total_runs == runs and campaign.grid_points == grid and campaign.cases == cases
    assert campaign.scenario_argument == scenario
    assert [p.name for p in campaign.random_parameters][:len(random)] == random
    json.dumps(campaign.identity(), allow_nan=False)            # strict JSON, stored for --resume
    check_against_scenario(campaign)


def test_every_shipped_campaign_is_checked_above():
    shipped = sorted(path.stem for path in Path("config/campaigns").glob("*.yaml"))
    assert shipped == ["capture_orbit", "capture_robustness", "capture_sensing_robustness", "pregrasp_robustness"]


def test_list_cases_may_repeat_a_value_in_one_column_and_a_grid_may_not(tmp_path):
    """A list parameter's values go with the other lists' index by index (the cases), so a column repeats values
    (capture_sensing_robustness: estimates in three cases of four); a grid runs each value once."""
    cases = "  mode:\n    key: state_source.controller\n    list: [truth, estimates, estimates]\n" \
            "  noise:\n    key: model.gravity\n    list: [[0, 0, 0], [0, 0, 0], [0, 0, 1]]\n"
    campaign = load_campaign(write_campaign(tmp_path, {"parameters:\n": "parameters:\n" + cases}))
    assert campaign.cases == 3
    grid = "  mode:\n    key: state_source.controller\n    grid: [truth, truth]\n"
    with pytest.raises(ConfigError, match=r"parameters.mode.grid: has duplicate values"):
        load_campaign(write_campaign(tmp_path, {"parameters:\n": "parameters:\n" + grid}))


def test_a_small_campaign_and_its_defaults(tmp_path):
    campaign = load_campaign(write_campaign(tmp_path))
    assert campaign.total_runs == 4 and campaign.samples == 2 and campaign.seed_key is None
    assert campaign.parameter("axis").kind == "vector" and campaign.parameter("axis").size == 3
    assert campaign.parameter("rate").kind == "number" and campaign.report.percentiles == (5.0, 50.0, 95.0)


@pytest.mark.parametrize("replace, message", [
    ({"name: small": "name: 'a b'"}, r"name: must be letters"),
    ({"seed: 7\n": ""}, r"seed: is required: parameters axis, inertia_x draw random numbers"),
    ({"samples: 2": "samples: 0"}, r"samples: must be >= 1"),
    ({"grid: [0.0, 0.01]": "grid: [0.0, 0.01]\n    list: [1, 2]"}, r"parameters.rate.list: give exactly one of"),
    ({"grid: [0.0, 0.01]": "grid: []"}, r"parameters.rate.grid: must not be empty"),
    ({"grid: [0.0, 0.01]": "grid: {start: 0, stop: 1}"}, r"parameters.rate.grid.num: is required"),
    ({"grid: [0.0, 0.01]": "grid: {start: 0, stop: 1, num: 3, spacing: log}"},
     r"parameters.rate.grid.start: must be > 0 for a log spacing"),
    ({"grid: [0.0, 0.01]": "grid: [0.0, .nan]"}, r"parameters.rate.grid\[1\]: must be finite"),
    ({"low: 0.9, high: 1.1": "low: 1.1, high: 0.9"}, r"parameters.inertia_x.random.high: must be > low"),
    ({"distribution: uniform, low: 0.9, high: 1.1": "distribution: lognormal, median: 0, sigma: 0.1"},
     r"parameters.inertia_x.random.median: must be > 0"),
    ({"distribution: uniform, low: 0.9, high: 1.1": "distribution: normal, mean: [1, 1], std: [0.1]"},
     r"parameters.inertia_x.random.std: the lists of mean and std must have one length"),
    ({"distribution: uniform,": "distribution: poisson,"}, r"random.distribution: must be one of"),
    ({"scaled_by: rate": "scaled_by: axis"}, r"parameters.axis.scaled_by: must name another scalar parameter"),
    ({"    key: initial_state.target.angular_velocity\n": ""}, r"parameters.axis.key: is required|"
                                                             r"parameters.axis: has no key"),
    ({"    unit: rad/s\n": "    unit: rad/s\n    key: model.subtrees.target.xacro_args.inertia_scale_x\n"},
     r"parameters.inertia_x: key 'model.subtrees.target.xacro_args.inertia_scale_x' is set by more than one"),
    ({"  rate:\n": "  seed:\n"}, r"parameters.seed: a parameter name must be an identifier"),
    ({"set: [duration=0.2]": "set: [duration]"}, r"set: 'duration' is not KEY=VALUE"),
    ({"success: {max_attitude_error_rad: 1.0e-3}": "success: {final_goal_error_rad: 1.0e-3}"},
     r"success.final_goal_error_rad: is not one of the collected figures"),
    ({"worst_by: pregrasp.distance_m": "worst_by: wall_time_s"}, r"worst_by: must be one of"),
    ({"report: {worst_runs: 2}": "report: {confidence: 1.5}"}, r"report.confidence: must be <= 0.9999"),
    ({"report: {worst_runs: 2}": "report: {worst: 2}"}, r"report.worst: unknown key"),
    ({"figures:": "figure:"}, r"figure: unknown key|figures: is required"),
    ({"samples: 2\n": "samples: 2\nrepeat: 3\n"}, r"repeat: unknown key"),
])
def test_bad_campaign_files_are_refused_with_the_field_named(tmp_path, replace, message):
    path = write_campaign(tmp_path, replace)
    with pytest.raises(ConfigError, match=message) as raised:
        load_campaign(path)
    assert str(path) in str(raised.value)


def test_samples_without_anything_random_would_repeat_identical_runs(tmp_path):
    text = """
    name: grid_only
    scenario: servicer_pregrasp
    samples: 3
    parameters:
      dt: {key: simulation.dt, grid: [0.001, 0.0005]}
    figures: [max_attitude_error_rad]
    """
    with pytest.raises(ConfigError, match=r"samples: is 3, but no parameter is random and there is no seed_key"):
        load_campaign(write_campaign(tmp_path, text=text))


def test_list_parameters_need_one_length(tmp_path):
    replace = {"  rate:\n    unit: rad/s\n    grid: [0.0, 0.01]": "  rate:\n    list: [0.0, 0.01]\n"
               "  dt:\n    key: simulation.dt\n    list: [0.001, 0.0005, 0.00025]"}
    with pytest.raises(ConfigError, match=r"list parameters go together.*'rate': 2, 'dt': 3"):
        load_campaign(write_campaign(tmp_path, replace))


@pytest.mark.parametrize("replace, message", [
    # a misspelt key: refused by the scenario's own validation, blamed on the campaign's parameter
    ({"initial_state.target.angular_velocity": "initial_state.target.angular_velocty"},
     r"parameters.axis: initial_state.target.angular_velocty=.*: initial_state.target.angular_velocty: unknown key"),
    ({"xacro_args.inertia_scale_x": "xacro_args.inertia_x"},
     r"parameters.inertia_x: model.subtrees.target.xacro_args.inertia_x=.*is not an argument of target.urdf.xacro"),
    # a grid value a field refuses (every grid value is tried, not only the first)
    ({"grid: [0.0, 0.01]": "grid: [0.0, .inf]"}, r"rate.grid\[1\]: must be finite"),
    ({"set: [duration=0.2]": "set: [duration=-1]"}, r"set: duration=-1: duration: must be > 0"),
    ({"momentum_drift.max_angular_kg_m2_s]": "max_attitude_eror_rad]"},
     r"figures\[2\]: 'max_attitude_eror_rad': a run summary of servicer_pregrasp has no entry "
     r"'max_attitude_eror_rad' in its top level \(entries there: .*max_attitude_error_rad"),
    ({"momentum_drift.max_angular_kg_m2_s]": "pregrasp]"},
     r"figures\[2\]: 'pregrasp' is a group; collect one of its entries: pregrasp.angle_rad, pregrasp.distance_m"),
    ({"momentum_drift.max_angular_kg_m2_s]": "pregrasp.distance]"},
     r"figures\[2\]: .*no entry 'distance' in pregrasp"),
    ({"momentum_drift.max_angular_kg_m2_s]": "scenario]"},
     r"figures\[2\]: 'scenario' is 'servicer_pregrasp', not a number"),
])
def test_keys_values_and_figures_are_checked_against_the_scenario_before_any_run(tmp_path, replace, message):
    with pytest.raises(ConfigError, match=message):
        check_against_scenario(load_campaign(write_campaign(tmp_path, replace)))
