"""One command input of a node: validation, last-valid hold, timeout, and its diagnostic status.

Safety rules (bad input is rejected and said, never passed on): a command of the wrong
length, with NaN/inf, or naming unknown joints is rejected,
the input keeps its last valid command, and the rejection is reported at ERROR level; when no valid
command arrived within `timeout` seconds the input yields zero (zero torque), like Intera's
joint_command_timeout, and reports it.
"""
from __future__ import annotations

import numpy as np

from space_robot_dynamics.errors import CommandError

from .conversions import ERROR, OK, WARN, read_command_vector


class CommandInput:
    """Float64MultiArray efforts for `joints` (that order), held until `timeout` s without a valid one."""

    def __init__(self, name: str, joints: tuple[str, ...] | list[str], timeout: float, idle: str = "zero torque",
                 required: bool = True):
        # idle: what the actuators do without a command; required: whether having none is worth a WARN (the arm
        # and wheels need one; thrusters are simply off)
        self.idle, self.required = idle, required
        self.name = name
        self.joints = tuple(joints)
        self._size = len(self.joints)
        self.timeout = float(timeout)
        self.value = np.zeros(len(self.joints))
        self.received_at: float | None = None
        self.accepted = 0
        self.rejected = 0
        self.timeouts = 0
        self.last_error = ""
        self._rejected_since_report = 0
        self._was_timed_out = True

    def offer(self, msg, now: float) -> bool:
        """Take a Float64MultiArray; False (and the previous command kept) if it is rejected."""
        try:
            values = read_command_vector(msg, self._size, self.name)
        except CommandError as exc:
            self.reject(str(exc))
            return False
        self.accept(values, now)
        return True

    def accept(self, values: np.ndarray, now: float) -> None:
        """A command already checked by its reader (len(joints) floats) is the one to apply from now."""
        self.value = values
        self.received_at = now
        self.accepted += 1

    def reject(self, reason: str) -> None:
        self.rejected += 1
        self._rejected_since_report += 1
        self.last_error = reason

    def age(self, now: float) -> float:
        return float("inf") if self.received_at is None else now - self.received_at

    def timed_out(self, now: float) -> bool:
        return self.age(now) > self.timeout

    def active(self, now: float) -> np.ndarray:
        """The command to apply now: the last valid one, or zeros after the timeout."""
        received = self.received_at              # (timed_out(now), inline: this runs every physics step)
        timed_out = received is None or now - received > self.timeout
        if timed_out and not self._was_timed_out:
            self.timeouts += 1
        self._was_timed_out = timed_out
        return np.zeros(len(self.joints)) if timed_out else self.value

    def status(self, now: float) -> tuple[int, str, list[tuple[str, object]]]:
        """(level, message, key-values) for a DiagnosticStatus; clears the 'rejected since last report' count."""
        rejected_now, self._rejected_since_report = self._rejected_since_report, 0
        age = self.age(now)
        # a timeout the physics step has not counted yet (the diagnostics timer can run before the step at the same
        # instant, or while simulated time is held): counted here too, so an ERROR for it never says timeouts 0
        timeouts = self.timeouts + int(self.received_at is not None and self.timed_out(now) and not self._was_timed_out)
        values = [("accepted", self.accepted), ("rejected", self.rejected), ("timeouts", timeouts),
                  ("age_s", age if np.isfinite(age) else -1.0), ("timeout_s", self.timeout),
                  ("timed_out", self.timed_out(now)), ("last_error", self.last_error)]
        if rejected_now:
            return ERROR, f"rejected {rejected_now} command(s), keeping the last valid one: {self.last_error}", values
        if self.received_at is None:
            return (WARN if self.required else OK), f"no command received yet: {self.idle}", values
        if self.timed_out(now):
            return (ERROR if self.required else OK), f"no valid command for {age:.3f} s (timeout {self.timeout} s): " \
                                                     f"{self.idle}", values
        return OK, "receiving commands", values
