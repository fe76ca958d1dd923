"""A scenario's `recording:` section, the recording plan: what the standalone runtime's bag keeps, at which rate.

    recording:
      rate: 100.0              # Hz: every publisher of a topic faster than this is decimated to it (default 100)
      visualization: true      # the visualization node (markers, paths) runs and is recorded (default true)
      topics:                  # per-topic rates (Hz) that differ from `rate`; 0: not in the bag (default: none)
        clock: 0
        joint_states: 1000.0

Defaults (no `topics`): every topic of the graph at `rate`, latched topics (robot_description, tf_static, grasp
events) with every message. A topic's own rate replaces `rate` for the bag only: the run's summary is computed
from the same messages at `rate` whatever the plan (run_trace.py), so a plan changes the bag, never summary.json.
A message neither the bag nor the summary nor another node takes is never built (lockstep_graph.py). The topic
names are checked against the graph when the run is built (simulation_run.py: ConfigError naming
recording.topics.<name>).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from space_robot_dynamics.config_reader import ConfigReader


@dataclass(frozen=True)
class RecordingConfig:
    """Bag recording: topics published faster than `rate` (Hz) are decimated to it; `topics`: (topic, rate Hz, 0 =
    not recorded) where the plan differs from `rate`."""

    rate: float = 100.0
    visualization: bool = True      # the visualization node's markers and paths in the bag (for RViz replay)
    topics: tuple[tuple[str, float], ...] = ()

    def topic_rate(self, topic: str) -> float:
        """The bag's rate of `topic` (Hz; 0: not recorded)."""
        for name, rate in self.topics:
            if name == topic:
                return rate
        return self.rate


def read_recording(reader: ConfigReader) -> RecordingConfig:
    rec = reader.sub("recording", {})
    topics = rec.sub("topics", {})
    plan = []
    for name in topics.data:
        rate = topics.number(str(name), minimum=0.0)
        if rate > 0.0 and not math.isfinite(1.0 / rate):
            raise topics.error(str(name), f"must be 0 (not recorded) or a rate in Hz with a finite period, "
                                          f"got {rate!r}")
        plan.append((str(name), rate))
    recording = RecordingConfig(rate=rec.frequency("rate", RecordingConfig.rate),
                                visualization=rec.boolean("visualization", RecordingConfig.visualization),
                                topics=tuple(plan))
    rec.reject_unknown()
    return recording
