"""A run's output directory, owned by the run: written aside, moved into place whole, never mixed.

A run writes into a staging directory beside the requested one (`.<name>.partial-<pid>`, same parent, so
the final move is a rename on the same file system) and `commit()` moves it into place, replacing the
outputs of an earlier run only when asked (`overwrite`). So a directory never holds a bag of one run beside
the summary or plots of another, and an interrupted run leaves its own complete set (summary marked
incomplete) instead of half of one.

Ownership: every directory this tool writes holds MARKER (a small JSON file). A directory that is not
empty and has no marker belongs to the user and is never replaced. Staging directories left by a run that
was killed (SIGKILL, power loss) are removed by the next run into the same place, once their process is
gone.

Other tools of the package (space-robot-campaign) own their directories the same way, under their own name
(`tool`): a directory of one tool is foreign to another.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from space_robot_dynamics.errors import SpaceRobotError

from . import directory_lock
from .directory_lock import DirectoryBusy

MARKER = ".space-robot-sim.json"
TOOL = "space-robot-sim"
_STAGING = ".{name}.partial-{pid}"
_RETIRED = ".{name}.replaced-{pid}"
_PID_DIGITS = 7             # Linux's largest pid, 4194304 (pid_max on 64-bit)
_SHOWN = 40                 # characters of a too-long name shown in the error


class OutputError(SpaceRobotError):
    """The output directory cannot be used (exists and is not ours, cannot be created or written)."""


# what a run of this tool wrote before it had a marker file (space_robot 0.x): recognised so that --overwrite
# (and `make demo`) still replaces it after an upgrade
_LEGACY_NAMES = {"bag", "summary.json", "base_attitude.png", "joint_angles.png", "wheel_speeds.png",
                 "momentum_drift.png"}
_LEGACY_RUN_INFO = "space_robot.run_info"


def written_by_this_tool(directory: Path, tool: str = TOOL) -> bool:
    """Whether `directory` holds a run of `tool`: its marker file names the tool, or (space-robot-sim, written
    before the marker existed) it holds only what a run writes, with the run's information in the bag's
    metadata."""
    try:
        return json.loads((directory / MARKER).read_text()).get("tool") == tool
    except (OSError, ValueError, AttributeError):
        pass
    if tool != TOOL:
        return False
    try:
        names = {p.name for p in directory.iterdir()}
        metadata = (directory / "bag" / "metadata.yaml").read_text()
    except OSError:
        return False
    return "bag" in names and names <= _LEGACY_NAMES and _LEGACY_RUN_INFO in metadata


class OutputDirectory:
    """Checks `final` at construction (before anything runs); `staging` is where the run writes. `tool`: the
    command the marker names (another tool's outputs are never replaced: space-robot-identify uses its own)."""

    def __init__(self, final: str | Path, overwrite: bool = False, tool: str = TOOL):
        self.final = Path(final).absolute()
        self.overwrite = overwrite
        self.tool = tool
        self._check_name_lengths()
        parent = self.final.parent
        for ancestor in (parent, *parent.parents):
            if ancestor.exists():
                if not ancestor.is_dir():
                    raise OutputError(f"--out {self.final}: {ancestor} is a file, not a directory; choose "
                                      "another --out")
                break
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"--out {self.final}: cannot create {parent}: {exc.strerror or exc}; choose a "
                              "directory you can write") from None
        if not parent.is_dir():
            raise OutputError(f"--out {self.final}: {parent} is not a directory; choose another --out")
        try:
            self._lock = directory_lock.acquire(self.final, tool)     # one writer at a time (directory_lock.py)
        except DirectoryBusy as exc:
            raise OutputError(str(exc)) from None
        except OSError as exc:
            raise OutputError(f"--out {self.final}: cannot write in {parent}: {exc.strerror or exc}; choose a "
                              "directory you can write") from None
        try:
            self._check_final()
            self._remove_stale_staging()
            self.staging = parent / _STAGING.format(name=self.final.name, pid=os.getpid())
            try:
                if self.staging.exists():
                    shutil.rmtree(self.staging)
                self.staging.mkdir()
                self._write_marker(self.staging, {"state": "running", "pid": os.getpid()})
            except OSError as exc:
                raise OutputError(f"--out {self.final}: cannot write in {parent}: {exc.strerror or exc}; choose a "
                                  "directory you can write") from None
        except BaseException:
            directory_lock.release(self._lock)      # refused: the lock file goes now, not at the process's end
            raise
        self.committed = False

    def _check_name_lengths(self) -> None:
        """Each component of --out within the file system's name limit, the last one with room for the names the
        run writes beside it (staging, retired, lock), and the whole path within the path limit: otherwise the
        first file operation fails with ENAMETOOLONG, half-way."""
        existing = next((a for a in (self.final, *self.final.parents) if _exists(a)), Path("/"))
        name_max, path_max = _limit(existing, "PC_NAME_MAX", 255), _limit(existing, "PC_PATH_MAX", 4096)
        beside = max(len(pattern.format(name="", pid=_PID_DIGITS * "9")) for pattern in (_STAGING, _RETIRED)) + 1
        for part in self.final.parts[1:]:
            allowed = name_max - (beside if part == self.final.name else 0)
            if len(os.fsencode(part)) > allowed:
                shown = part if len(part) <= _SHOWN else part[:_SHOWN] + "..."
                raise OutputError(f"--out: the name {shown!r} is {len(os.fsencode(part))} bytes; this file system "
                                  f"allows {name_max}" + (f", and the run writes beside it under "
                                  f"'.<name>.partial-<pid>': at most {allowed} here" if beside and
                                  part == self.final.name else "") + "; choose a shorter --out")
        if len(os.fsencode(str(self.final))) + beside > path_max:
            raise OutputError(f"--out: the path is {len(os.fsencode(str(self.final)))} bytes; this file system allows "
                              f"{path_max - beside} for an output directory; choose a shorter --out")

    def _check_final(self) -> None:
        final = self.final
        if final.exists() and not final.is_dir():
            raise OutputError(f"--out {final}: is a file, not a directory; choose another --out")
        if final.is_dir() and any(final.iterdir()):
            if not written_by_this_tool(final, self.tool):
                raise OutputError(f"--out {final}: the directory is not empty and was not written by {self.tool}; "
                                  "choose another --out (or empty it): its files are left as they are")
            if not self.overwrite:
                raise OutputError(f"--out {final}: holds the outputs of an earlier run; pass --overwrite to "
                                  "replace them, or choose another --out")

    def _remove_stale_staging(self) -> None:
        prefix = f".{self.final.name}.partial-"
        for candidate in self.final.parent.glob(f"{prefix}*"):
            pid = candidate.name[len(prefix):]
            if pid.isdigit() and not _alive(int(pid)) and written_by_this_tool(candidate, self.tool):
                shutil.rmtree(candidate, ignore_errors=True)

    def _write_marker(self, directory: Path, fields: dict) -> None:
        (directory / MARKER).write_text(json.dumps({"tool": self.tool, **fields}, sort_keys=True) + "\n")

    def commit(self, fields: dict) -> Path:
        """Move the staged outputs into place (replacing an earlier run of this tool); returns `final`."""
        self._write_marker(self.staging, {"state": "finished", **fields})
        retired = None
        if self.final.exists():
            if any(self.final.iterdir()) and not written_by_this_tool(self.final, self.tool):   # appeared meanwhile
                raise OutputError(f"--out {self.final}: files appeared there during the run; the outputs are "
                                  f"kept in {self.staging}")
            retired = self.final.parent / _RETIRED.format(name=self.final.name, pid=os.getpid())
            self.final.rename(retired)
        self.staging.rename(self.final)
        if retired is not None:
            shutil.rmtree(retired, ignore_errors=True)
        self.committed = True
        directory_lock.release(self._lock)
        return self.final

    def discard(self) -> None:
        """Remove the staging directory (nothing worth keeping was written)."""
        shutil.rmtree(self.staging, ignore_errors=True)
        directory_lock.release(self._lock)


def _exists(path: Path) -> bool:
    try:
        return path.exists()
    except OSError:             # a component too long, a loop, no permission: not a place to start from
        return False


def _limit(path: Path, name: str, default: int) -> int:
    """The file system's limit `name` (os.pathconf) where `path` is; `default` (Linux's) if it does not say."""
    try:
        return os.pathconf(path, name)
    except (OSError, ValueError):
        return default


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
