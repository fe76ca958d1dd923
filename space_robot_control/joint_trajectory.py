"""Joint-trajectory following with trajectory_msgs/JointTrajectory semantics, on plain Python data.

Semantics (those of ros2_controllers' joint_trajectory_controller, where they apply):
- `joint_names` name the columns of every point and are mapped by name onto the configured joint list
  (any order). Unknown or duplicate names are rejected; a goal that leaves joints out is rejected unless
  partial goals are allowed, in which case the missing joints hold their start position.
- A point is (positions, velocities or None, accelerations or None, time_from_start in s). An empty list
  counts as None, as ROS leaves unused fields empty; missing rates are zero at that knot.
- time_from_start is relative to the trajectory start (start_time = header.stamp; now when absent) and
  strictly increasing. A stamp already past on arrival keeps its time base, as joint_trajectory_controller's
  (trajectory.cpp: the points are reached at stamp + time_from_start): the points already past are skipped and
  the motion runs from the current state to the next point at its stamped time; a trajectory whose last point
  is already past is rejected (JTC's "ends in the past"). (JTC would sample between two past points at once,
  a jump; here the reference stays continuous.) The first point may sit at 0 s only if it matches the current
  positions within the start tolerance (MoveIt sends the current state as its first point); it is then merged
  into the start.
- The motion starts from the current state: measured positions and velocities, and the acceleration of
  the reference being followed (zero when holding), so the commanded acceleration does not jump. A start
  in the future holds the current positions at rest until then.
- After the last point the reference holds the last positions at rest.

Interpolation: one quintic polynomial per segment and joint, matching position, velocity and
acceleration at both knots (the reference is C2: continuous acceleration, bounded jerk).

Limits (rad, rad/s, rad/s^2, per joint): positions inside [lower, upper] at every knot and everywhere in
between (never further out than the start position); |velocity| <= velocity limit and |acceleration| <=
acceleration limit everywhere. Position violations are always rejected, since slowing down does not move a
path. Velocity/acceleration violations are, by policy, rejected or removed by uniform time scaling: times
multiplied by s >= 1 and the given knot rates divided by s (velocities) and s^2 (accelerations), which
keeps the path and divides peak velocity by s and peak acceleration by s^2. Extremes are found on a grid of
`samples_per_segment` points per segment plus the knots; the scaling keeps a margin against the grid's
under-estimate of a peak (relative error below (pi / samples)^2 / 2, i.e. 3e-4 for 128 samples).
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from space_robot_dynamics.command_checks import checked_vector
from space_robot_dynamics.errors import CommandError

LIMIT_POLICIES = ("time_scale", "reject")
_SCALE_MARGIN = 1e-3          # relative margin on the time-scale factor (covers the grid's peak under-estimate)
_SCALE_ITERATIONS = 8         # the start segment is not scaled with the rest, so the factor is refined


class TrajectoryPoint(NamedTuple):
    """One knot: positions (rad), velocities (rad/s) or None, accelerations (rad/s^2) or None, time (s)."""

    positions: Sequence[float]
    velocities: Sequence[float] | None
    accelerations: Sequence[float] | None
    time_from_start: float


@dataclass(frozen=True)
class JointLimits:
    """Per-joint limits in the order of the follower's joint list (rad, rad/s, rad/s^2)."""

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


@dataclass(frozen=True)
class TrajectoryReport:
    """What became of an accepted trajectory.

    time_scale: factor applied to all times (1.0: followed as commanded). duration (s): from the start to
    the last point, after scaling. start_time (s): when the motion starts. message: what was done and why.
    late (s): how long after its header.stamp the goal arrived (0 when on time or unstamped); skipped: the
    points already past then.
    """

    time_scale: float
    duration: float
    start_time: float
    message: str
    late: float = 0.0
    skipped: int = 0


@dataclass
class Reference:
    """Desired joint positions (rad), velocities (rad/s), accelerations (rad/s^2) at one time.

    active: a trajectory is being followed (False: holding a position, before the start or after the end).
    """

    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    active: bool


def quintic_coefficients(p0, v0, a0, p1, v1, a1, duration):
    """Coefficients c0..c5 (stacked on axis 0) of p(s) = sum c_k s^k on [0, duration] with
    p, p', p'' equal to (p0, v0, a0) at s = 0 and (p1, v1, a1) at s = duration (arrays broadcast).
    """
    T = np.asarray(duration, dtype=float)
    d = p1 - p0
    c3 = (20.0 * d - (8.0 * v1 + 12.0 * v0) * T - (3.0 * a0 - a1) * T**2) / (2.0 * T**3)
    c4 = (-30.0 * d + (14.0 * v1 + 16.0 * v0) * T + (3.0 * a0 - 2.0 * a1) * T**2) / (2.0 * T**4)
    c5 = (12.0 * d - 6.0 * (v1 + v0) * T + (a1 - a0) * T**2) / (2.0 * T**5)
    return np.stack(np.broadcast_arrays(p0, v0, 0.5 * a0, c3, c4, c5))


def evaluate_quintic(c: np.ndarray, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity, acceleration of quintic(s) with coefficients c (6, ...) at local time s."""
    p = ((((c[5] * s + c[4]) * s + c[3]) * s + c[2]) * s + c[1]) * s + c[0]
    v = (((5.0 * c[5] * s + 4.0 * c[4]) * s + 3.0 * c[3]) * s + 2.0 * c[2]) * s + c[1]
    a = ((20.0 * c[5] * s + 12.0 * c[4]) * s + 6.0 * c[3]) * s + 2.0 * c[2]
    return p, v, a


def quintic_powers(s: float, out: np.ndarray | None = None) -> np.ndarray:
    """(1, s, s^2, s^3, s^4, s^5) at local time s (s), in `out` if given (6 floats): [p | p' | p''] =
    quintic_powers(s) @ a stacked segment (see _Plan)."""
    s2 = s * s
    powers = (1.0, s, s2, s2 * s, s2 * s2, s2 * s2 * s)
    if out is None:
        return np.array(powers)
    out[...] = powers
    return out


def held_segment(positions: np.ndarray) -> np.ndarray:
    """A stacked segment (6, 3 n) that holds `positions` at rest: [positions | 0 | 0] at every local time."""
    n = len(positions)
    segment = np.zeros((6, 3 * n))
    segment[0, :n] = positions
    return segment


@dataclass
class _Plan:
    """Knot times (absolute, s) and per-segment quintic coefficients, shape (segments, 6, joints).

    segments: per segment the coefficients of [p | p' | p''] (6, 3 joints) in powers of the local time, so
    that one product with quintic_powers(s) samples all three; before, after: held segments (start
    positions until the start, final positions after the end); final: the last knot's positions; knots:
    `times` as a list (bisect at the control rate). Each segment is one array object for the plan's life,
    so a caller may cache what it derives from it (see JointTrajectoryFollower.segment()).
    """

    times: np.ndarray
    coeffs: np.ndarray
    final: np.ndarray
    segments: list
    before: np.ndarray
    after: np.ndarray
    knots: list

    @classmethod
    def from_coefficients(cls, times: np.ndarray, coeffs: np.ndarray, final: np.ndarray) -> _Plan:
        n = coeffs.shape[2]
        stacked = np.zeros((coeffs.shape[0], 6, 3 * n))
        stacked[:, :, :n] = coeffs
        for k in range(5):                         # p' = sum_k (k + 1) c_(k+1) s^k
            stacked[:, k, n:2 * n] = (k + 1) * coeffs[:, k + 1]
        for k in range(4):                         # p'' = sum_k (k + 1) (k + 2) c_(k+2) s^k
            stacked[:, k, 2 * n:] = (k + 1) * (k + 2) * coeffs[:, k + 2]
        return cls(times, coeffs, final, list(stacked), held_segment(coeffs[0, 0]), held_segment(final),
                   times.tolist())


class JointTrajectoryFollower:
    """Turns JointTrajectory goals into a smooth, limit-respecting reference (q_d, qdot_d, qddot_d)."""

    def __init__(self, joint_names: Sequence[str], limits: JointLimits, limit_policy: str = "time_scale",
                 start_tolerance: float = 0.05, allow_partial_joints: bool = False,
                 samples_per_segment: int = 128):
        if limit_policy not in LIMIT_POLICIES:
            raise ValueError(f"limit_policy must be one of {LIMIT_POLICIES}, got {limit_policy!r}")
        self.joint_names = tuple(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self.limits = limits
        self.limit_policy = limit_policy
        self.start_tolerance = float(start_tolerance)
        self.allow_partial_joints = bool(allow_partial_joints)
        self._grid = np.linspace(0.0, 1.0, int(samples_per_segment) + 1)
        self._plan: _Plan | None = None
        self._hold: np.ndarray | None = None
        self._held: np.ndarray | None = None       # held_segment(self._hold), see segment()

    # ---- reference --------------------------------------------------------------------------
    def hold(self, positions) -> None:
        """Drop any trajectory and hold `positions` (rad, configured order) at rest."""
        self._set_hold(checked_vector(positions, len(self.joint_names), "positions"))
        self._plan = None

    def _set_hold(self, positions: np.ndarray) -> None:
        self._hold = positions
        self._held = held_segment(positions)

    def sample(self, t: float) -> Reference:
        """The reference at time t (s). Before a trajectory's start and after its end: hold at rest."""
        stacked, active = self.sample_stacked(t)
        n = len(self.joint_names)
        return Reference(stacked[:n], stacked[n:2 * n], stacked[2 * n:], active)

    def sample_stacked(self, t: float) -> tuple[np.ndarray, bool]:
        """The reference at time t (s) as one new vector [q_d | qdot_d | qddot_d] (3 n) and the active flag
        (sample() without the per-field arrays)."""
        segment, s, active = self.segment(t)
        return quintic_powers(s).dot(segment), active

    def segment(self, t: float) -> tuple[np.ndarray, float, bool]:
        """The piece of the reference in force at time t (s): (segment, s, active) with
        [q_d | qdot_d | qddot_d] = quintic_powers(s) @ segment. segment (6, 3 n) is the same array object
        at every t of one polynomial piece (a hold is one piece) and is never modified: a caller may cache
        what it derives from it by identity. s: local time in the piece (s); active: a trajectory segment."""
        plan = self._plan
        if plan is None:
            if self._held is None:
                raise CommandError("trajectory", "no reference yet: call hold() or set_trajectory() first")
            return self._held, 0.0, False
        knots = plan.knots
        if t < knots[0]:
            return plan.before, 0.0, False
        if t >= knots[-1]:
            return plan.after, 0.0, False
        k = bisect.bisect_right(knots, t) - 1
        return plan.segments[k], t - knots[k], True

    def is_active(self, t: float) -> bool:
        return self._plan is not None and self._plan.times[0] < t < self._plan.times[-1]

    # ---- goals ------------------------------------------------------------------------------
    def set_trajectory(self, joint_names: Sequence[str], points: Sequence, now: float, positions, velocities,
                       start_time: float | None = None) -> TrajectoryReport:
        """Validate a JointTrajectory goal and start following it.

        joint_names, points: as trajectory_msgs/JointTrajectory (points as TrajectoryPoint or 4-tuples).
        now (s): current time; positions (rad), velocities (rad/s): measured, in the configured order.
        start_time (s): header.stamp; None means now; a past stamp keeps its time base (module docstring).
        Raises CommandError naming the field (the current reference is then kept unchanged).
        """
        n = len(self.joint_names)
        q0 = checked_vector(positions, n, "state.positions")
        v0 = checked_vector(velocities, n, "state.velocities")
        now = _finite_number(now, "now")
        stamp = now if start_time is None else _finite_number(start_time, "start_time")
        start = max(now, stamp)
        columns = self._columns(joint_names)
        times, knots_q, knots_v, knots_a = self._read_points(points, len(columns), columns, q0)
        self._check_positions(knots_q, q0)
        offset = 0                    # index of the first point that ends a segment (1 when points[0] merges)
        late = max(0.0, now - stamp)  # s after its stamp that the goal arrived
        if late > 0.0:                # the points keep their stamped times, counted from now
            times = times - late
            offset = int(np.count_nonzero(times <= 0.0))
            if offset == len(times):
                raise CommandError("header.stamp", f"the trajectory ended {-times[-1]:.6g} s before it arrived "
                                                   f"(stamp {stamp:.6g} s + last time_from_start < now {now:.6g} s)")
            times, knots_q, knots_v, knots_a = times[offset:], knots_q[offset:], knots_v[offset:], knots_a[offset:]
        a0 = self.sample(now).accelerations if (self._plan is not None or self._hold is not None) else np.zeros(n)
        if start > now:               # held at rest at the current positions until the start
            v0, a0 = np.zeros(n), np.zeros(n)
        if times[0] == 0.0:
            gap = np.abs(knots_q[0] - q0)
            j = int(np.argmax(gap))
            if gap[j] > self.start_tolerance:
                raise CommandError("points[0].positions",
                                   f"a first point at time_from_start 0 must match the current state within "
                                   f"{self.start_tolerance} rad; {self.joint_names[j]} is {gap[j]:.4g} rad away")
            times, knots_q, knots_v, knots_a = times[1:], knots_q[1:], knots_v[1:], knots_a[1:]
            offset = 1
            if len(times) == 0:
                self.hold(q0)
                return TrajectoryReport(1.0, 0.0, start, "a single point at the current state: holding it")
        scale, message = 1.0, "followed as commanded: within position, velocity and acceleration limits"
        for _ in range(_SCALE_ITERATIONS):
            plan = self._build(start, times * scale, q0, v0, a0, knots_q, knots_v / scale, knots_a / scale**2)
            ratio, why = self._rate_violation(plan, q0, offset)
            if ratio <= 1.0:
                break
            if self.limit_policy == "reject":
                raise CommandError("points", f"{why}; limit_policy is 'reject'")
            scale *= ratio * (1.0 + _SCALE_MARGIN)
            message = f"time-scaled by {scale:.4g} (limit_policy 'time_scale'): {why}"
        else:
            raise CommandError("points", f"cannot meet the limits by time scaling (the start state is fixed): {why}")
        self._plan = plan
        self._set_hold(plan.final.copy())
        return TrajectoryReport(scale, float(plan.times[-1] - start), start, message, late, offset if late else 0)

    # ---- helpers ----------------------------------------------------------------------------
    def _columns(self, joint_names) -> list[int]:
        if isinstance(joint_names, str) or not isinstance(joint_names, Sequence) or len(joint_names) == 0:
            raise CommandError("joint_names", f"must be a non-empty list of joint names, got {joint_names!r}")
        seen: set[str] = set()
        columns = [joint_column(name, self._index, seen, f"joint_names[{i}]") for i, name in enumerate(joint_names)]
        missing = [n for n in self.joint_names if n not in seen]
        if missing and not self.allow_partial_joints:
            raise CommandError("joint_names", f"missing joints {missing} (partial goals are not allowed)")
        return columns

    def _read_points(self, points, width: int, columns: list[int], q0: np.ndarray):
        if isinstance(points, (str, bytes)) or not isinstance(points, Sequence) or len(points) == 0:
            raise CommandError("points", "must be a non-empty list of points")
        m, n = len(points), len(self.joint_names)
        times = np.empty(m)
        knots_q, knots_v, knots_a = np.tile(q0, (m, 1)), np.zeros((m, n)), np.zeros((m, n))
        for k, point in enumerate(points):
            field = f"points[{k}]"
            if not isinstance(point, Sequence) or len(point) != 4:
                raise CommandError(field, "must be (positions, velocities, accelerations, time_from_start)")
            pos, vel, acc, tfs = point
            knots_q[k, columns] = checked_vector(pos, width, f"{field}.positions")
            if not _absent(vel):
                knots_v[k, columns] = checked_vector(vel, width, f"{field}.velocities")
            if not _absent(acc):
                knots_a[k, columns] = checked_vector(acc, width, f"{field}.accelerations")
            times[k] = _finite_number(tfs, f"{field}.time_from_start")
            if times[k] < 0.0:
                raise CommandError(f"{field}.time_from_start", f"must be >= 0 s, got {times[k]}")
            if k > 0 and times[k] <= times[k - 1]:
                raise CommandError(f"{field}.time_from_start", f"must be > points[{k - 1}].time_from_start "
                                                               f"({times[k - 1]} s), got {times[k]} s")
        return times, knots_q, knots_v, knots_a

    def _check_positions(self, knots_q: np.ndarray, q0: np.ndarray) -> None:
        lim = self.limits
        for k, row in enumerate(knots_q):
            bad = np.flatnonzero((row < lim.lower) | (row > lim.upper))
            if bad.size:
                j = int(bad[0])
                raise CommandError(f"points[{k}].positions", f"{self.joint_names[j]} = {row[j]:.6g} rad is outside "
                                                             f"its limits [{lim.lower[j]:.6g}, {lim.upper[j]:.6g}]")

    def _build(self, start, times, q0, v0, a0, knots_q, knots_v, knots_a) -> _Plan:
        t = np.concatenate(([start], start + times))
        p0 = np.vstack((q0, knots_q[:-1]))
        w0 = np.vstack((v0, knots_v[:-1]))
        b0 = np.vstack((a0, knots_a[:-1]))
        durations = np.diff(t)[:, None]
        coeffs = quintic_coefficients(p0, w0, b0, knots_q, knots_v, knots_a, durations)   # (6, seg, n)
        return _Plan.from_coefficients(t, np.ascontiguousarray(np.moveaxis(coeffs, 0, 1)), knots_q[-1].copy())

    def _rate_violation(self, plan: _Plan, q0: np.ndarray, offset: int) -> tuple[float, str]:
        """(ratio, explanation): ratio <= 1 when the plan is within the rate limits; else the time-scale
        factor that would remove the violation. Also rejects interpolation overshoot past position limits."""
        lim = self.limits
        durations = np.diff(plan.times)
        s = self._grid[None, :, None] * durations[:, None, None]               # (seg, grid, 1)
        c = plan.coeffs[:, :, None, :]                                          # (seg, 6, 1, n)
        p, v, a = evaluate_quintic(np.moveaxis(c, 1, 0), s)                    # (seg, grid, n)
        low, high = np.minimum(lim.lower, q0), np.maximum(lim.upper, q0)
        out = (p < low - 1e-12) | (p > high + 1e-12)
        if out.any():
            k, _, j = (int(x[0]) for x in np.nonzero(out))
            k += offset
            raise CommandError(f"points[{k}]", f"the interpolation towards this point takes {self.joint_names[j]} "
                                               f"outside its limits [{lim.lower[j]:.6g}, {lim.upper[j]:.6g}] rad")
        v_ratio = np.abs(v).max(axis=1) / lim.velocity                          # (seg, n)
        a_ratio = np.sqrt(np.abs(a).max(axis=1) / lim.acceleration)
        kv, jv = np.unravel_index(int(np.argmax(v_ratio)), v_ratio.shape)
        ka, ja = np.unravel_index(int(np.argmax(a_ratio)), a_ratio.shape)
        if v_ratio[kv, jv] >= a_ratio[ka, ja]:
            ratio = float(v_ratio[kv, jv])
            why = (f"{self.joint_names[jv]} velocity {v_ratio[kv, jv] * lim.velocity[jv]:.4g} rad/s > limit "
                   f"{lim.velocity[jv]:.4g} rad/s on the way to points[{kv + offset}]")
        else:
            ratio = float(a_ratio[ka, ja])
            why = (f"{self.joint_names[ja]} acceleration {a_ratio[ka, ja]**2 * lim.acceleration[ja]:.4g} rad/s^2 > "
                   f"limit {lim.acceleration[ja]:.4g} rad/s^2 on the way to points[{ka + offset}]")
        return ratio, why


def _absent(values) -> bool:
    """None or an empty list: the optional field is not given (ROS leaves unused arrays empty)."""
    if values is None:
        return True
    try:
        return len(values) == 0
    except TypeError:        # a scalar: present, and checked_vector will reject its shape
        return False


def _finite_number(value, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise CommandError(field, f"must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise CommandError(field, f"must be finite, got {value}")
    return value


def joint_column(name, index: dict[str, int], seen: set[str], field: str) -> int:
    """index[name] for one entry of a list of joint names, adding it to `seen`; CommandError naming `field` for
    a name that is not a controlled joint (index's keys) or appears twice."""
    if not isinstance(name, str) or name not in index:
        raise CommandError(field, f"unknown joint {name!r} (controlled joints: {list(index)})")
    if name in seen:
        raise CommandError(field, f"duplicate joint {name!r}")
    seen.add(name)
    return index[name]
