"""A one-line progress bar of a campaign on stderr: runs done, failures, rate, ETA (on a terminal, or asked).

    [###########...................]  17/50 runs  3 not successful (1 error)  1.9 runs/s  ETA 0:00:17

The rate and the ETA count the runs finished since this campaign (or resume) started, over the wall time
since its first run was submitted (Ray's start-up is not in it).
"""
from __future__ import annotations

import sys
import time
from datetime import timedelta
from typing import TextIO

_WIDTH = 30
_MIN_INTERVAL = 0.25          # s between redraws


class CampaignProgress:
    def __init__(self, total: int, already: int = 0, enabled: bool | None = None, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total, self.done, self.new = total, already, 0
        self.unsuccessful = self.errors = 0
        self.start = time.perf_counter()
        self._drawn_at = -float("inf")
        self._last = ""

    def started(self) -> None:
        """The first run was submitted: the clock of the rate starts now."""
        self.start = time.perf_counter()
        self.draw(force=True)

    def update(self, success: bool, error: bool) -> None:
        self.done += 1
        self.new += 1
        self.unsuccessful += not success
        self.errors += error
        self.draw(force=self.done == self.total)

    def line(self) -> str:
        elapsed = time.perf_counter() - self.start
        rate = self.new / elapsed if elapsed > 0 and self.new else 0.0
        remaining = self.total - self.done
        eta = str(timedelta(seconds=round(remaining / rate))) if rate > 0 else "-"
        filled = int(round(_WIDTH * self.done / self.total)) if self.total else _WIDTH
        return (f"[{'#' * filled}{'.' * (_WIDTH - filled)}] {self.done:>{len(str(self.total))}}/{self.total} runs  "
                f"{self.unsuccessful} not successful ({self.errors} error{'s' if self.errors != 1 else ''})  "
                f"{rate:.2f} runs/s  ETA {eta}")

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self._drawn_at < _MIN_INTERVAL:
            return
        self._drawn_at = now
        line = self.line()
        if line != self._last:
            self.stream.write("\r" + line)
            self.stream.flush()
            self._last = line

    def close(self) -> None:
        self.draw(force=True)
        if self.enabled and self._last:
            self.stream.write("\n")
            self.stream.flush()
