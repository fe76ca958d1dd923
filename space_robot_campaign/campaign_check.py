"""Checks of a campaign against its scenario, before any run starts, with the campaign's field named.

The scenario is loaded with the campaign's `set` and every parameter at its nominal value (first grid or
list value, a distribution's centre), then once per other grid or list value; the nominal run is built
(model, graph, goals: everything SimulationRun checks) and stepped once, and each collected figure is looked
up in that run's summary. A key that does not exist, a value a field refuses, a figure the summary does not
have: each is an error naming the campaign field before anything is written. Random draws are not all
checked (a draw the scenario refuses is that run's `bad_input` row).
"""
from __future__ import annotations

from space_robot_dynamics.errors import ConfigError
from space_robot_scenario import Scenario, load_scenario, parse_overrides
from space_robot_scenario.overrides import blamed

from .campaign_config import Campaign
from .run_plan import parameter_override
from .run_task import NeverStop


def _overrides(campaign: Campaign, values: dict) -> list:
    """Override objects whose origin names the campaign field each comes from."""
    where = campaign.source or "campaign"
    out = parse_overrides(campaign.overrides, origin=f"{where}: set:")
    for p in campaign.parameters:
        if p.key is not None:
            out += parse_overrides([parameter_override(p, values[p.name], values)],
                                   origin=f"{where}: parameters.{p.name}:")
    if campaign.seed_key is not None:
        out += parse_overrides([f"{campaign.seed_key}=0"], origin=f"{where}: seed_key:")
    return out


def check_against_scenario(campaign: Campaign) -> Scenario:
    """Raise ConfigError (naming the campaign field) for what would make every run fail; returns the nominal
    scenario."""
    from space_robot_runtime.simulation_run import SimulationRun

    nominal = {p.name: p.nominal for p in campaign.parameters}
    scenario = load_scenario(campaign.scenario, _overrides(campaign, nominal))
    for p in campaign.parameters:
        for value in p.values[1:]:
            load_scenario(campaign.scenario, _overrides(campaign, {**nominal, p.name: value}))
    with blamed(list(scenario.overrides)):      # what SimulationRun reads (initial_state...) from an override
        run = SimulationRun(scenario)
        summary = run.run(duration=run.graph.tick, plots=False, progress=False, stop=NeverStop()).summary
    for i, figure in enumerate(campaign.figures):
        _check_figure(summary, figure, f"figures[{i}]", campaign)
    return scenario


def _check_figure(summary: dict, figure: str, field: str, campaign: Campaign) -> None:
    value, where = summary, []
    for part in figure.split("."):
        if value is None:            # a group that is null for this scenario (e.g. momentum_drift with gravity)
            return
        if not isinstance(value, dict) or part not in value:
            entries = sorted(k for k, v in value.items() if not isinstance(v, (list, str))) \
                if isinstance(value, dict) else []
            raise ConfigError(field, f"{figure!r}: a run summary of {campaign.scenario_argument} has no entry {part!r} "
                              f"in {'.'.join(where) or 'its top level'} (entries there: {', '.join(entries)})",
                              campaign.source)
        value = value[part]
        where.append(part)
    if isinstance(value, dict):
        raise ConfigError(field, f"{figure!r} is a group; collect one of its entries: "
                          f"{', '.join(f'{figure}.{k}' for k in sorted(value))}", campaign.source)
    if value is not None and (isinstance(value, (bool, str, list)) or not isinstance(value, (int, float))):
        raise ConfigError(field, f"{figure!r} is {value!r}, not a number", campaign.source)
