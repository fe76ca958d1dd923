"""Base thrusters: a commanded wrench on a free-floating base (the thesis's F_bL, F_bA of seed 004 eq. 5.16).

Model file:

    base_thrusters:                 # absent: the bases have no thrusters (reaction wheels are internal torques)
      subtree: robot                # a subtree with a free-flyer base
      max_force: 50.0               # N, largest |f| the thrusters give (the norm of the commanded force)
      max_torque: 20.0              # N m, largest |tau| (the norm of the commanded couple)

A command is a force f (N) through the base link's origin and a couple tau (N m), both in the base link's axes
(REP-103 body frame: they turn with the base, as thrusters fixed on the bus do). The simulator applies it as an
external wrench (external_wrenches.py, expressed_in="local") held over each step. Unlike the wheels' torques it
changes the system's momentum: d p/dt = R_base f and d L_O/dt = r_base x (R_base f) + R_base tau (world frame, about
the world origin O), which the tests check. A command outside the limits is rejected, never clipped: the user asked
for a thrust the hardware does not have.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..command_checks import checked_vector
from ..config_reader import ConfigReader
from ..errors import CommandError, ConfigError


@dataclass(frozen=True)
class BaseThrustersConfig:
    """The `base_thrusters` section (module docstring): subtree name, limits on |f| (N) and |tau| (N m)."""

    subtree: str
    max_force: float
    max_torque: float


def read_base_thrusters(reader: ConfigReader) -> BaseThrustersConfig | None:
    """The model file's `base_thrusters` section, None without one; ConfigError naming the field."""
    if reader.raw("base_thrusters", None) is None:
        return None
    sub = reader.sub("base_thrusters")
    config = BaseThrustersConfig(subtree=sub.string("subtree"),
                                 max_force=sub.number("max_force", exclusive_minimum=0.0),
                                 max_torque=sub.number("max_torque", exclusive_minimum=0.0))
    sub.reject_unknown()
    return config


@dataclass(frozen=True)
class BaseThrusters:
    """Thrusters resolved on a model: the base link frame the wrench acts in and the limits."""

    config: BaseThrustersConfig
    base_link: str

    def check(self, force, torque) -> tuple[np.ndarray, np.ndarray]:
        """(f, tau) as 3-vectors of finite floats within the limits; CommandError naming the field otherwise."""
        f = checked_vector(force, 3, "base_thrusters.force")
        tau = checked_vector(torque, 3, "base_thrusters.torque")
        for name, value, limit in (("force", f, self.config.max_force), ("torque", tau, self.config.max_torque)):
            size = float(np.linalg.norm(value))
            if size > limit:
                raise CommandError(f"base_thrusters.{name}", f"|{name}| = {size:.6g} is beyond the thrusters' "
                                                             f"{limit:g} (model file base_thrusters.max_{name})")
        return f, tau


def resolve_base_thrusters(system, config: BaseThrustersConfig | None, source: str | None) -> BaseThrusters | None:
    """The thrusters on `system` (a SystemModel being built): the subtree must exist and float freely."""
    if config is None:
        return None
    names = [s.name for s in system.subtrees]
    if config.subtree not in names:
        raise ConfigError("base_thrusters.subtree", f"no subtree {config.subtree!r} (have {names})", source)
    subtree = system.subtree(config.subtree)
    if subtree.base_joint_type != "free_flyer":
        raise ConfigError("base_thrusters.subtree", f"{config.subtree!r} has a {subtree.base_joint_type!r} base: "
                                                    "thrusters need a free-flyer one", source)
    return BaseThrusters(config, subtree.base_link)
