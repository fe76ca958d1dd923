"""The part every command-line tool of the package shares around its own body: messages on stderr prefixed
with the tool's name, SIGINT and SIGTERM as a stop request (interruption.py), and the last resort for a bug.

The tools (space-robot-sim and space-robot-plot in cli.py, space-robot-identify, space-robot-campaign) each
keep their parser, their body and their exit statuses. What they share is here so that it is said the same way
by each: bad input is the body's to catch and say in one line naming the field, and an exception that escapes
the body anyway is a bug, said as one: its traceback, then one line asking for a report, and exit status 4,
which every tool's help text reserves for it. This module loads no NumPy: space-robot-identify sets
OPENBLAS_NUM_THREADS before NumPy loads, after importing it.
"""
from __future__ import annotations

import sys
import traceback
from collections.abc import Callable

from space_robot_runtime.interruption import Interrupted, Interruption

EXIT_INTERNAL = 4
INTERNAL_ERROR = "internal error (a bug; please report it with the traceback above)"


class CommandLine:
    """One tool's name (the `prog` of its parser), what it says on stderr, and the run of its body."""

    def __init__(self, tool: str):
        self.tool = tool

    def say(self, text: str) -> None:
        """One line on stderr, prefixed with the tool's name as argparse prefixes its usage errors."""
        print(f"{self.tool}: {text}", file=sys.stderr, flush=True)

    def internal_error(self, detail: str) -> int:
        """Say a bug (its traceback already printed above) and return its exit status."""
        self.say(f"{INTERNAL_ERROR}: {detail}")
        return EXIT_INTERNAL

    def run(self, body: Callable[[Interruption | None], int], *, interruptible: bool = True,
            interruption: Interruption | None = None) -> int:
        """body's exit status; EXIT_INTERNAL with the traceback and one line if an exception escapes it.

        interruptible: the body gets an entered Interruption and looks at it at its safe points (a signal then
        only sets it; the body returns interruption.exit_status, 130 or 143, once it has finished its outputs).
        False for a body that has no such point (space-robot-plot): it gets None and a signal ends it at once
        (the Interruption is `immediate`), said in one line with 128 + the signal.
        interruption: the one the console script holds since its first instruction (console_scripts.py); a
        signal that came during the imports is then said here, before the body starts. None: one is entered
        for the body's duration (a tool called from Python).
        """
        if interruption is None:
            with Interruption() as own:
                return self.run(body, interruptible=interruptible, interruption=own)
        if interruption.requested:
            self.say(f"interrupted by {interruption.name} while starting; nothing was done")
            return interruption.exit_status
        interruption.immediate = not interruptible
        try:
            return self._last_resort(body, interruption if interruptible else None)
        except Interrupted as stopped:
            self.say(f"interrupted by {stopped}; what was written so far is left as it is")
            return interruption.exit_status

    def _last_resort(self, body: Callable[[Interruption | None], int], interruption: Interruption | None) -> int:
        try:
            return body(interruption)
        except Exception as exc:  # noqa: BLE001 - the last resort: a bug, said as one, with its own exit status
            traceback.print_exc()
            return self.internal_error(f"{type(exc).__name__}: {exc}")
