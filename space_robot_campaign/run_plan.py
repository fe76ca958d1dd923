"""The runs of a campaign: each run's parameter values, seed and --set overrides, from its index alone.

Run r of a campaign with C list cases, G grid points (the product of the grid parameters' values, the last
one varying fastest) and S samples is cell r mod (C G) - case cell // G, grid point cell mod G - and sample
r // (C G): the cells vary fastest, so the first C G runs visit every case and grid point once and any first N
runs (--runs N, a quick look) spread over the whole declared space instead of one corner of it.

Seeds: the run's seed is the first 32-bit word of numpy's SeedSequence(campaign seed, spawn_key=(r,)); each
random parameter is drawn from its own stream SeedSequence(campaign seed, spawn_key=(r, crc32(name))). So a
run's numbers depend on the campaign seed, its index and its parameter's name only: not on the number of
workers, the order in which runs finish, how many runs are asked for (--runs), or on adding another
parameter. The values go to the run as --set texts (yaml_text: exact round trip), the same ones the report
prints to reproduce a run alone with space-robot-sim.

Paired cases (`paired_cases: true`, common random numbers): the index in those seeds is the run's draw index,
grid point + G x sample, the same for every list case; so the cases of a grid point and sample run with the same
random values and the same run seed (the same tumble axis, the same sensor noise), and what differs between them
is what the cases set. A comparison of cases (estimates against the truth) then measures the cases' difference
instead of the draws'.
"""
from __future__ import annotations

import shlex
import zlib
from dataclasses import dataclass

import numpy as np

from .campaign_config import Campaign, Parameter, yaml_text


@dataclass(frozen=True)
class RunSpec:
    """What a worker needs to run one run (picklable, small). scenario: the scenario file; overrides: --set
    KEY=VALUE texts; figures: summary entries to collect; bag_dir: where to keep the bag (None: no outputs)."""

    index: int
    seed: int
    values: tuple                # (parameter name, value) in campaign order
    scenario: str
    overrides: tuple
    figures: tuple
    bag_dir: str | None = None


def run_seed(campaign_seed: int, index: int) -> int:
    """The run's own seed (0 <= seed < 2**32)."""
    return int(np.random.SeedSequence(campaign_seed, spawn_key=(index,)).generate_state(1, np.uint32)[0])


def parameter_stream(campaign_seed: int, index: int, name: str) -> np.random.Generator:
    """The random stream of one parameter in one run."""
    return np.random.default_rng(np.random.SeedSequence(campaign_seed, spawn_key=(index, zlib.crc32(name.encode()))))


def draw_index(campaign: Campaign, index: int) -> int:
    """The index the random draws and the run seed of run `index` come from: the run's own, or with paired cases
    the one it shares with the other cases of its grid point and sample."""
    if not campaign.paired_cases:
        return index
    sample, cell = divmod(index, campaign.cases * campaign.grid_points)
    return sample * campaign.grid_points + cell % campaign.grid_points


def run_values(campaign: Campaign, index: int) -> dict:
    """Parameter name -> value of run `index` (0 <= index < campaign.total_runs)."""
    if not 0 <= index < campaign.total_runs:
        raise IndexError(f"run {index} is not in 0..{campaign.total_runs - 1}")
    case, point = divmod(index % (campaign.cases * campaign.grid_points), campaign.grid_points)
    grid_index = {}
    for p in reversed(campaign.grid_parameters):          # the last grid parameter varies fastest
        point, grid_index[p.name] = divmod(point, len(p.values))
    values = {}
    for p in campaign.parameters:
        if p.mode == "grid":
            values[p.name] = p.values[grid_index[p.name]]
        elif p.mode == "list":
            values[p.name] = p.values[case]
        else:
            values[p.name] = p.distribution.draw(parameter_stream(campaign.seed, draw_index(campaign, index), p.name))
    return values


def parameter_override(p: Parameter, value, values: dict) -> str:
    """The --set text of parameter `p` taking `value` in a run whose values are `values`."""
    if p.scaled_by is not None:
        scale = values[p.scaled_by]
        value = [scale * v + 0.0 for v in value] if isinstance(value, list) else scale * value + 0.0   # no -0.0
    return f"{p.key}={yaml_text(value)}"


def overrides_for(campaign: Campaign, values: dict, seed: int) -> list[str]:
    """The --set texts of a run: the campaign's `set`, then one per parameter with a key, then the seed."""
    overrides = list(campaign.overrides)
    overrides += [parameter_override(p, values[p.name], values) for p in campaign.parameters if p.key is not None]
    if campaign.seed_key is not None:
        overrides.append(f"{campaign.seed_key}={seed}")
    return overrides


def run_spec(campaign: Campaign, index: int, bag_dir: str | None = None) -> RunSpec:
    values = run_values(campaign, index)
    seed = run_seed(campaign.seed, draw_index(campaign, index))
    return RunSpec(index=index, seed=seed, values=tuple(values.items()), scenario=str(campaign.scenario),
                   overrides=tuple(overrides_for(campaign, values, seed)), figures=campaign.figures, bag_dir=bag_dir)


def plan(campaign: Campaign, limit: int | None = None) -> list[RunSpec]:
    """The campaign's runs (the first `limit` of them when given)."""
    count = campaign.total_runs if limit is None else min(limit, campaign.total_runs)
    return [run_spec(campaign, i) for i in range(count)]


def reproduce_command(campaign: Campaign, overrides, out: str | None = None) -> str:
    """The space-robot-sim command line that runs one run alone (shell-quoted)."""
    words = ["space-robot-sim", campaign.scenario_argument]
    for text in overrides:
        words += ["--set", text]
    if out is not None:
        words += ["--out", out]
    return shlex.join(words)
