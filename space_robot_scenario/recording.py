"""A scenario's `recording:` section: what the standalone runtime's bag keeps."""
from __future__ import annotations

from dataclasses import dataclass

from space_robot_dynamics.config_reader import ConfigReader


@dataclass(frozen=True)
class RecordingConfig:
    """Bag recording: topics published faster than `rate` (Hz) are decimated to it."""

    rate: float = 100.0
    visualization: bool = True      # the visualization node's markers and paths in the bag (for RViz replay)


def read_recording(reader: ConfigReader) -> RecordingConfig:
    rec = reader.sub("recording", {})
    recording = RecordingConfig(rate=rec.frequency("rate", RecordingConfig.rate),
                                visualization=rec.boolean("visualization", RecordingConfig.visualization))
    rec.reject_unknown()
    return recording
