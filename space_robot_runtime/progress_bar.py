"""A one-line progress bar on stderr for long runs (shown only on a terminal, or when asked)."""
from __future__ import annotations

import sys
import time
from typing import TextIO

_WIDTH = 30             # characters of bar
_MIN_INTERVAL = 0.25    # s of wall time between redraws


class ProgressBar:
    def __init__(self, total: float, enabled: bool | None = None, stream: TextIO | None = None):
        self.stream = stream or sys.stderr
        self.total = float(total)
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.start = time.perf_counter()
        self._last = ""
        self._drawn_at = -float("inf")

    def update(self, done: float) -> None:
        if not self.enabled:
            return
        fraction = min(1.0, done / self.total) if self.total > 0 else 1.0
        now = time.perf_counter()
        if fraction < 1.0 and now - self._drawn_at < _MIN_INTERVAL:
            return
        self._drawn_at = now
        elapsed = now - self.start
        rtf = done / elapsed if elapsed > 0 else 0.0
        filled = int(round(fraction * _WIDTH))
        line = f"\r[{'#' * filled}{'.' * (_WIDTH - filled)}] {100 * fraction:5.1f}%  t = {done:.2f} / " \
               f"{self.total:.2f} s  ({rtf:.1f}x real time)"
        if line != self._last:
            self.stream.write(line)
            self.stream.flush()
            self._last = line

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()
