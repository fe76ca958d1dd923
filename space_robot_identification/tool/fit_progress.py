"""A one-line progress bar of the fits on stderr (shown only on a terminal, or when asked)."""
from __future__ import annotations

import sys
import time
from typing import TextIO

_WIDTH = 30             # characters of bar
_MIN_INTERVAL = 0.25    # s of wall time between redraws


class FitProgress:
    def __init__(self, total: int, enabled: bool | None = None, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.total = max(1, int(total))
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.done = 0
        self.label = ""
        self._drawn_at = -float("inf")
        self.start = time.perf_counter()

    def step(self) -> None:
        self.done += 1
        self.draw()

    def draw(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and self.done < self.total and now - self._drawn_at < _MIN_INTERVAL:
            return
        self._drawn_at = now
        fraction = min(1.0, self.done / self.total)
        filled = int(round(fraction * _WIDTH))
        self.stream.write(f"\r[{'#' * filled}{'.' * (_WIDTH - filled)}] {self.done}/{self.total} fits  "
                          f"{now - self.start:6.1f} s  {self.label:<40.40}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
