"""Time series of a run, collected from the recorded messages (live, or read back from a bag).

The same code fills a RunTrace from the messages the recorder writes and from a bag on disk, so the
summary and the plots of `space-robot-sim` and `space-robot-plot BAG` are computed from identical data.
Topic roles (which topic carries the bus odometry, the goals...) are stored in the bag's custom_data.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from space_robot_nodes import conversions as cv

ROLES_KEY = "space_robot.topic_roles"
INFO_KEY = "space_robot.run_info"
STATUS_KEY = "space_robot.run_status"     # complete or not, why, the simulated time reached


@dataclass(frozen=True)
class TopicRoles:
    """Which topics the trace reads; defaults are the names in config/nodes.yaml."""

    joint_states: str = "joint_states"
    bus_odometry: str = "base/odom"
    momentum_linear: str = "momentum/linear"
    momentum_angular: str = "momentum/angular"
    momentum_balance: str = "momentum/balance"      # docs/orbit.md sec. 5
    trajectory: str = "arm_controller/joint_trajectory"
    attitude_setpoint: str = "attitude_controller/setpoint"
    diagnostics: str = "diagnostics"
    flexible_modes: str = "flexible_modes"      # flexible models (docs/flexibility.md sec. 7)
    target_odometry: str = "target/odom"        # capture (docs/contact.md sec. 11): the target's rates
    grasp_state: str = "grasp/state"
    grasp_wrench: str = "grasp/wrench"
    base_thrusters: str = "base_thrusters/command"     # the thrusters' commanded wrench (force_motion mode)
    force_estimates: str = "force_controller/estimates"  # the adaptive force_motion mode's estimates and V
    # the estimators' (docs/sensing.md), against the truth above
    bus_odometry_estimate: str = "estimate/base/odom"
    target_odometry_estimate: str = "estimate/target/odom"

    def to_json(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TopicRoles:
        return cls(**json.loads(text))


@dataclass
class Series:
    t: list = field(default_factory=list)
    values: list = field(default_factory=list)

    def add(self, t: float, value) -> None:
        self.t.append(t)
        self.values.append(value)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.t), np.array(self.values, dtype=float)

    def __len__(self) -> int:
        return len(self.t)


class RunTrace:
    """Joint positions/velocities, bus attitude, momentum, goals and diagnostic levels over time; for a comparison
    (comparison.py) also every joint position of joint_states and the bus pose; flexible_modes when published."""

    def __init__(self, roles: TopicRoles, arm_joints: tuple[str, ...], wheel_joints: tuple[str, ...]):
        self.roles = roles
        self.arm_joints = tuple(arm_joints)
        self.wheel_joints = tuple(wheel_joints)
        self.arm_positions = Series()
        self.wheel_speeds = Series()
        self.bus_orientation = Series()        # (x, y, z, w), base_link -> world
        self.momentum_linear = Series()        # kg m/s, world
        self.momentum_angular = Series()       # kg m^2/s about the CoM, world
        # momentum/balance rows: residual (linear 3, angular 3, inertial), largest body momentum (linear, angular)
        self.momentum_balance = Series()
        self.goal_positions: np.ndarray | None = None   # last point of the last trajectory goal (arm order)
        self.setpoint: np.ndarray | None = None
        self.diagnostic_levels: dict[str, Series] = {}
        self.diagnostic_counts: dict[str, dict[int, int]] = {}
        self.joint_names: tuple = ()                 # of joint_positions: every joint in joint_states
        self.joint_positions = Series()
        self.bus_pose = Series()                     # [x, y, z, qx, qy, qz, qw], base_link in the world frame
        self.flexible_names: tuple = ()
        self.flexible_positions = Series()           # flexible_modes positions (m, rad) in flexible_names order
        # capture (docs/contact.md sec. 11)
        self.arm_rates = Series()                    # rad/s, arm joints
        self.arm_efforts = Series()                  # N m applied, arm joints
        self.bus_rate = Series()                     # rad/s, bus angular velocity (base-link frame)
        self.target_rate = Series()                  # rad/s, target angular velocity (its base-link frame)
        self.target_orientation = Series()           # (x, y, z, w), target base_link -> world
        self.target_position = Series()              # m, target base_link origin, world frame
        self.bus_orientation_estimate = Series()     # (x, y, z, w): the estimators' (estimate/base/odom)
        self.bus_attitude_sigma = Series()           # rad: its 1-sigma about the world's x, y, z (the covariance's)
        self.target_position_estimate = Series()     # m: the estimators' (estimate/target/odom)
        self.target_position_sigma = Series()        # m: its 1-sigma along the world's x, y, z
        self.grasp_state = Series()                  # grasp/state entries (grasp_state_message.GRASP_STATE_FIELDS)
        self.grasp_state_fields: tuple = ()
        self.grasp_wrench = Series()                 # [force N, torque N m], the hand's frame
        self.thruster_wrench = Series()              # [force N, couple N m], the thrusters' base link frame
        self.estimate_fields: tuple = ()             # force_controller/estimates' entry names
        self.estimates = Series()                    # its entries (parameters, lyapunov, max_lyapunov_increase)
        self._rows_for: tuple | None = None
        self._rows: tuple = (None, None)

    def takes(self, topic: str) -> bool:
        """Whether messages on `topic` matter to the trace (the recorder feeds it only those)."""
        return topic in self.roles.__dict__.values()

    def __call__(self, topic: str, msg: Any, time_ns: int) -> None:
        t = time_ns * 1e-9
        roles = self.roles
        if topic == roles.joint_states:
            names = tuple(msg.name)
            arm_rows, wheel_rows = self._joint_rows(names)
            position = np.asarray(msg.position, float)
            if arm_rows is not None:
                self.arm_positions.add(t, position[arm_rows])
                self.arm_rates.add(t, np.asarray(msg.velocity, float)[arm_rows])
                effort = np.asarray(msg.effort, float)
                if len(effort) == len(position):
                    self.arm_efforts.add(t, effort[arm_rows])
            if wheel_rows is not None:
                self.wheel_speeds.add(t, np.asarray(msg.velocity, float)[wheel_rows])
            if names != self.joint_names:
                self.joint_names, self.joint_positions = names, Series()     # a new name list starts anew
            self.joint_positions.add(t, position)
        elif topic == roles.bus_odometry:
            pose = msg.pose.pose
            self.bus_orientation.add(t, cv.xyzw_of(pose.orientation))
            self.bus_pose.add(t, np.concatenate((cv.xyz_of(pose.position), cv.xyzw_of(pose.orientation))))
            self.bus_rate.add(t, cv.xyz_of(msg.twist.twist.angular))
        elif topic == roles.target_odometry:
            self.target_rate.add(t, cv.xyz_of(msg.twist.twist.angular))
            self.target_orientation.add(t, cv.xyzw_of(msg.pose.pose.orientation))
            self.target_position.add(t, cv.xyz_of(msg.pose.pose.position))
        elif topic == roles.bus_odometry_estimate:
            self.bus_orientation_estimate.add(t, cv.xyzw_of(msg.pose.pose.orientation))
            self.bus_attitude_sigma.add(t, np.sqrt(np.asarray(msg.pose.covariance, float)[[21, 28, 35]]))
        elif topic == roles.target_odometry_estimate:
            self.target_position_estimate.add(t, cv.xyz_of(msg.pose.pose.position))
            self.target_position_sigma.add(t, np.sqrt(np.asarray(msg.pose.covariance, float)[[0, 7, 14]]))
        elif topic == roles.grasp_state:
            labels = tuple(msg.layout.dim[0].label.split(",")) if len(msg.layout.dim) else ()
            if labels != self.grasp_state_fields:
                self.grasp_state_fields, self.grasp_state = labels, Series()
            self.grasp_state.add(t, np.asarray(msg.data, float))
        elif topic == roles.grasp_wrench:
            wrench = msg.wrench
            self.grasp_wrench.add(t, np.concatenate((cv.xyz_of(wrench.force), cv.xyz_of(wrench.torque))))
        elif topic == roles.base_thrusters:
            wrench = msg.wrench
            self.thruster_wrench.add(t, np.concatenate((cv.xyz_of(wrench.force), cv.xyz_of(wrench.torque))))
        elif topic == roles.force_estimates:
            labels = tuple(msg.layout.dim[0].label.split(",")) if len(msg.layout.dim) else ()
            if labels != self.estimate_fields:
                self.estimate_fields, self.estimates = labels, Series()
            self.estimates.add(t, np.asarray(msg.data, float))
        elif topic == roles.flexible_modes:
            names = tuple(msg.name)
            if names != self.flexible_names:
                self.flexible_names, self.flexible_positions = names, Series()
            self.flexible_positions.add(t, np.asarray(msg.position, float))
        elif topic == roles.momentum_linear:
            self.momentum_linear.add(t, cv.xyz_of(msg.vector))
        elif topic == roles.momentum_angular:
            self.momentum_angular.add(t, cv.xyz_of(msg.vector))
        elif topic == roles.momentum_balance:
            self.momentum_balance.add(t, np.asarray(msg.data, float))
        elif topic == roles.trajectory:
            names = list(msg.joint_names)
            if msg.points and all(n in names for n in self.arm_joints):
                last = np.asarray(msg.points[-1].positions, float)
                self.goal_positions = last[[names.index(n) for n in self.arm_joints]]
        elif topic == roles.attitude_setpoint:
            self.setpoint = cv.xyzw_of(msg.quaternion)
        elif topic == roles.diagnostics:
            levels, counts = self.diagnostic_levels, self.diagnostic_counts
            for status in msg.status:
                level, name = cv.level_of(status), status.name
                series = levels.get(name)
                if series is None:
                    series = levels[name] = Series()
                    counts[name] = {}
                series.add(t, level)
                counts[name][level] = counts[name].get(level, 0) + 1

    def _joint_rows(self, names: tuple) -> tuple:
        """Rows of the arm and wheel joints in a JointState with these names (None: not all present);
        a publisher keeps its name list, so this is worked out once."""
        if names != self._rows_for:
            index = {n: i for i, n in enumerate(names)}
            arm = [index[n] for n in self.arm_joints] if all(n in index for n in self.arm_joints) else None
            wheels = [index[n] for n in self.wheel_joints] \
                if self.wheel_joints and all(n in index for n in self.wheel_joints) else None
            self._rows_for, self._rows = names, (arm, wheels)
        return self._rows

    # ---- derived quantities --------------------------------------------------------------------
    def estimation_error_series(self) -> dict:
        """name -> (t, error (n, 3), sigma (n, 3)) at the instants both the truth and the estimate were recorded:
        `attitude` the rotation vector from the estimated to the true bus attitude, log(R_true R_est^T) (rad,
        world axes, the covariance's), `target_position` true - estimated target origin (m, world frame)."""
        out = {}
        for name, truth, estimate, sigma in (
                ("attitude", self.bus_orientation, self.bus_orientation_estimate, self.bus_attitude_sigma),
                ("target_position", self.target_position, self.target_position_estimate, self.target_position_sigma)):
            t_est, est = estimate.arrays()
            t_true, true = truth.arrays()
            if not len(t_est) or not len(t_true):
                continue
            common, i_true, i_est = np.intersect1d(np.round(t_true, 9), np.round(t_est, 9), return_indices=True)
            if not len(common):
                continue
            if name == "attitude":
                from scipy.spatial.transform import Rotation

                error = (Rotation.from_quat(true[i_true]) * Rotation.from_quat(est[i_est]).inv()).as_rotvec()
            else:
                error = true[i_true] - est[i_est]
            out[name] = (common, error, sigma.arrays()[1][i_est])
        return out

    def estimate_errors(self) -> dict:
        """RMS over the run of the estimators' errors against the truth, at the instants both were recorded:
        attitude_estimate_error_rms_rad (the angle of the rotation from the estimated bus attitude to the true
        one) and target_position_estimate_error_rms_m (|estimated - true| target base-link origin, world frame);
        only those whose estimate was recorded."""
        keys = {"attitude": "attitude_estimate_error_rms_rad",
                "target_position": "target_position_estimate_error_rms_m"}
        return {keys[name]: float(np.sqrt(np.mean(np.einsum("ij,ij->i", error, error))))
                for name, (_t, error, _sigma) in self.estimation_error_series().items()}

    def attitude_error(self) -> tuple[np.ndarray, np.ndarray]:
        """Angle (rad) of the rotation between the setpoint (or the initial attitude) and the bus attitude."""
        t, quats = self.bus_orientation.arrays()
        if len(t) == 0:
            return t, np.zeros(0)
        reference = self.setpoint if self.setpoint is not None else quats[0]
        return t, rotation_angle(reference, quats)

    def force_motion_errors(self, joint_setpoints: dict | None, contact_force) -> dict | None:
        """Hybrid force/motion errors (docs/controllers.md sec. 2.5) on the arm's joint_states samples from the
        first grasp wrench on: `t` (s); `joint` max |q_d - q| (rad or m; setpoints by name, a joint not named: its
        position at that first sample); `attitude` the bus attitude error (rad, against the setpoint or the initial
        attitude); `force` max |f - f_d| (N) with f minus grasp/wrench's force (the hand's on the target, hand
        frame); `setpoints` the joint setpoints used. None without a grasp wrench."""
        t, positions = self.arm_positions.arrays()
        t_force, wrench = self.grasp_wrench.arrays()
        if not len(t_force) or not len(t) or t[-1] < t_force[0]:
            return None
        held = t >= t_force[0]
        t, positions = t[held], positions[held]
        setpoints = joint_setpoints or {}
        desired = np.array([setpoints.get(n, positions[0, i]) for i, n in enumerate(self.arm_joints)])
        force = -wrench[_latest(t_force, t), :3]
        t_att, attitude = self.attitude_error()
        return {"t": t, "joint": np.abs(positions - desired).max(axis=1),
                "attitude": attitude[_latest(t_att, t)] if len(t_att) else np.zeros(len(t)),
                "force": np.abs(force - np.asarray(contact_force, float)).max(axis=1),
                "setpoints": dict(zip(self.arm_joints, desired.tolist()))}

    def tip_deflections(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per flexible link, (t, |(w_y(L), w_z(L))|) in m: the sum of its bending modes' coordinates in each
        direction (the shapes are 1 at the tip, docs/flexibility.md eq. 2)."""
        t, positions = self.flexible_positions.arrays()
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        if not len(t):
            return out
        links: dict[str, dict[str, list[int]]] = {}
        for column, name in enumerate(self.flexible_names):
            link, _, coordinate = name.rpartition("/")
            direction = coordinate.rsplit("_", 1)[0]
            if direction in ("bending_y", "bending_z"):
                links.setdefault(link, {}).setdefault(direction, []).append(column)
        for link, directions in links.items():
            sums = [positions[:, columns].sum(axis=1) for columns in directions.values()]
            out[link] = (t, np.sqrt(sum(x * x for x in sums)))
        return out

    def grasp_entry(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(t, values) of one grasp/state entry (empty without grasp/state)."""
        t, values = self.grasp_state.arrays()
        if not len(t) or name not in self.grasp_state_fields:
            return np.zeros(0), np.zeros(0)
        return t, values[:, self.grasp_state_fields.index(name)]

    def relative_angular_rate(self) -> tuple[np.ndarray, np.ndarray]:
        """(t, |w_target - w_bus|) in rad/s (world axes), at the samples where both odometries are recorded."""
        t_b, w_b = self.bus_rate.arrays()
        t_t, w_t = self.target_rate.arrays()
        _tq, q_b = self.bus_orientation.arrays()
        _tt, q_t = self.target_orientation.arrays()
        common, i_b, i_t = np.intersect1d(np.round(t_b, 9), np.round(t_t, 9), return_indices=True)
        if not len(common):
            return common, np.zeros(0)
        world_b = np.array([_rotate(q, w) for q, w in zip(q_b[i_b], w_b[i_b])])
        world_t = np.array([_rotate(q, w) for q, w in zip(q_t[i_t], w_t[i_t])])
        return common, np.linalg.norm(world_t - world_b, axis=1)

    def momentum_balance_residual(self) -> float | None:
        """The largest |momentum change - integrated external impulse| over the run, linear and angular each
        relative to the largest momentum of any body over the run, the larger of the two (docs/orbit.md sec. 5);
        None without momentum/balance samples."""
        _t, rows = self.momentum_balance.arrays()
        if not len(rows):
            return None
        linear = np.max(np.linalg.norm(rows[:, 0:3], axis=1)) / max(np.max(rows[:, 6]), np.finfo(float).tiny)
        angular = np.max(np.linalg.norm(rows[:, 3:6], axis=1)) / max(np.max(rows[:, 7]), np.finfo(float).tiny)
        return float(max(linear, angular))

    def momentum_drift(self, linear_axes=None, angular_axes=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """|p(t) - p(0)| (kg m/s) and |L(t) - L(0)| (kg m^2/s), of the components along the rows of linear_axes
        and angular_axes when given (orthonormal, world frame: momentum_conservation.py's conserved ones)."""
        t, p = self.momentum_linear.arrays()
        _, angular = self.momentum_angular.arrays()
        if len(t) == 0:
            return t, np.zeros(0), np.zeros(0)
        dp, dl = p - p[0], angular - angular[0]
        if linear_axes is not None:
            dp = dp @ np.asarray(linear_axes, float).T
        if angular_axes is not None:
            dl = dl @ np.asarray(angular_axes, float).T
        return t, np.linalg.norm(dp, axis=1), np.linalg.norm(dl, axis=1)


def _latest(times: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Index of the last sample of `times` at or before each of `at` (the first sample before they start)."""
    return np.maximum(np.searchsorted(times, at, side="right") - 1, 0)


def _rotate(xyzw: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """The unit quaternion (x, y, z, w) applied to a 3-vector."""
    u, w = np.asarray(xyzw[:3], float), float(xyzw[3])
    return vector + 2.0 * np.cross(u, np.cross(u, vector) + w * vector)


def rotation_angle(reference_xyzw: np.ndarray, quats_xyzw: np.ndarray) -> np.ndarray:
    """Angle (rad, in [0, pi]) of reference^-1 * q for each row q: 2 atan2(|vector part|, |scalar part|)."""
    r = np.asarray(reference_xyzw, float)
    q = np.atleast_2d(np.asarray(quats_xyzw, float))
    # scalar and vector parts of conj(r) * q
    w = r[3] * q[:, 3] + q[:, :3] @ r[:3]
    vec = r[3] * q[:, :3] - q[:, 3:4] * r[:3] - np.cross(r[:3], q[:, :3])
    return 2.0 * np.arctan2(np.linalg.norm(vec, axis=1), np.abs(w))


def read_bag(path: str | Path) -> tuple[RunTrace, dict]:
    """A RunTrace (and the run info stored by the runtime) from a rosbag2 directory written by it."""
    from rosbags.rosbag2 import Reader

    from space_robot_nodes.message_types import RosbagsMessageTypes

    typestore = RosbagsMessageTypes().typestore
    custom = bag_custom_data(path)
    with Reader(path) as reader:
        roles = TopicRoles.from_json(custom[ROLES_KEY]) if ROLES_KEY in custom else TopicRoles()
        info = json.loads(custom[INFO_KEY]) if INFO_KEY in custom else {}
        arm = tuple(info.get("arm_joints", ()))
        wheels = tuple(info.get("wheel_joints", ()))
        wanted = set(roles.__dict__.values())
        connections = [c for c in reader.connections if c.topic in wanted]
        if not arm:
            arm, wheels = _joint_names_from_bag(reader, roles, typestore)
        trace = RunTrace(roles, arm, wheels)
        for connection, timestamp, raw in reader.messages(connections=connections):
            msg = typestore.deserialize_cdr(raw, connection.msgtype)
            trace(connection.topic, msg, timestamp)
    return trace, info


def bag_error_text(exc: BaseException) -> str:
    """Why a bag could not be read, in one line. A malformed metadata.yaml (PyYAML's error here, ruamel's inside
    rosbags' ReaderError: 3-6 lines each, naming '<unicode string>') is said as `metadata.yaml: not valid YAML:
    line L, column C: ...`; anything else as `Type: text`."""
    from space_robot_dynamics.config_reader import yaml_error_text
    from space_robot_dynamics.errors import one_line

    cause: BaseException | None = exc
    while cause is not None:
        if getattr(cause, "problem_mark", None) is not None:      # PyYAML's and ruamel's MarkedYAMLError
            return f"metadata.yaml: not valid YAML: {yaml_error_text(cause)}"
        cause = cause.__cause__ or cause.__context__
    return one_line(f"{type(exc).__name__}: {exc}")


def bag_custom_data(path: str | Path) -> dict:
    """The custom_data mapping of a rosbag2 directory's metadata.yaml (empty if absent)."""
    import yaml

    metadata = yaml.safe_load((Path(path) / "metadata.yaml").read_text())
    return (metadata.get("rosbag2_bagfile_information", {}) or {}).get("custom_data") or {}


def _joint_names_from_bag(reader, roles: TopicRoles, typestore) -> tuple[tuple, tuple]:
    """Without run info: arm = every joint not named like a reaction wheel (rw_*) in the first joint_states."""
    connections = [c for c in reader.connections if c.topic == roles.joint_states]
    for connection, _ts, raw in reader.messages(connections=connections):
        names = list(typestore.deserialize_cdr(raw, connection.msgtype).name)
        wheels = tuple(n for n in names if n.startswith("rw_"))
        return tuple(n for n in names if n not in wheels), wheels
    return (), ()
