"""A scenario's `comparison:` section: the same scenario run a second time with a few entries changed (`--set`
syntax: another model, a controller option), whose differences to the first run the standalone runtime reports
(space_robot_runtime/comparison.py), e.g. seed 000's flexible arm against its rigid one under the same torques."""
from __future__ import annotations

from dataclasses import dataclass

import yaml

from space_robot_dynamics.config_reader import ConfigReader

from .overrides import SCENARIO, parse_overrides


@dataclass(frozen=True)
class ComparisonConfig:
    """A second run of the scenario with `overrides` (Override objects, --set syntax) applied, labelled `name`;
    the runtime reports the end effector's (frame `end_effector_frame`), the arm joints' and the bus's
    differences between the two runs."""

    name: str
    description: str
    overrides: tuple
    end_effector_frame: str


def read_comparison(reader: ConfigReader) -> ComparisonConfig | None:
    """The `comparison:` section (absent or null: None)."""
    if reader.raw("comparison", None) is None:
        return None
    cp = reader.sub("comparison")
    entries = cp.raw("overrides")
    if not isinstance(entries, dict) or not entries:
        raise cp.error("overrides", "must be a non-empty mapping KEY: VALUE (the --set syntax)")
    overrides = parse_overrides([f"{key}={_yaml_text(value)}" for key, value in entries.items()],
                                origin=f"{cp.source}: comparison.overrides")
    for o in overrides:
        if o.target == SCENARIO and o.key.split(".")[0] == "comparison":
            raise cp.error("overrides", "cannot change the comparison itself")
    config = ComparisonConfig(name=cp.string("name"), description=cp.string("description", ""),
                              overrides=tuple(overrides), end_effector_frame=cp.string("end_effector_frame"))
    cp.reject_unknown()
    return config


def _yaml_text(value) -> str:
    """A value as the --set syntax writes it (flow-style YAML on one line)."""
    return yaml.safe_dump(value, default_flow_style=True).strip().removesuffix("...").strip()
