"""SIGINT and SIGTERM as a request to stop at the next safe point, as `ros2 bag record` ends on either.

Python's default turns SIGINT into a KeyboardInterrupt wherever the program happens to be (half-way
through writing a bag chunk, say) and SIGTERM kills the process without running any cleanup: either can
leave a bag without its index and no metadata.yaml. Inside `Interruption`, both only set a flag; the run
loop looks at it between steps, then closes the bag, writes the summary and the plots of what was run. A
second signal while that happens is reported and otherwise ignored, so the outputs are finished.

The console scripts (console_scripts.py) enter one with `hold()` as their first instruction, before their tool's
imports (NumPy, Pinocchio, Ray: a second or two a Ctrl-C may fall into), and keep it to the process's end. A
tool with no safe point to stop at (space-robot-plot) sets `immediate`: a signal then raises `Interrupted` where
the program is, which the tool's last resort (command_line.py) turns into one line and 128 + the signal.
"""
from __future__ import annotations

import signal
import sys
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """Raised by the handler of an `immediate` Interruption; BaseException so that no `except Exception` of
    the program swallows it."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class Interruption:
    """Context manager; `signum` is the first signal received (None: none). Handlers are installed only in
    the main thread (Python delivers signals there); elsewhere the flag stays None."""

    def __init__(self, stream=None):
        self.signum: int | None = None
        self.stream = stream
        self.immediate = False
        self._previous: dict = {}

    def __enter__(self) -> Interruption:
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def hold(self) -> Interruption:
        """Enter for the life of the process (never exited): what a console script's first instruction does."""
        return self.__enter__()

    def rearm(self) -> None:
        """Install the handlers again: a library that set its own at the C level (Ray's core worker installs
        glog's failure handler for SIGTERM in the driver, which prints a stack and exits 1) replaced them
        behind Python's back. Call after such a library started."""
        if self._previous:
            for sig in SIGNALS:
                signal.signal(sig, self._handle)

    def __exit__(self, *_exc) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum, _frame) -> None:
        if self.signum is None:
            self.signum = signum
            if self.immediate:
                raise Interrupted(signum)
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
