"""A scenario's `torque_profile:` section: open-loop arm torques (sinusoids) that the scenario player publishes on
the arm command topic in place of a controller (`controller: null`), e.g. seed 000's flexible-link study."""
from __future__ import annotations

from dataclasses import dataclass

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.model.model_config import ModelConfig


@dataclass(frozen=True)
class Sinusoid:
    """amplitude sin(2 pi t / period + phase) + offset (N m, s, rad, N m)."""

    amplitude: float
    period: float
    phase: float = 0.0
    offset: float = 0.0


@dataclass(frozen=True)
class TorqueProfile:
    """Open-loop arm torques: per arm joint a Sinusoid (joints not named get zero), published at `rate` (Hz) from
    `start` to `stop` (s; zero after stop, None: never stops). Each command is the torque at the middle of its
    period (held by the dynamics node until the next one: at rate = 1 / dt, the midpoint rule of each step)."""

    rate: float
    sinusoids: dict             # joint name -> Sinusoid
    start: float = 0.0
    stop: float | None = None


def read_torque_profile(reader: ConfigReader, model: ModelConfig) -> TorqueProfile | None:
    """The `torque_profile:` section (absent or null: None); the joints it names must be arm joints of `model`."""
    if reader.raw("torque_profile", None) is None:
        return None
    tp = reader.sub("torque_profile")
    sinusoids = {}
    sub = tp.sub("sinusoids")
    for name in list(sub.data):
        if name not in model.arm_joints:
            raise sub.error(name, f"not an arm joint of the model (have {list(model.arm_joints)})")
        entry = sub.sub(name)
        sinusoids[name] = Sinusoid(entry.number("amplitude"), entry.number("period", exclusive_minimum=0.0),
                                   entry.number("phase", 0.0), entry.number("offset", 0.0))
        entry.reject_unknown()
    if not sinusoids:
        raise tp.error("sinusoids", "must name at least one arm joint")
    start = tp.number("start", 0.0, minimum=0.0)
    stop = tp.raw("stop", None)
    if stop is not None:
        stop = tp.number("stop", exclusive_minimum=start)
    profile = TorqueProfile(tp.frequency("rate", 1000.0), sinusoids, start, stop)
    tp.reject_unknown()
    return profile
