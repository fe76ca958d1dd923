"""SIGINT and SIGTERM as a request to stop at the next safe point, as `ros2 bag record` ends on either.

Python's default turns SIGINT into a KeyboardInterrupt wherever the program happens to be (half-way
through writing a bag chunk, say) and SIGTERM kills the process without running any cleanup: either can
leave a bag without its index and no metadata.yaml. Inside `Interruption`, both only set a flag; the run
loop looks at it between steps, then closes the bag, writes the summary and the plots of what was run. A
second signal while that happens is reported and otherwise ignored, so the outputs are finished.
"""
from __future__ import annotations

import signal
import sys
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interruption:
    """Context manager; `signum` is the first signal received (None: none). Handlers are installed only in
    the main thread (Python delivers signals there); elsewhere the flag stays None."""

    def __init__(self, stream=None):
        self.signum: int | None = None
        self.stream = stream
        self._previous: dict = {}

    def __enter__(self) -> Interruption:
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *_exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum, _frame) -> None:
        if self.signum is None:
            self.signum = signum
            return
        stream = self.stream or sys.stderr
        print(f"\n{signal.Signals(signum).name} again: still finishing the bag, summary and plots of the run so "
              "far; they will be complete in a moment", file=stream, flush=True)

    @property
    def requested(self) -> bool:
        return self.signum is not None

    @property
    def name(self) -> str | None:
        return None if self.signum is None else signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """128 + the signal number, as a shell reports a process ended by it (130 SIGINT, 143 SIGTERM)."""
        return 128 + int(self.signum or 0)
