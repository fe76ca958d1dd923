"""Station keeping on the bus thrusters: a PD on the bus's position relative to a hold point in LVLH, with the
Clohessy-Wiltshire feedforward that holds a body at rest there (docs/orbit.md sec. 8).

In LVLH (Hill's axes: x radial, y along-track, z orbit normal; circular reference orbit of mean motion n) a body of
mass m obeys the CW equations (Vallado 2013 eq. 6-65) x'' - 2n y' - 3n^2 x = f_x/m, y'' + 2n x' = f_y/m,
z'' + n^2 z = f_z/m. The thrust (LVLH axes)

    f = m a_h + m (-Kp e - Kd e'),   a_h = r_h'' + (-3n^2 x_h - 2n y_h', 2n x_h', n^2 z_h)

with e = r - r_h the position error and a_h the force per unit mass that moves a body along the hold point's path
r_h(t) exactly (CW's equations solved for the force; at rest (-3n^2 x_h, 0, n^2 z_h)). The CW terms of the error
itself are left to the feedback (n / wn = 0.01 at wn = 0.1 rad/s). Kp = wn^2, Kd = 2 zeta wn: the error of each axis
then obeys e'' + 2 zeta wn e' + wn^2 e = 0 up to that coupling.
A hold point can move (`moves`, the approach from a far hold point to the capture position): from where it is at a
move's start to the move's `to`, on a quintic of the move's duration (zero rate and acceleration at both ends), whose
acceleration and rate are fed forward as well. `after_grasp`: `release` turns the thrusters off while a grasp holds
(the joined stack then drifts: ~1 cm per minute per metre of offset from the reference point), `hold` keeps the bus
at its point with the stack's mass. m: the bus subtree's mass, plus the target's while the grasp holds (set_mass).
The force is scaled down, not clipped per axis, to the thrusters' max_force (direction kept), and turned into the bus
frame, where the thrusters take it (model/base_thrusters.py) through the base link's origin; the couple c x f (c: the
bus subtree's centre of mass in the base link frame, the arm's included) moves it to the centre of mass, so that it
does not turn the bus (54 N 0.2 m off would be 11 N m, 55 times the wheels' 0.2 N m); couples above the thrusters'
max_torque scale the whole wrench down. Without an orbit n = 0: a plain PD hold in the world
frame.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel

AFTER_GRASP = ("release", "hold")


@dataclass(frozen=True)
class HoldPointMove:
    """The hold point moves from wherever it is at `start` (s) to `to` (m, LVLH) in `duration` (s)."""

    start: float
    duration: float
    to: tuple


@dataclass(frozen=True)
class StationKeepingConfig:
    """natural_frequency (rad/s) and damping_ratio of the position loop; hold_point (m, LVLH/world) or None: the bus's
    position at the first update; feedforward: the CW force that holds a body at rest at the hold point; moves
    (HoldPointMove, by start time); after_grasp (AFTER_GRASP)."""

    natural_frequency: float = 0.05
    damping_ratio: float = 1.0
    hold_point: tuple | None = None
    feedforward: bool = True
    moves: tuple = ()
    after_grasp: str = "release"


def read_station_keeping(reader: ConfigReader) -> StationKeepingConfig:
    hold = reader.raw("hold_point", None)
    moves = []
    for item in (reader.sub_list("moves") if reader.raw("moves", None) else []):
        move = HoldPointMove(item.number("start", minimum=0.0), item.number("duration", exclusive_minimum=0.0),
                             tuple(item.vector("to", 3).tolist()))
        item.reject_unknown()
        if moves and move.start < moves[-1].start + moves[-1].duration:
            raise item.error("start", f"{move.start:g} s: a move starts after the one before ends "
                                      f"({moves[-1].start + moves[-1].duration:g} s)")
        moves.append(move)
    config = StationKeepingConfig(
        natural_frequency=reader.number("natural_frequency", 0.05, exclusive_minimum=0.0, maximum=10.0),
        damping_ratio=reader.number("damping_ratio", 1.0, exclusive_minimum=0.0),
        hold_point=None if hold is None else tuple(reader.vector("hold_point", 3).tolist()),
        feedforward=reader.boolean("feedforward", True), moves=tuple(moves),
        after_grasp=reader.string("after_grasp", "release", choices=AFTER_GRASP))
    reader.reject_unknown()
    return config


@dataclass(frozen=True)
class StationKeepingOutput:
    """force_lvlh (N, world/LVLH axes) and force_base (N, the bus frame: the thrusters' command), the position error
    (m, LVLH) and whether the thrusters' limit scaled the force down."""

    force_lvlh: np.ndarray
    force_base: np.ndarray
    torque_base: np.ndarray           # N m, base link frame: the couple putting the force through the centre of mass
    error: np.ndarray
    saturated: bool
    hold_point: np.ndarray = None     # m, LVLH, where the bus is held now


def hold_point_at(config: StationKeepingConfig, start: np.ndarray, t: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position, rate, acceleration) of the hold point at t (s) that starts at `start` (m): the moves' quintics,
    each from where the point was when it starts."""
    point, rate, acceleration = np.array(start, dtype=float), np.zeros(3), np.zeros(3)
    for move in config.moves:
        if t < move.start:
            break
        to = np.array(move.to)
        x = min((t - move.start) / move.duration, 1.0)
        delta = to - point
        point = point + delta * x ** 3 * (10.0 - 15.0 * x + 6.0 * x * x)
        if x < 1.0:
            rate = delta * 30.0 * x * x * (1.0 - x) ** 2 / move.duration
            acceleration = delta * 60.0 * x * (1.0 - x) * (1.0 - 2.0 * x) / move.duration ** 2
    return point, rate, acceleration


class StationKeeping:
    """The law of the module docstring for the bus subtree `bus` of `system`."""

    def __init__(self, system: SystemModel, bus: str, config: StationKeepingConfig, mean_motion: float = 0.0,
                 source: str | None = None):
        thrusters = system.base_thrusters
        if thrusters is None or thrusters.config.subtree != bus:
            raise ConfigError("controller.modes", f"station_keeping needs base thrusters on the bus subtree {bus!r} "
                              "(the model file's base_thrusters section)", source)
        self.config = config
        self.n = float(mean_motion)
        self.max_force, self.max_torque = thrusters.config.max_force, thrusters.config.max_torque
        self.model, self.data = system.model, system.model.createData()
        joint = self._joint = system.subtree(bus).root_joint_id
        self._frame = system.model.frames[system.model.getFrameId(thrusters.base_link)].placement
        self._q = slice(system.model.joints[joint].idx_q, system.model.joints[joint].idx_q + 7)
        self._v = slice(system.model.joints[joint].idx_v, system.model.joints[joint].idx_v + 3)
        model = system.model
        self.bus_mass = sum(model.inertias[system.joint_id(n)].mass for n in system.subtree(bus).joint_names)
        self.mass = self.bus_mass
        self.hold_point = None if config.hold_point is None else np.array(config.hold_point)

    def set_mass(self, mass: float) -> None:
        """The mass the thrusters move (kg): the bus subtree's, or the joined stack's while the grasp holds."""
        self.mass = float(mass)

    def set_hold_point(self, point) -> None:
        """A new hold point (m, LVLH)."""
        self.hold_point = np.array(point, dtype=float)

    def update(self, t: float, q: np.ndarray, v: np.ndarray) -> StationKeepingOutput:
        """The thrust at time t (s) for the state (q, v) (world frame: LVLH in orbit)."""
        placement = self.model.jointPlacements[self._joint] * pin.XYZQUATToSE3(q[self._q]) * self._frame
        position, rotation = placement.translation, placement.rotation
        velocity = rotation @ v[self._v]
        if self.hold_point is None:
            self.hold_point = position.copy()
        c = self.config
        wn, n = c.natural_frequency, self.n
        point, rate, acceleration = hold_point_at(self.config, self.hold_point, t)
        error = position - point
        acceleration = acceleration - wn * wn * error - 2.0 * c.damping_ratio * wn * (velocity - rate)
        if c.feedforward:
            acceleration += np.array([-3.0 * n * n * point[0] - 2.0 * n * rate[1], 2.0 * n * rate[0],
                                      n * n * point[2]])
        force = self.mass * acceleration
        # the bus subtree's centre of mass: Pinocchio's data.com[j] is subtree j's in joint j's frame
        pin.centerOfMass(self.model, self.data, q, True)
        lever = self._frame.actInv(self.data.com[self._joint])
        force_base = rotation.T @ force
        torque_base = np.cross(lever, force_base)
        scale = min(1.0, self.max_force / max(float(np.linalg.norm(force)), 1e-300),
                    self.max_torque / max(float(np.linalg.norm(torque_base)), 1e-300))
        saturated = scale < 1.0
        if saturated:           # a hair inside the limit: the dynamics node rejects (never clips) a command beyond it
            scale *= 1.0 - 1e-9
        return StationKeepingOutput(force * scale, force_base * scale, torque_base * scale, error, saturated, point)
