"""Errors raised on bad input. Each message names the offending field and the file or argument it came from,
and is one line: a third-party text quoted in it (PyYAML's, a rosbag reader's, pyarrow's) often spans several,
which a tool's one-line error would otherwise split into a paragraph."""
from __future__ import annotations

import re


def one_line(text: str) -> str:
    """`text` with each line break and the indentation around it made one space (other spacing, e.g. inside a
    quoted value, is kept)."""
    return re.sub(r"\s*[\r\n]\s*", " ", str(text)).strip()


class SpaceRobotError(ValueError):
    """Base class: bad input detected by space_robot."""


class ConfigError(SpaceRobotError):
    """Malformed or out-of-range configuration (YAML, URDF, model options).

    `field` is the dotted path of the offending entry, e.g. ``simulation.dt``.
    """

    def __init__(self, field: str, problem: str, source: str | None = None):
        self.field = field
        self.problem = problem = one_line(problem)
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{field}: {problem}")


class StepTooLargeError(ConfigError):
    """simulation.dt is above the largest step the explicit integrator is stable at (`largest_stable_dt`, s).

    The core that finds it names that bound; a caller that also knows which steps the rest of the run accepts
    (the standalone runtime: every node rate a whole number of steps) names a step that passes both with
    `suggesting`."""

    def __init__(self, reason: str, largest_stable_dt: float, alternatives: str = "", example: str = "",
                 source: str | None = None, field: str = "simulation.dt"):
        self.reason, self.largest_stable_dt, self.alternatives = reason, largest_stable_dt, alternatives
        self.example = example
        bound = _down(largest_stable_dt)
        super().__init__(field, f"{reason}; use dt <= {bound} s{example}"
                         + (f", {alternatives}" if alternatives else ""), source)

    def suggesting(self, dt: str, why: str, source: str | None = None) -> StepTooLargeError:
        """The same error naming `dt` (its text, s) as an example of a step that passes; `why` says why it."""
        return StepTooLargeError(self.reason, self.largest_stable_dt, self.alternatives, f" (e.g. {dt} s: {why})",
                                 source or self.source, self.field)


def _down(value: float) -> str:
    """`value` to 3 significant digits, rounded down (a step the message names must pass the check)."""
    import math

    exponent = math.floor(math.log10(value)) - 2
    return f"{math.floor(value / 10.0 ** exponent) * 10.0 ** exponent:.3g}"


class CommandError(SpaceRobotError):
    """A command (torque vector, joint list) that cannot be applied: wrong length, NaN/inf, unknown joint."""

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem = one_line(problem)
        super().__init__(f"{field}: {problem}")


class SimulationDivergedError(RuntimeError):
    """A step produced inf/NaN; the simulator keeps its last finite state."""

    def __init__(self, t: float, v_indices: list[int], q_indices: list[int]):
        self.t = t
        self.v_indices = v_indices
        self.q_indices = q_indices
        super().__init__(f"simulation diverged in the step from t={t:.6f} s (non-finite entries: v {v_indices}, "
                         f"q {q_indices}); state kept at t={t:.6f} s. Reduce simulation.dt or the torques.")
