"""Latency: a measurement taken at time t is handed out at t + latency, still stamped t.

The sensor's processing (a star tracker's centroiding and matching, a pose estimator's image processing) takes
time; the measurement describes the instant the sensor sampled, so ROS stamps it then (header.stamp is the
measurement time, REP-103 practice), and the consumer sees it only later. The line is first in, first out; with
a constant latency the order of release is the order of sampling.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

# Slack on the release comparison (s): a sample due at t + latency is released at the tick of that time even
# when the tick's float time is a few ulps short of t + latency (ticks are counted in steps of dt).
RELEASE_SLACK_S = 1e-9


@dataclass(frozen=True)
class Stamped:
    """A measurement and the simulated time (s) it was taken at."""

    stamp: float
    value: Any


class DelayLine:
    """Holds measurements for `latency` seconds (>= 0)."""

    def __init__(self, latency: float):
        if not latency >= 0.0:
            raise ValueError(f"latency must be >= 0 s, got {latency}")
        self.latency = float(latency)
        self._waiting: deque[Stamped] = deque()

    def push(self, stamp: float, value: Any) -> None:
        self._waiting.append(Stamped(stamp, value))

    def release(self, now: float) -> list[Stamped]:
        """The measurements due by `now` (s), oldest first."""
        out = []
        while self._waiting and self._waiting[0].stamp + self.latency <= now + RELEASE_SLACK_S:
            out.append(self._waiting.popleft())
        return out

    def __len__(self) -> int:
        return len(self._waiting)
