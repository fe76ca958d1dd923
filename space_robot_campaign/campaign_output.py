"""The output directory of a campaign, owned like a run's (space_robot_runtime.output_directory, tool
space-robot-campaign): created whole (marker, campaign.json, a copy of the campaign file), then filled as runs
finish; never mixed with another campaign's rows.

    DIR/.space-robot-sim.json     marker: written by space-robot-campaign
    DIR/campaign.json             the campaign's identity (what determines its runs; Campaign.identity)
    DIR/campaign.yaml             the campaign file as given
    DIR/runs.parquet, runs.partial/, runs.csv    the result table (result_table.py)
    DIR/report/                   report.md, report.json and the PNGs (replaced whole by each campaign end)
    DIR/bags/run-NNNNNN/          kept runs (space-robot-sim outputs: bag/, summary.json, plots)

A directory holding a campaign is continued only with --resume, and only by the same campaign (the same
identity), or replaced with --overwrite.
"""
from __future__ import annotations

import json
from pathlib import Path

from space_robot_runtime.output_directory import OutputDirectory, OutputError, written_by_this_tool

from .campaign_config import Campaign

TOOL = "space-robot-campaign"
IDENTITY_FILE = "campaign.json"
COPY_FILE = "campaign.yaml"
REPORT_FOLDER = "report"
BAG_FOLDER = "bags"


def default_out(campaign: Campaign) -> Path:
    return Path("out") / "campaigns" / campaign.name


def bag_dir(out: Path, index: int) -> Path:
    return Path(out).absolute() / BAG_FOLDER / f"run-{index:06d}"


def open_output(out: Path, campaign: Campaign, resume: bool = False, overwrite: bool = False) -> Path:
    """The campaign's directory, checked (resume) or created (otherwise); OutputError saying what to do."""
    out = Path(out).absolute()
    holds_campaign = written_by_this_tool(out, TOOL)
    if resume:
        if not out.exists() or (out.is_dir() and not any(out.iterdir())):
            return _create(out, campaign, overwrite=False)        # nothing to resume: a fresh start
        if not holds_campaign:
            raise OutputError(f"--out {out}: holds no campaign of {TOOL} to resume; give the directory of an "
                              "earlier campaign, or drop --resume")
        _check_same(out, campaign)
        return out
    if holds_campaign and not overwrite:
        raise OutputError(f"--out {out}: holds an earlier campaign; pass --resume to run its missing runs, "
                          "--overwrite to replace it, or choose another --out")
    return _create(out, campaign, overwrite)


def _create(out: Path, campaign: Campaign, overwrite: bool) -> Path:
    directory = OutputDirectory(out, overwrite=overwrite, tool=TOOL)
    try:
        (directory.staging / IDENTITY_FILE).write_text(
            json.dumps({"name": campaign.name, "source": campaign.source, "identity": campaign.identity()},
                       indent=2, sort_keys=True, allow_nan=False) + "\n")
        if campaign.source is not None and Path(campaign.source).is_file():
            (directory.staging / COPY_FILE).write_bytes(Path(campaign.source).read_bytes())
        return directory.commit({"campaign": campaign.name})
    except BaseException:
        if not directory.committed:
            directory.discard()
        raise


def _check_same(out: Path, campaign: Campaign) -> None:
    try:
        stored = json.loads((out / IDENTITY_FILE).read_text())["identity"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutputError(f"--out {out}: cannot read {IDENTITY_FILE} ({exc}); cannot tell whether it is the same "
                          "campaign: choose another --out") from None
    current = json.loads(json.dumps(campaign.identity()))
    if stored != current:
        where = _first_difference(stored, current)
        raise OutputError(f"--out {out}: holds a different campaign (it differs at {where}; see {out / IDENTITY_FILE}"
                          "): --resume continues only the same campaign; choose another --out, or --overwrite")


def _first_difference(a, b, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{path}.{key}" if path else key)
    return path or "<root>"


def report_directory(out: Path) -> OutputDirectory:
    """A staging directory for the report, committed over the previous report."""
    return OutputDirectory(Path(out) / REPORT_FOLDER, overwrite=True, tool=TOOL)
