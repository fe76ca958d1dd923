"""The runs of a campaign: order (list cases x grid points x samples), seeds and draws from (campaign seed, run
index, parameter name) only, --set texts that parse back to exactly the drawn values."""
from __future__ import annotations

import math

import numpy as np
import pytest
from campaign_files import write_campaign
from hypothesis import example, given
from hypothesis import strategies as st

from space_robot_campaign.campaign_config import load_campaign, yaml_text
from space_robot_campaign.campaign_run import BagSelection
from space_robot_campaign.run_plan import plan, reproduce_command, run_seed, run_spec, run_values
from space_robot_dynamics.config_reader import parse_yaml
from space_robot_dynamics.errors import ConfigError
from space_robot_scenario import parse_overrides

GRID_AND_LIST = """
name: order
scenario: servicer_pregrasp
seed: 3
samples: 2
parameters:
  case: {key: simulation.integrator, list: [rk4, semi_implicit_euler]}
  dt: {key: simulation.dt, list: [0.001, 0.0005]}
  a: {key: duration, grid: [1.0, 2.0, 3.0]}
  b: {key: recording.rate, grid: {start: 10, stop: 1000, num: 3, spacing: log}}
  noise: {key: initial_state.target.position, random: {distribution: normal, mean: [1.7, 0, 0.8], std: 0.01}}
figures: [max_attitude_error_rad]
"""


def test_runs_visit_every_case_and_grid_point_before_repeating_one(tmp_path):
    """Cells (list case x grid point, b fastest) vary fastest, samples outermost: any first runs spread over the
    declared space. Before, runs were case-major and sample-minor, so --runs 4 of pregrasp_robustness put every run
    at tumble_rate 0 (a one-point scatter)."""
    campaign = load_campaign(write_campaign(tmp_path, text=GRID_AND_LIST))
    assert campaign.total_runs == 2 * 3 * 3 * 2
    runs = [run_values(campaign, i) for i in range(campaign.total_runs)]
    cells = [(r["case"], r["a"], r["b"]) for r in runs]
    assert len(set(cells[:18])) == 18 and cells[18:] == cells[:18]          # every cell once, then again
    assert [r["case"] for r in runs[:10:9]] == ["rk4", "semi_implicit_euler"]
    assert all(r["dt"] == {"rk4": 0.001, "semi_implicit_euler": 0.0005}[r["case"]] for r in runs)
    assert [(r["a"], r["b"]) for r in runs[:3]] == [(1.0, 10.0), (1.0, 100.0), (1.0, 1000.0)]   # b fastest
    assert (runs[3]["a"], runs[3]["b"]) == (2.0, 10.0)
    assert runs[0]["noise"] != runs[18]["noise"] and len(runs[0]["noise"]) == 3      # samples of a cell differ
    assert math.isclose(runs[0]["b"], 10.0)


def test_paired_cases_share_their_draws_and_seeds_and_nothing_else(tmp_path):
    """paired_cases (common random numbers): the cases of one grid point and sample get the same random values and
    run seed, each with its own case values; different grid points and samples still differ; unpaired, the cases'
    draws differ (the run index seeds them)."""
    paired = load_campaign(write_campaign(tmp_path, text=GRID_AND_LIST + "paired_cases: true\n", name="p.yaml"))
    unpaired = load_campaign(write_campaign(tmp_path, text=GRID_AND_LIST, name="u.yaml"))
    cells = paired.grid_points                      # 9: the second case's runs start at index 9
    for i in range(paired.total_runs):
        first_case = (i // (2 * cells)) * 2 * cells + i % cells
        a, b = run_spec(paired, i), run_spec(paired, first_case)
        assert dict(a.values)["noise"] == dict(b.values)["noise"] and a.seed == b.seed
        assert dict(a.values)["dt"] == {"rk4": 0.001, "semi_implicit_euler": 0.0005}[dict(a.values)["case"]]
    assert run_values(paired, 0)["noise"] != run_values(paired, 1)["noise"]          # another grid point
    assert run_values(paired, 0)["noise"] != run_values(paired, 2 * cells)["noise"]  # another sample
    assert run_values(unpaired, 0)["noise"] != run_values(unpaired, cells)["noise"]
    assert paired.identity()["paired_cases"] and "paired_cases" not in unpaired.identity()
    with pytest.raises(ConfigError, match="paired_cases: pairs the list cases' runs: there is no list parameter"):
        load_campaign(write_campaign(tmp_path, {"report: {worst_runs: 2}": "report: {worst_runs: 2}\n"
                                                "paired_cases: true"}, name="nolist.yaml"))


def test_a_quick_look_covers_the_shipped_campaigns_grids():
    """--runs G of a shipped campaign (G its grid points) visits every grid value once."""
    from space_robot_campaign.campaign_config import find_campaign

    for name in ("pregrasp_robustness", "capture_robustness", "capture_sensing_robustness"):
        campaign = load_campaign(find_campaign(name))
        for p in campaign.grid_parameters:
            seen = {run_values(campaign, i)[p.name] for i in range(campaign.grid_points * campaign.cases)}
            assert seen == set(p.values), (name, p.name)


def test_a_runs_numbers_depend_on_the_campaign_seed_its_index_and_the_parameter_name_only(tmp_path):
    campaign = load_campaign(write_campaign(tmp_path))
    everything = plan(campaign)
    assert plan(campaign, limit=2) == everything[:2]                       # --runs N: the same first N
    assert run_spec(campaign, 3) == everything[3]                          # any run alone, in any order
    more = load_campaign(write_campaign(tmp_path, {"  inertia_x:": "  mass:\n    key: model.subtrees.target."
                                                   "xacro_args.mass_scale\n    random: {distribution: normal, "
                                                   "mean: 1, std: 0.1}\n  inertia_x:"}, name="more.yaml"))
    for i in range(4):                                                     # another parameter changes nothing
        assert {k: v for k, v in run_values(more, i).items() if k != "mass"} == run_values(campaign, i)
    other_seed = load_campaign(write_campaign(tmp_path, {"seed: 7": "seed: 8"}, name="seed8.yaml"))
    assert run_values(other_seed, 0)["axis"] != run_values(campaign, 0)["axis"]


def test_seeds_and_draws_are_the_same_on_every_supported_numpy():
    """Golden values (NumPy 1.26 and 2.x give them): a change of numpy's streams would change every campaign's
    numbers, and must be seen."""
    assert [run_seed(14, i) for i in range(3)] == [3309381108, 1685558656, 2190737588]
    assert run_values(load_campaign("pregrasp_robustness"), 17) == {      # run 17: grid point 17 mod 5
        "tumble_rate": 0.001, "tumble_axis": [0.06110266473506454, 0.17548210030973482, 0.9825846003439899],
        "target_mass_scale": 1.0837800121327223, "target_inertia_x": 0.9529012125266824,
        "target_inertia_y": 1.0467744792863904, "target_inertia_z": 0.9956671492278971}   # 1 ulp off with np.exp


def test_distributions_have_their_stated_laws(tmp_path):
    text = """
    name: laws
    scenario: servicer_pregrasp
    seed: 1
    samples: 4000
    parameters:
      u: {key: duration, random: {distribution: uniform, low: 2, high: 3}}
      n: {key: simulation.dt, random: {distribution: normal, mean: 1.0e-3, std: 1.0e-5}}
      g: {key: recording.rate, random: {distribution: lognormal, median: 100, sigma: 0.2}}
      d: {key: initial_state.target.angular_velocity, random: {distribution: unit_vector}}
    figures: [max_attitude_error_rad]
    """
    campaign = load_campaign(write_campaign(tmp_path, text=text))
    runs = [run_values(campaign, i) for i in range(campaign.total_runs)]
    u = np.array([r["u"] for r in runs])
    n = np.array([r["n"] for r in runs])
    g = np.log(np.array([r["g"] for r in runs]) / 100.0)
    d = np.array([r["d"] for r in runs])
    assert 2 <= u.min() and u.max() < 3 and abs(u.mean() - 2.5) < 0.02
    assert abs(n.mean() - 1e-3) < 1e-6 and abs(n.std() - 1e-5) < 5e-7
    assert abs(np.median(g)) < 0.02 and abs(g.std() - 0.2) < 0.01
    assert np.allclose(np.linalg.norm(d, axis=1), 1.0, atol=1e-15) and np.abs(d.mean(axis=0)).max() < 0.05


def test_scaled_parameters_set_the_product_and_the_overrides_parse_back_exactly(tmp_path):
    campaign = load_campaign(write_campaign(tmp_path))
    spec = run_spec(campaign, 3)
    values = dict(spec.values)
    parsed = {o.key if o.target == "scenario" else f"{o.target}.{o.key}": o.value
              for o in parse_overrides(spec.overrides)}
    assert parsed["duration"] == 0.2
    assert parsed["initial_state.target.angular_velocity"] == [values["rate"] * v + 0.0 for v in values["axis"]]
    assert parsed["model.subtrees.target.xacro_args.inertia_scale_x"] == values["inertia_x"]
    zero = run_spec(campaign, 0)                      # rate 0: zeros, never '-0.0'
    assert "-0.0" not in " ".join(zero.overrides)
    command = reproduce_command(campaign, spec.overrides, "out/x")
    assert command.startswith("space-robot-sim servicer_pregrasp --set duration=0.2 --set 'initial_state.target.")
    assert command.endswith(" --out out/x")


@given(st.recursive(st.floats(allow_nan=False, allow_infinity=False) | st.integers(-10**6, 10**6) | st.booleans()
                    | st.text(max_size=12), lambda inner: st.lists(inner, max_size=4), max_leaves=8))
@example([":0"])              # plain at the top, but a mapping indicator inside a flow sequence (found by hypothesis)
@example({"a: b": [":x", "-"]})
def test_yaml_text_parses_back_to_exactly_the_value(value):
    assert parse_yaml(yaml_text(value)) == value
    if isinstance(value, float):
        assert math.copysign(1, parse_yaml(yaml_text(value))) == math.copysign(1, value)


@pytest.mark.parametrize("text, failed, every, runs", [
    (None, False, False, set()), ("failed", True, False, set()), ("all", False, True, set()),
    ("3,17,40-42", False, False, {3, 17, 40, 41, 42}), ("failed,3", True, False, {3}),
])
def test_keep_bags_selections(text, failed, every, runs):
    selection = BagSelection.parse(text)
    assert (selection.failed, selection.all, set(selection.runs)) == (failed, every, runs)


@pytest.mark.parametrize("text", ["some", "3-1", "-2", "1,,2"])
def test_bad_keep_bags_selections_name_the_option(text):
    with pytest.raises(ConfigError, match=r"^--keep-bags: .* is not 'failed', 'all', a run index or a range"):
        BagSelection.parse(text)


def test_the_terminal_gives_a_reproducing_command_that_runs_without_an_activated_venv(tmp_path):
    """The worst run's command printed a bare `space-robot-sim`, not found outside the activated venv; the report
    keeps the bare name, the terminal names this install's script when PATH lacks it."""
    import sys
    from pathlib import Path

    from space_robot_campaign.cli import runnable

    command = "space-robot-sim servicer_pregrasp --set duration=1"
    script = Path(sys.executable).parent / "space-robot-sim"
    if not script.is_file():
        pytest.skip(f"no space-robot-sim beside {sys.executable} (not an installed environment)")
    empty = str(tmp_path)                                               # a PATH without it
    assert runnable(command, search_path=empty) == f"{script} servicer_pregrasp --set duration=1"
    assert runnable(command, search_path=str(script.parent)) == command     # on PATH: the bare name
