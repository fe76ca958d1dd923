"""A node core's timers on a clock that its host advances itself, in jumps (the ROS 2 host: simulated time from
/clock and from the stamps of a time-source topic, the wall clock, or the paced lockstep of the dynamics node).

Each timer is due at the whole multiples of its period counted from `start` (in the lockstep runtime: whole
numbers of ticks from 0, the same instants). `run(now)` calls the timers due at `now` in (phase, declaration)
order, as the lockstep graph orders a tick, each once however many of its periods the clock jumped over (as an
rclpy timer skips missed periods), and moves each to its first instant after `now`. `phases` restricts a call
to some phases, so that a host can split a tick (the dynamics node: sensors and monitors at t, then the
physics step of t once the commands answering them have had their time to arrive).
"""
from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from .node_core import Timer

# s: an instant within this of a due time is that due time (due times are sums of float periods)
_SLACK = 1e-9


class TimerSchedule:
    def __init__(self, timers: Sequence[Timer], start: float = 0.0):
        for timer in timers:
            if not timer.period > 0:
                raise ValueError(f"timer {timer.name!r}: period must be > 0 s, got {timer.period}")
        order = sorted(range(len(timers)), key=lambda i: (timers[i].phase, i))
        self.timers = [timers[i] for i in order]
        self.start = float(start)
        self._count = [0] * len(self.timers)        # index of each timer's next due instant

    def due_time(self, index: int) -> float:
        timer = self.timers[index]
        return self.start + self._count[index] * timer.period

    def next_due(self) -> float:
        """The earliest instant at which some timer is due (inf without timers)."""
        return min((self.due_time(i) for i in range(len(self.timers))), default=math.inf)

    def run(self, now: float, phases: Collection[int] | None = None) -> int:
        """Call every timer (of `phases`, default all) due at `now` with `now`; returns how many ran."""
        ran = 0
        elapsed = now - self.start
        for index, timer in enumerate(self.timers):
            if phases is not None and timer.phase not in phases:
                continue
            if elapsed < self._count[index] * timer.period - _SLACK:
                continue
            # the first instant after now (missed periods are skipped, not caught up)
            self._count[index] = math.floor((elapsed + _SLACK) / timer.period) + 1
            timer.callback(now)
            ran += 1
        return ran
