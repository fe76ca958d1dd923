"""Small campaigns for the tests, written into a temporary folder."""
from __future__ import annotations

import textwrap
from pathlib import Path

# Four runs of 0.2 s simulated (~0.1 s of wall time each): a tumble-rate grid of two values crossed with two
# random draws of the target's x inertia and of a tumble axis. The trajectory goal ends at 6.5 s, so the
# `final_*` requirements are not evaluated: success is a limit on the bus attitude error instead.
SMALL = """
name: small
description: four short runs
scenario: servicer_pregrasp
set: [duration=0.2]
seed: 7
samples: 2
parameters:
  rate:
    unit: rad/s
    grid: [0.0, 0.01]
  axis:
    key: initial_state.target.angular_velocity
    scaled_by: rate
    random: {distribution: unit_vector}
  inertia_x:
    key: model.subtrees.target.xacro_args.inertia_scale_x
    random: {distribution: uniform, low: 0.9, high: 1.1}
figures: [max_attitude_error_rad, pregrasp.distance_m, momentum_drift.max_angular_kg_m2_s]
success: {max_attitude_error_rad: 1.0e-3}
worst_by: pregrasp.distance_m
report: {worst_runs: 2}
"""


def write_campaign(folder: Path, replace: dict | None = None, text: str = SMALL, name: str = "campaign.yaml") -> Path:
    """The campaign `text` with each `replace` key substituted (each must occur), as a file in `folder`."""
    text = textwrap.dedent(text)
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    path = Path(folder) / name
    path.write_text(text)
    return path
