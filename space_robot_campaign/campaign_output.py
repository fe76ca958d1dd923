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

`CampaignOutput` checks the directory before anything starts (bad input costs no Ray start-up) but creates a
fresh campaign's only once the executor has started (`create()`): a campaign that cannot run (a cluster that
does not answer) leaves nothing behind, so its retry needs neither --resume nor --overwrite. It holds the
directory's lock (space_robot_runtime.directory_lock) from its checks to `close()`: two campaigns never write
one table.
"""
from __future__ import annotations

import json
from pathlib import Path

from space_robot_runtime import directory_lock
from space_robot_runtime.directory_lock import DirectoryBusy
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


class CampaignOutput:
    """The campaign's directory `path`, checked at construction (OutputError saying what to do), created by
    `create()`, let go by `close()` (always: a finally). `existing`: a campaign there is resumed (its table is
    read before anything runs); otherwise a fresh one is staged beside `path` and moved into place by
    `create()` (with --overwrite, over the earlier campaign)."""

    def __init__(self, out: Path, campaign: Campaign, resume: bool = False, overwrite: bool = False):
        self.path = Path(out).absolute()
        self.campaign = campaign
        self._staged: OutputDirectory | None = None
        self._made: list[Path] = []              # folders above `path` that the staging created
        self._lock: Path | None = None
        self.existing = resume and _holds_something(self.path)
        if self.existing:
            self._hold()
            try:
                _check_resumable(self.path, campaign)
            except BaseException:
                self.close()
                raise
        else:
            if not resume and written_by_this_tool(self.path, TOOL) and not overwrite:
                raise OutputError(f"--out {self.path}: holds an earlier campaign; pass --resume to run its missing "
                                  "runs, --overwrite to replace it, or choose another --out")
            self._stage(overwrite=overwrite and not resume)

    def create(self) -> Path:
        """A fresh campaign's directory in place (marker, campaign.json, campaign.yaml); a resumed one as it is."""
        if self._staged is not None and not self._staged.committed:
            staging = self._staged.staging
            (staging / IDENTITY_FILE).write_text(
                json.dumps({"name": self.campaign.name, "source": self.campaign.source,
                            "identity": self.campaign.identity()}, indent=2, sort_keys=True, allow_nan=False) + "\n")
            if self.campaign.source is not None and Path(self.campaign.source).is_file():
                (staging / COPY_FILE).write_bytes(Path(self.campaign.source).read_bytes())
            self._staged.commit({"campaign": self.campaign.name})
        return self.path

    def close(self) -> None:
        """Let go of the directory; a fresh one never created leaves nothing (its staging, the folders made for
        it)."""
        abandoned = self._staged is not None and not self._staged.committed
        if abandoned:
            self._staged.discard()
        if self._lock is not None:
            directory_lock.release(self._lock)      # removes the lock file: the folders made may be empty now
            self._lock = None
        if abandoned:
            _remove_empty(self._made)

    def _hold(self) -> None:
        try:
            self._lock = directory_lock.acquire(self.path, TOOL)
        except DirectoryBusy as exc:
            raise OutputError(str(exc)) from None
        except OSError as exc:
            raise OutputError(f"--out {self.path}: cannot write in {self.path.parent}: {exc.strerror or exc}; "
                              "choose a directory you can write") from None

    def _stage(self, overwrite: bool) -> None:
        """Every check of an output directory (OutputDirectory's), and the lock, with the directory itself not
        created yet (only its staging beside it, hidden, which close() removes if it is never committed)."""
        parent = self.path.parent
        self._made = [folder for folder in (parent, *parent.parents) if not folder.exists()]
        try:
            self._staged = OutputDirectory(self.path, overwrite=overwrite, tool=TOOL)
        except BaseException:
            _remove_empty(self._made)
            raise
        self._hold()          # beyond the commit, which lets go of the staging's own hold


def _holds_something(out: Path) -> bool:
    """Whether --resume finds something to resume at `out` (a missing or empty directory is a fresh start)."""
    return out.exists() and not (out.is_dir() and not any(out.iterdir()))


def _check_resumable(out: Path, campaign: Campaign) -> None:
    if not written_by_this_tool(out, TOOL):
        raise OutputError(f"--out {out}: holds no campaign of {TOOL} to resume; give the directory of an "
                          "earlier campaign, or drop --resume")
    _check_same(out, campaign)
    _check_report_folder(out)


def _check_report_folder(out: Path) -> None:
    """The report is replaced at the campaign's end: a report/ that is not ours (its marker damaged, files of the
    user's) would stop it only then, after every run."""
    report = out / REPORT_FOLDER
    if report.exists() and not (report.is_dir() and (written_by_this_tool(report, TOOL) or not any(report.iterdir()))):
        raise OutputError(f"--out {out}: {REPORT_FOLDER}/ is not a report of {TOOL} (its files are left as they are; "
                          "the campaign replaces its report when it ends): move it out of --out, then --resume again")


def _remove_empty(folders: list[Path]) -> None:
    """Remove `folders` (deepest first) where they are empty: what was made for a directory never created."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:           # not empty (someone else's by now), or gone: left as it is
            return


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
