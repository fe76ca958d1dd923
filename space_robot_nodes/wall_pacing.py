"""Simulated time paced on a steady wall clock (the dynamics node under ROS 2): which physics steps are due.

Step k (from k * tick to (k + 1) * tick of simulated time) is due once the wall clock has run (k + 1) * tick /
real_time_factor seconds since `start`, so simulated time follows wall time times real_time_factor. A host
that falls behind by more than `max_catch_up` s of simulated time drops the backlog (the wall reference moves
on) instead of running ever longer bursts to catch up: a slow machine runs slower than asked, it does not spiral.
"""
from __future__ import annotations

import math

from space_robot_dynamics.errors import ConfigError


class WallPacing:
    def __init__(self, tick: float, real_time_factor: float = 1.0, max_catch_up: float = 0.1):
        if not (isinstance(real_time_factor, (int, float)) and math.isfinite(real_time_factor)
                and real_time_factor > 0):
            raise ConfigError("real_time_factor", f"must be a finite number > 0, got {real_time_factor}")
        if not tick > 0:
            raise ConfigError("simulation.dt", f"must be > 0 s, got {tick}")
        self.tick = float(tick)
        self.real_time_factor = float(real_time_factor)
        self.max_steps = max(1, int(max_catch_up / tick))
        self.wall_start: float | None = None
        self.dropped = 0.0                      # s of simulated time given up to stay paced

    def start(self, wall_now: float) -> None:
        self.wall_start = wall_now

    def steps_due(self, wall_now: float, steps_done: int) -> int:
        """How many steps should run now, after `steps_done` (0 when ahead; at most the catch-up limit, the
        rest dropped)."""
        if self.wall_start is None:
            self.start(wall_now)
        behind = math.floor((wall_now - self.wall_start) * self.real_time_factor / self.tick + 1e-9) - steps_done
        if behind > self.max_steps:
            skipped = behind - self.max_steps
            self.wall_start += skipped * self.tick / self.real_time_factor
            self.dropped += skipped * self.tick
            behind = self.max_steps
        return max(0, behind)

    def wall_time_of(self, steps: int) -> float:
        """Wall time at which the step after `steps` done steps is due."""
        if self.wall_start is None:
            raise RuntimeError("pacing not started")
        return self.wall_start + (steps + 1) * self.tick / self.real_time_factor
