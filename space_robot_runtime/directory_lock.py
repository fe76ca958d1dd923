"""One writer per output directory: an advisory lock (flock) on a hidden file beside it, `.<name>.lock`.

Two runs told to write the same --out (two terminals, a script started twice) would otherwise both stage their
outputs and the later to finish would silently replace the other's. The first takes the lock; the second is
refused at once, before it runs, with one line naming the holder. flock is released by the kernel when the
holder's process ends however it ends (SIGKILL, power loss), so a lock is never stale; the file is removed by
its holder when it lets go. The lock is per process and re-entrant: a campaign holds its directory's for the
whole campaign and its own OutputDirectory takes it again.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

from space_robot_dynamics.errors import SpaceRobotError

_LOCK = ".{name}.lock"


class DirectoryBusy(SpaceRobotError):
    """Another process writes the directory."""


_held: dict[Path, list] = {}          # lock file -> [fd, holders in this process]


def lock_path(directory: Path) -> Path:
    directory = Path(directory).absolute()
    return directory.parent / _LOCK.format(name=directory.name)


def acquire(directory: Path, tool: str) -> Path:
    """Take the lock of `directory` (its parent must exist) or raise DirectoryBusy; returns the lock file to
    give to `release`."""
    path = lock_path(directory)
    if path in _held:
        _held[path][1] += 1
        return path
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 64).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise DirectoryBusy(f"--out {Path(directory).absolute()}: {holder} is writing there now; wait for it to "
                            "finish, or choose another --out") from None
    if os.fstat(fd).st_ino != _inode(path):        # its holder removed the file between our open and our lock
        os.close(fd)
        return acquire(directory, tool)
    os.ftruncate(fd, 0)
    os.write(fd, f"{tool} (pid {os.getpid()})".encode())
    _held[path] = [fd, 1]
    return path


def release(path: Path) -> None:
    """Let go of a lock taken by `acquire` (the last holder of this process removes the file, then unlocks)."""
    entry = _held.get(path)
    if entry is None:
        return
    entry[1] -= 1
    if entry[1] > 0:
        return
    del _held[path]
    try:
        path.unlink()
    except OSError:
        pass
    os.close(entry[0])


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except OSError:
        return None
