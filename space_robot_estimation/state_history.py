"""A filter's states over the last `history` seconds, so that a measurement arriving late is applied at its stamp.

A measurement stamped t_s arrives after the filter has propagated past t_s (a star tracker's or a pose
estimator's processing time). Going back to the last state at or before t_s, correcting it there and propagating
again through every later step gives exactly what on-time delivery would have given (test_attitude_filter.py
checks it to round-off), at the cost of those steps again. A measurement older than the history is refused.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

# Slack (s) when matching a measurement's stamp to a state's time: both are counted in simulation steps, so equal
# times may differ by a few ulps
STAMP_SLACK_S = 1e-9


class StateHistory:
    """States (anything with a time `t`, s) in time order, the oldest dropped once `history` s old."""

    def __init__(self, history: float):
        self.history = float(history)
        self._states: deque = deque()

    def __bool__(self) -> bool:
        return bool(self._states)

    @property
    def latest(self) -> Any:
        return self._states[-1]

    def append(self, state: Any) -> None:
        self._states.append(state)
        while len(self._states) > 1 and self._states[0].t < state.t - self.history - STAMP_SLACK_S:
            self._states.popleft()

    def replay(self, stamp: float, correct: Callable[[Any], Any], step: Callable[[Any, Any], Any]) -> bool:
        """Replace the last state at or before `stamp` by correct(it), then each later one by step(previous,
        the one it replaces) (propagating again to the same times). False when the history starts after
        `stamp` (nothing changed)."""
        index = next((k for k in range(len(self._states) - 1, -1, -1)
                      if self._states[k].t <= stamp + STAMP_SLACK_S), None)
        if index is None:
            return False
        states = list(self._states)
        states[index] = correct(states[index])
        for k in range(index + 1, len(states)):
            states[k] = step(states[k - 1], states[k])
        self._states = deque(states)
        return True
