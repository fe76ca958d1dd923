"""Errors raised on bad input. Each message names the offending field and the file or argument it came from."""


class SpaceRobotError(ValueError):
    """Base class: bad input detected by space_robot."""


class ConfigError(SpaceRobotError):
    """Malformed or out-of-range configuration (YAML, URDF, model options).

    `field` is the dotted path of the offending entry, e.g. ``simulation.dt``.
    """

    def __init__(self, field: str, problem: str, source: str | None = None):
        self.field = field
        self.problem = problem
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{field}: {problem}")


class CommandError(SpaceRobotError):
    """A command (torque vector, joint list) that cannot be applied: wrong length, NaN/inf, unknown joint."""

    def __init__(self, field: str, problem: str):
        self.field = field
        self.problem = problem
        super().__init__(f"{field}: {problem}")


class SimulationDivergedError(RuntimeError):
    """A step produced inf/NaN; the simulator keeps its last finite state."""

    def __init__(self, t: float, v_indices: list[int], q_indices: list[int]):
        self.t = t
        self.v_indices = v_indices
        self.q_indices = q_indices
        super().__init__(f"simulation diverged in the step from t={t:.6f} s (non-finite entries: v {v_indices}, "
                         f"q {q_indices}); state kept at t={t:.6f} s. Reduce simulation.dt or the torques.")
