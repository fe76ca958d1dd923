"""Star tracker: the attitude of the link it is mounted on (the bus), with noise, latency and outages.

The error of one solution is a small rotation in the sensor frame, dtheta_s ~ N(0, diag(s_c^2, s_c^2, s_b^2)),
s_c cross-boresight and s_b about the boresight (the sensor's z axis): a tracker resolves rotations about its
boresight several times worse than across it (its field of view is narrow; a roll moves stars less than a tilt).
Expressed in the link frame, dtheta_l = R_link_sensor dtheta_s, and the reported attitude is the true one
perturbed on the body side (a multiplicative, body-frame error: the attitude filter's convention):

    q_world_link,measured = q_world_link (x) exp(dtheta_l)

`covariance` is the 3x3 covariance of dtheta_l (rad^2, link frame). ROS's PoseWithCovariance wants the rotation
covariance about the fixed axes of its header frame (the world): `covariance_in_world` rotates it.

Each solution is stamped at the time the tracker sampled and handed out `latency` seconds later (delay_line.py);
no solution is taken during an outage window (sun or moon in the field of view, a reset), nor handed out while
one lasts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from space_robot_dynamics.config_reader import ConfigReader

from .delay_line import DelayLine, Stamped
from .mounting import Mounting, read_mounting
from .time_windows import TimeWindows, read_windows

NAME = "star_tracker"


@dataclass(frozen=True)
class StarTrackerConfig:
    rate: float                       # Hz
    cross_boresight: float            # rad, 1 sigma, about the sensor's x and y axes
    about_boresight: float            # rad, 1 sigma, about the sensor's z axis
    latency: float                    # s
    outages: TimeWindows              # s: no solution inside
    mounting: Mounting

    @property
    def covariance(self) -> np.ndarray:
        """Covariance of dtheta_l (rad^2, link frame)."""
        r = self.mounting.rotation.as_matrix()
        sensor = np.diag([self.cross_boresight ** 2, self.cross_boresight ** 2, self.about_boresight ** 2])
        return r @ sensor @ r.T


def read_star_tracker(reader: ConfigReader) -> StarTrackerConfig:
    config = StarTrackerConfig(
        rate=reader.frequency("rate"),
        cross_boresight=reader.number("cross_boresight", minimum=0.0),
        about_boresight=reader.number("about_boresight", minimum=0.0),
        latency=reader.number("latency", 0.0, minimum=0.0),
        outages=read_windows(reader, "outages"),
        mounting=read_mounting(reader, "base_link", "star_tracker_link"),
    )
    reader.reject_unknown()
    return config


@dataclass(frozen=True)
class AttitudeSolution:
    """q_world_link (x, y, z, w) as measured; covariance (rad^2) of its error, link frame."""

    xyzw: np.ndarray
    covariance: np.ndarray


def covariance_in_world(solution: AttitudeSolution) -> np.ndarray:
    """The solution's rotation covariance about the world's fixed axes (PoseWithCovariance's convention)."""
    r = Rotation.from_quat(solution.xyzw).as_matrix()
    return r @ solution.covariance @ r.T


class StarTracker:
    """`sample(t, q)` once per period; `release(now)` every tick gives the solutions due (delay_line.Stamped)."""

    def __init__(self, config: StarTrackerConfig, stream: np.random.Generator):
        self.config = config
        self._stream = stream
        self._sigma = np.array([config.cross_boresight, config.cross_boresight, config.about_boresight])
        self._to_link = config.mounting.rotation.as_matrix()
        self._covariance = config.covariance
        self._line = DelayLine(config.latency)
        self.outages = config.outages

    def sample(self, t: float, q_world_link_xyzw: np.ndarray) -> bool:
        """Take a solution at time `t` (s) of the true attitude; False (nothing taken) during an outage. The noise
        is drawn either way, so a solution's noise does not depend on the outages before it."""
        error = self._to_link @ (self._sigma * self._stream.standard_normal(3))
        if self.outages.contains(t):
            return False
        measured = Rotation.from_quat(q_world_link_xyzw) * Rotation.from_rotvec(error)
        self._line.push(t, AttitudeSolution(measured.as_quat(), self._covariance))
        return True

    def release(self, now: float) -> list[Stamped]:
        """Solutions due by `now` (s); those whose hand-out falls in an outage are lost with it."""
        return [s for s in self._line.release(now) if not self.outages.contains(now)]
