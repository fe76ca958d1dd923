"""The model file's `estimators` section: which estimators run, how they are tuned, and how often they publish.

    estimators:
      rate: 1000.0                   # Hz: estimates published (the controller's rate: it reads them as its state)
      attitude: {...}                # attitude_filter.py (needs the gyro and the star tracker)
      target: {...}                  # target_filter.py (needs the relative pose sensor and the attitude filter);
                                     # inertia and com: `model` (default) takes the target body's from the model
      joints:                        # joint_rate_tracker.py (needs the arm's encoders); wheels: the tachometers
        acceleration_noise: 1.0      # rad/s^2: the tracker's white acceleration sigma_w

docs/sensing.md sec. "Estimators" explains each value. Sections left out do not run.
"""
from __future__ import annotations

from dataclasses import dataclass

from space_robot_dynamics.config_reader import ConfigReader

from .attitude_filter import AttitudeFilterConfig, read_attitude_filter
from .target_filter import TargetFilterConfig, read_target_filter

FROM_MODEL = "model"        # the target's inertia and centre of mass as the model has them


@dataclass(frozen=True)
class EstimatorsConfig:
    rate: float                                   # Hz
    attitude: AttitudeFilterConfig | None = None
    target: TargetFilterConfig | None = None      # inertia None: the model's (resolved by whoever builds it)
    joint_acceleration_noise: float | None = None  # rad/s^2; None: no joint tracker
    source: str | None = None


def read_estimators(reader: ConfigReader) -> EstimatorsConfig | None:
    """`reader`: the `estimators` mapping; None when the model file has none (an empty mapping)."""
    if not reader.data:
        return None
    rate = reader.frequency("rate")
    attitude = read_attitude_filter(reader.sub("attitude")) if reader.has("attitude") else None
    target = None
    if reader.has("target"):
        sub = reader.sub("target")
        target = read_target_filter(sub, allow_model=True)
    joints = None
    if reader.has("joints"):
        sub = reader.sub("joints")
        joints = sub.number("acceleration_noise", exclusive_minimum=0.0)
        sub.reject_unknown()
    reader.reject_unknown()
    return EstimatorsConfig(rate, attitude, target, joints, reader.source)
