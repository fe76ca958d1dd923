"""SIGINT and SIGTERM as a request to stop, for the rclpy nodes.

A terminal's Ctrl-C reaches every process of the group, so under `ros2 launch` each node gets SIGINT twice (from
the terminal and from launch), and launch escalates to SIGTERM if a node lingers. rclpy's own handlers (Humble)
shut the context down on the first signal and chain to Python's default SIGINT handler, which raises
KeyboardInterrupt wherever the node is, e.g. inside destroy_node() on the second one. Instead, rclpy.init runs
with SignalHandlerOptions.NO and these handlers only note the first signal: the node's loop sees it within one
wait (<= 0.1 s), publishes its last state and ends with exit status 0, and later signals change nothing.
"""
from __future__ import annotations

import signal

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopSignals:
    def __init__(self):
        self.received: str | None = None        # name of the first signal, e.g. "SIGINT"
        self.count = 0
        self._previous: dict = {}

    def install(self) -> StopSignals:
        for signum in STOP_SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def restore(self) -> None:
        """The handlers from before install() (for a caller that goes on without a node)."""
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous = {}

    def _on_signal(self, signum, _frame) -> None:
        self.count += 1
        if self.received is None:
            self.received = signal.Signals(signum).name

    @property
    def stop_requested(self) -> bool:
        return self.received is not None
