"""Estimators node core: the model's estimators (space_robot_estimation) between the sensors' messages and the
estimated state a controller or a monitor reads in place of the truth.

Subscribes the sensors node's topics (config/nodes.yaml `estimators.topics`): imu/data (the gyro),
star_tracker/attitude, encoders/joint_states, tachometers/joint_states, target/pose_measurement; and, for NEES in
diagnostics only, the truth's odometry (truth_odometry). At the model file's `estimators.rate` it publishes, once
every estimator has its first measurement:
- estimate/joint_states (sensor_msgs/JointState): arm angles and rates (joint_rate_tracker.py, alpha-beta; a
  noise-free encoder: the backward difference), wheel angles (the tachometers' speeds integrated from zero: a
  wheel's angle does not enter the dynamics of a balanced wheel) and speeds (the tachometers');
- estimate/base/odom (nav_msgs/Odometry): the bus attitude (attitude_filter.py, propagated to now with the last
  bias-corrected rate), its rate, and its position and linear velocity from the conserved momentum
  (bus_translation.py); pose covariance about the world's axes (position: the target's weighted by its mass
  fraction), twist covariance about the link's (rate: the bias's covariance plus the gyro's white noise);
- estimate/<target>/odom: the target frame (target_filter.py) from the bus origin, placed in the world with the bus
  position; covariance likewise (position and attitude blocks; linear velocity from the filter's CoM velocity).
- diagnostics, per estimator: its state, updates, late measurements refused, NIS, and where the truth is read,
  NEES (attitude 3 dof, target 12 dof) with its running mean; WARN when the NEES of a report exceeds its chi-square
  0.9999 quantile (a 1-in-10^4 draw of a consistent filter) or an estimator waits for its first measurement.

Timing: the timer runs in the COMMAND phase after the sensors node's (node order), so the estimate of an instant
holds the measurements sampled at it, and the controller (CONTROL phase) reads it at the same instant, as it read
the truth. The estimate is of time `now`: the attitude and the joints are extrapolated from their last sample by
their rates, the target filter predicts to now.
"""
from __future__ import annotations

import math

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_estimation.attitude_filter import AttitudeFilter, rotation_of, xyzw_of
from space_robot_estimation.bus_translation import BusTranslation
from space_robot_estimation.consistency import nees
from space_robot_estimation.estimators_config import EstimatorsConfig
from space_robot_estimation.held_target import HeldTarget
from space_robot_estimation.joint_rate_tracker import AlphaBetaGains, JointRateTracker
from space_robot_estimation.target_filter import TargetFilter, pose_measurement_in_world, with_model_inertia
from space_robot_scenario.node_config import EstimatorsNodeConfig
from space_robot_sensing.sensor_suite import SensorSuiteConfig

from . import conversions as cv
from . import message_builders as mb
from .grasp_state_message import read_grasp_state
from .message_types import MessageTypes
from .node_core import COMMAND, NodeCore
from .robot_state import floating_subtrees

FIELD = "estimators"
NEES_QUANTILE = 0.9999          # a report's NEES above this quantile of its chi-square is WARN


class EstimatorsCore(NodeCore):
    name = "estimators"

    def __init__(self, types: MessageTypes, system: SystemModel, suite: SensorSuiteConfig, config: EstimatorsConfig,
                 nodes: EstimatorsNodeConfig, q0: np.ndarray, v0: np.ndarray):
        """`q0`, `v0`: the initial state, whose centre of mass and momentum the bus translation starts from."""
        super().__init__(types)
        self.config, self.nodes, self.system = config, nodes, system
        sensors = suite.sensors
        self._subtree_of = {s.base_link: s.name for s in floating_subtrees(system)}
        self._arm, self._wheels = tuple(system.arm_joints), tuple(system.wheel_joints)
        if config.attitude is None or not {"gyro", "star_tracker"} <= set(sensors):
            raise ConfigError(f"{FIELD}.attitude", "the estimators need the attitude filter and the gyro and star "
                              "tracker it reads", config.source)
        self._gyro = sensors["gyro"].mounting
        self._tracker_link = sensors["star_tracker"].mounting.frame
        self._gyro_white_variance = config.attitude.angle_random_walk ** 2 * sensors["gyro"].rate    # rad^2/s^2
        self.bus = self._subtree_of.get(self._gyro.frame)
        if self.bus is None or self._tracker_link != self._gyro.frame:
            raise ConfigError(f"{FIELD}.attitude", "the gyro and the star tracker must sit on the link of one floating "
                              f"base, got {self._gyro.frame!r} and {self._tracker_link!r}", config.source)
        self.attitude = AttitudeFilter(config.attitude)
        self.target = self._target_filter(sensors)
        self.target_subtree = self._subtree_of[self._pose.target_frame] if self.target is not None else None
        self.joints = self._joint_tracker(sensors)
        self.held = None                 # the target from the arm while the grasp holds (held_target.py)
        if self.target is not None and system.grasp is not None:
            self.held = HeldTarget(system, system.config.grasp.end_effector_frame, self.target_subtree)
        self._latch_pending: bool | None = None       # a grasp/state change, applied at the next estimate
        self.skipped_while_held = 0
        self._wheel_angles = np.zeros(len(self._wheels))
        self._wheel_speeds: np.ndarray | None = None if self._wheels else np.zeros(0)
        self._wheel_time: float | None = None
        self._joint_time: float | None = None
        self.translation = BusTranslation(system, self.bus, q0, v0)
        self._q, self._v = q0.copy(), v0.copy()        # the template: every entry is overwritten before use
        self._truth: dict[str, object] = {}
        self._problems: dict[str, str] = {}
        self._rows: dict[tuple, list] = {}               # (topic, its name list) -> the rows of the wanted joints
        self._state_at: tuple | None = None              # (time, state()) of the last estimate published
        self.published = 0
        self._nees = {"attitude": [0.0, 0], "target": [0.0, 0]}     # running sum, count
        self._index()
        self._joint_builder = mb.JointStateBuilder(types, self.joint_names)
        self._odometry_builders = {subtree: mb.OdometryBuilder(types, nodes.world_frame,
                                                               system.subtree(subtree).base_link)
                                   for subtree in (self.bus, self.target_subtree) if subtree is not None}
        self._mass_fraction = 0.0            # the target's share of the mass: its position error's in the bus's
        if self.target_subtree is not None:
            target_mass = system.model.inertias[system.subtree(self.target_subtree).root_joint_id].mass
            self._mass_fraction = target_mass / self.translation.mass
        self._covariance_key, self._covariance_cache = None, {}

        self.add_subscription(nodes.imu, cv.IMU, self._on_gyro)
        self.add_subscription(nodes.star_tracker, cv.IMU, self._on_star_tracker)
        if self.joints is not None:
            # its stamps are the node's clock under ROS 2 (node_core): the estimates follow each 1 kHz sample
            self.add_subscription(nodes.joint_encoders, cv.JOINT_STATE, self._on_encoders, time_source=True)
        if self._wheels:
            self.add_subscription(nodes.wheel_tachometers, cv.JOINT_STATE, self._on_tachometers)
        if self.target is not None:
            self.add_subscription(nodes.target_pose, cv.POSE_WITH_COVARIANCE_STAMPED, self._on_pose)
        if self.held is not None:
            self.add_subscription(nodes.grasp_state, cv.FLOAT64_MULTI_ARRAY, self._on_grasp_state, latest_only=True)
        for subtree, topic_name in nodes.truth_odometry.items():
            if subtree in (self.bus, self.target_subtree):
                self.add_subscription(topic_name, cv.ODOMETRY, lambda m, s=subtree: self._truth.__setitem__(s, m),
                                      latest_only=True)
        self.add_publication(nodes.joint_states, cv.JOINT_STATE)
        for subtree in (self.bus, self.target_subtree):
            if subtree is not None:
                if subtree not in nodes.odometry:
                    raise ConfigError("estimators.topics.odometry", f"no topic for subtree {subtree!r}")
                self.add_publication(nodes.odometry[subtree], cv.ODOMETRY)
        self.add_publication(nodes.diagnostics, cv.DIAGNOSTIC_ARRAY)
        self.add_timer("estimates", 1.0 / config.rate, self._publish_estimates, COMMAND,
                       ("model", "estimators.rate"))
        self.add_timer("diagnostics", 1.0 / nodes.diagnostics_rate, self._diagnostics, COMMAND,
                       ("nodes", "estimators.diagnostics_rate"))

    # ---- the estimators ----------------------------------------------------------------------------------------
    def _target_filter(self, sensors: dict) -> TargetFilter | None:
        if self.config.target is None:
            return None
        if "target_pose" not in sensors:
            raise ConfigError(f"{FIELD}.target", "needs the relative pose sensor (sensors.target_pose)",
                              self.config.source)
        self._pose = sensors["target_pose"]
        if self._pose.mounting.frame != self._gyro.frame:
            raise ConfigError(f"{FIELD}.target", "the pose sensor must sit on the bus link the attitude is estimated "
                              f"of ({self._gyro.frame!r}), got {self._pose.mounting.frame!r}", self.config.source)
        subtree = self.system.subtree(self._subtree_of[self._pose.target_frame])
        inertia = self.system.model.inertias[subtree.root_joint_id]
        if len(subtree.joint_names) > 1 and self.config.target.inertia is None:
            raise ConfigError(f"{FIELD}.target.inertia", "the target has joints: give its inertia and com (the model "
                              "value is the base body's alone)", self.config.source)
        return TargetFilter(with_model_inertia(self.config.target, inertia.inertia, inertia.lever))

    def _joint_tracker(self, sensors: dict) -> JointRateTracker | None:
        if self.config.joint_acceleration_noise is None or not self._arm:
            return None
        encoders = sensors.get("joint_encoders")
        if encoders is None:
            raise ConfigError(f"{FIELD}.joints", "needs the arm's encoders (sensors.joint_encoders)",
                              self.config.source)
        period, sigma = 1.0 / encoders.rate, math.sqrt(encoders.variance)
        # a noise-free encoder: the tracker's limit is the backward difference (alpha = beta = 1)
        gains = AlphaBetaGains(1.0, 1.0, period, 0.0) if sigma == 0.0 else \
            AlphaBetaGains.from_noise(period, self.config.joint_acceleration_noise, sigma)
        self._encoder_names = tuple(encoders.joints or self._arm)
        return JointRateTracker(gains, len(self._encoder_names))

    # ---- measurements in ---------------------------------------------------------------------------------------
    def _problem(self, topic_name: str, text: str) -> None:
        self._problems[topic_name] = text

    def _on_gyro(self, msg) -> None:
        if msg.header.frame_id != self._gyro.sensor_frame:
            self._problem(self.nodes.imu, f"frame_id {msg.header.frame_id!r}, expected {self._gyro.sensor_frame!r}")
            return
        rate = cv.xyz_of(msg.angular_velocity)
        if not np.isfinite(rate).all():
            self._problem(self.nodes.imu, "non-finite angular_velocity")
            return
        self.attitude.propagate(cv.seconds(msg.header.stamp), self._gyro.rotation.apply(rate))   # sensor -> link

    def _on_star_tracker(self, msg) -> None:
        xyzw = cv.xyzw_of(msg.orientation)
        covariance = np.asarray(msg.orientation_covariance, float).reshape(3, 3)
        if msg.header.frame_id != self._tracker_link or not (np.isfinite(xyzw).all() and np.linalg.norm(xyzw) > 0.5
                                                             and np.isfinite(covariance).all()):
            self._problem(self.nodes.star_tracker, f"not an attitude of {self._tracker_link!r} with a finite "
                                                   "covariance")
            return
        rotation = rotation_of(xyzw)
        self.attitude.update(cv.seconds(msg.header.stamp), xyzw, rotation.T @ covariance @ rotation)  # world -> body

    def _on_grasp_state(self, msg) -> None:
        try:
            holding = read_grasp_state(msg, self.nodes.grasp_state)["holding"] > 0.5
        except CommandError as exc:
            self._problem(self.nodes.grasp_state, str(exc))
            return
        if holding != (self.held.hand_to_target is not None):
            self._latch_pending = holding

    def _on_pose(self, msg) -> None:
        if not self.attitude.initialised:
            return                                   # the bus attitude places the measurement in the world
        if self.holding:
            self.skipped_while_held += 1             # the target is the arm's: its free-body filter waits
            return
        pose = msg.pose.pose
        position, xyzw = cv.xyz_of(pose.position), cv.xyzw_of(pose.orientation)
        covariance = np.asarray(msg.pose.covariance, float).reshape(6, 6)
        if msg.header.frame_id != self._pose.mounting.sensor_frame or not (
                np.isfinite(position).all() and np.isfinite(xyzw).all() and np.isfinite(covariance).all()):
            self._problem(self.nodes.target_pose, f"not a finite pose in {self._pose.mounting.sensor_frame!r}")
            return
        mounting = self._pose.mounting
        frame_position, world_xyzw, rotation_world_sensor = pose_measurement_in_world(
            position, xyzw, self.attitude.latest.rotation, mounting.position,
            mounting.rotation.as_matrix())
        self.target.update(cv.seconds(msg.header.stamp), frame_position, world_xyzw,
                           float(np.trace(covariance[:3, :3])) / 3.0, float(np.trace(covariance[3:, 3:])) / 3.0,
                           rotation_world_sensor)

    def _on_encoders(self, msg) -> None:
        angles = self._named(msg, self._encoder_names, msg.position, self.nodes.joint_encoders)
        if angles is not None:
            self.joints.correct(angles)
            self._joint_time = cv.seconds(msg.header.stamp)

    def _on_tachometers(self, msg) -> None:
        speeds = self._named(msg, self._wheels, msg.velocity, self.nodes.wheel_tachometers)
        if speeds is None:
            return
        t = cv.seconds(msg.header.stamp)
        if self._wheel_time is not None:
            self._wheel_angles += self._wheel_speeds * (t - self._wheel_time)
        self._wheel_speeds, self._wheel_time = speeds, t

    def _named(self, msg, names, values, topic_name: str) -> np.ndarray | None:
        """`values` of `names` in a JointState; its rows looked up once per name list (a sender keeps its list)."""
        key = (topic_name, tuple(msg.name))
        rows = self._rows.get(key)
        if rows is None:
            index = {n: i for i, n in enumerate(msg.name)}
            rows = self._rows[key] = [index[n] for n in names] if all(n in index for n in names) else []
        try:
            if not rows:
                raise IndexError
            out = np.array([values[i] for i in rows], float)
        except IndexError:
            self._problem(topic_name, f"needs {list(names)}, got {list(msg.name)}")
            return None
        if not np.isfinite(out).all():
            self._problem(topic_name, "non-finite value")
            return None
        return out

    # ---- estimates out -----------------------------------------------------------------------------------------
    @property
    def holding(self) -> bool:
        """The target is the arm's (the grasp latched)."""
        return self.held is not None and self.held.hand_to_target is not None

    def ready(self) -> bool:
        return self.attitude.initialised and (self.target is None or self.target.initialised) and \
            (self.joints is None or self.joints.angles is not None) and self._wheel_speeds is not None

    def _index(self) -> None:
        """Where each estimated quantity goes in q and v (looked up once: by name they cost ~2 us each)."""
        system = self.system
        bus = system.subtree(self.bus).base_joint
        self._bus_q, self._bus_v = system.q_slice(bus).start, system.v_slice(bus).start
        if self.target_subtree is not None:
            target = system.subtree(self.target_subtree).base_joint
            self._target_q, self._target_v = system.q_slice(target).start, system.v_slice(target).start
        joints = (self._encoder_names if self.joints is not None else ()) + self._wheels
        self._joint_q = [system.q_slice(n) for n in joints]
        self._joint_v = np.array([system.v_index(n) for n in joints], int)
        self.joint_names = joints

    def state(self, now: float):
        """(q, v, attitude estimate, R_world_bus, target estimate or None) of the estimated system at `now` (s),
        the bus at its place (bus_translation.py); Pinocchio's conventions (free-flyer velocity in the base
        frame)."""
        q, v = self._q, self._v
        a = self.attitude.latest
        rate = a.rate - a.bias
        rotation = a.rotation @ pin.exp3(rate * (now - a.t))
        b, bv = self._bus_q, self._bus_v
        q[b + 3:b + 7] = xyzw_of(rotation)
        v[bv + 3:bv + 6] = rate
        angles, rates = [], []
        if self.joints is not None:
            angles.append(self.joints.angles + self.joints.rates * (now - self._joint_time))
            rates.append(self.joints.rates)
        if self._wheels:
            angles.append(self._wheel_angles + self._wheel_speeds * (now - self._wheel_time))
            rates.append(self._wheel_speeds)
        if angles:
            for where, angle in zip(self._joint_q, np.concatenate(angles)):
                if where.stop - where.start == 2:           # a continuous joint: (cos, sin)
                    q[where.start], q[where.start + 1] = math.cos(angle), math.sin(angle)
                else:
                    q[where.start] = angle
            v[self._joint_v] = np.concatenate(rates)
        target = None
        if self.target is not None:
            t, tv = self._target_q, self._target_v
            if self._latch_pending is not None:
                self._switch_grasp(now, q, v)
            if self.holding:
                q[b:b + 3] = 0.0                         # relative to the bus origin, as the filter's
                v[bv:bv + 3] = 0.0
                self.held.place(q, v)
                target = self._held_estimate
            else:
                target = self.target.estimate_at(now)
                q[t:t + 3] = target.frame_position
                q[t + 3:t + 7] = target.xyzw
                v[tv:tv + 3] = target.rotation.T @ target.frame_velocity
                v[tv + 3:tv + 6] = target.rate
            r_target = target.rotation if not self.holding else rotation_of(q[t + 3:t + 7])
        position, velocity = self.translation.solve(now, q, v)
        q[b:b + 3] = position
        v[bv:bv + 3] = rotation.T @ velocity
        if target is not None:
            q[t:t + 3] += position
            v[tv:tv + 3] += r_target.T @ velocity
        return q, v, a, rotation, target

    def _switch_grasp(self, now: float, q: np.ndarray, v: np.ndarray) -> None:
        """The grasp latched (the target from the arm from now on, its covariance the filter's at the latch) or
        let go (the target filter restarts from the held state)."""
        holding, self._latch_pending = self._latch_pending, None
        b, bv, t, tv = self._bus_q, self._bus_v, self._target_q, self._target_v
        if holding:
            estimate = self.target.estimate_at(now)
            q[b:b + 3] = 0.0
            q[t:t + 3] = estimate.frame_position
            q[t + 3:t + 7] = estimate.xyzw
            self.held.latch(q)
            self._held_estimate = estimate
            return
        q[b:b + 3] = 0.0
        v[bv:bv + 3] = 0.0
        self.held.place(q, v)
        rotation = rotation_of(q[t + 3:t + 7])
        rate = v[tv + 3:tv + 6].copy()
        com = self.target.config.com
        self.held.release()
        self.target.restart(now, q[t:t + 3].copy(), q[t + 3:t + 7].copy(),
                            rotation @ (v[tv:tv + 3] + np.cross(rate, com)), rate, self._held_estimate.covariance)

    def _publish_estimates(self, now: float) -> None:
        if not self.ready():
            return
        q, v, a, rotation, target = self.state(now)
        self._state_at = (now, (q, v, a, rotation, target))
        nodes = self.nodes
        self.published += 1
        if self.wanted(nodes.joint_states):
            angles = [math.atan2(q[w.start + 1], q[w.start]) if w.stop - w.start == 2 else q[w.start]
                      for w in self._joint_q]
            self.publish(nodes.joint_states, self._joint_builder.build(now, angles, v[self._joint_v], ()))
        b, bv = self._bus_q, self._bus_v
        covariances = self._covariances(a, rotation, target)
        if self.wanted(nodes.odometry[self.bus]):
            self.publish(nodes.odometry[self.bus], self._odometry_builders[self.bus].build(
                now, q[b:b + 7].tolist(), v[bv:bv + 6].tolist(), *covariances[self.bus]))
        if target is not None and self.wanted(nodes.odometry[self.target_subtree]):
            t, tv = self._target_q, self._target_v
            self.publish(nodes.odometry[self.target_subtree], self._odometry_builders[self.target_subtree].build(
                now, q[t:t + 7].tolist(), v[tv:tv + 6].tolist(), *covariances[self.target_subtree]))

    def _covariances(self, a, rotation: np.ndarray, target) -> dict:
        """subtree -> (pose, twist) covariances of its odometry, flat (36,): worked out again only when a filter's
        state changed (the gyro's 100 Hz, the target filter's 10 ms steps), not at every estimate; their axes at
        the attitudes of that instant (the rotation in between is below 1e-3 rad: its effect on a covariance,
        smaller still)."""
        key = (a, target.covariance if target is not None else None, self.holding)
        cached = self._covariance_key
        if cached is not None and all(x is y for x, y in zip(key, cached)):      # the same objects: unchanged
            return self._covariance_cache
        pose, twist = np.zeros((6, 6)), np.zeros((6, 6))
        if target is not None:
            pose[:3, :3] = self._mass_fraction ** 2 * target.covariance[0:3, 0:3]
            twist[:3, :3] = rotation.T @ (self._mass_fraction ** 2 * target.covariance[3:6, 3:6]) @ rotation
        pose[3:, 3:] = rotation @ a.covariance[:3, :3] @ rotation.T       # body side -> world axes
        # the rate's error: the bias's, plus the white noise of the one gyro sample it holds (sigma_v^2 / T)
        twist[3:, 3:] = a.covariance[3:, 3:] + self._gyro_white_variance * np.eye(3)
        out = {self.bus: (pose.ravel(), twist.ravel())}
        if target is not None:
            r_target = target.rotation
            pose, twist = np.zeros((6, 6)), np.zeros((6, 6))
            pose[:3, :3] = target.covariance[0:3, 0:3]
            pose[3:, 3:] = r_target @ target.covariance[6:9, 6:9] @ r_target.T
            twist[:3, :3] = r_target.T @ target.covariance[3:6, 3:6] @ r_target
            twist[3:, 3:] = target.covariance[9:12, 9:12]
            out[self.target_subtree] = (pose.ravel(), twist.ravel())
        self._covariance_key, self._covariance_cache = key, out
        return out

    # ---- consistency and diagnostics ---------------------------------------------------------------------------
    def _truth_state(self, subtree: str):
        msg = self._truth.get(subtree)
        if msg is None:
            return None
        try:
            return cv.read_odometry(msg, self.nodes.world_frame, self.system.subtree(subtree).base_link,
                                    self.nodes.truth_odometry[subtree])
        except CommandError as exc:
            self._problem(self.nodes.truth_odometry[subtree], str(exc))
            return None

    def errors(self, now: float) -> dict:
        """The estimators' errors against the truth at `now` (each (error, covariance), error = truth - estimate as
        the filters' error states), for those whose truth is at hand."""
        if not self.ready():
            return {}
        # the estimate published at this instant if there is one (the same timer period), else worked out now
        known = self._state_at
        _q, _v, a, rotation, target = known[1] if known is not None and known[0] == now else self.state(now)
        out = {}
        bus = self._truth_state(self.bus)
        if bus is None:
            return out
        bus_rotation = rotation_of(bus[1])
        out["attitude"] = (pin.log3(rotation.T @ bus_rotation), a.covariance[:3, :3])
        truth = self._truth_state(self.target_subtree) if target is not None and not self.holding else None
        if truth is not None:
            com = self.target.config.com
            t_rotation = rotation_of(truth[1])
            r = truth[0] + t_rotation @ com - bus[0]
            velocity = t_rotation @ (truth[2] + np.cross(truth[3], com)) - bus_rotation @ bus[2]
            e = np.concatenate([r - target.com_position, velocity - target.velocity,
                                pin.log3(rotation_of(target.xyzw).T @ t_rotation), truth[3] - target.rate])
            out["target"] = (e, target.covariance)
        return out

    def _diagnostics(self, now: float) -> None:
        from scipy.stats import chi2  # here: scipy.stats costs 0.35 s to import, every run's start-up

        errors = self.errors(now)
        statuses = []
        for name, estimator in (("attitude", self.attitude), ("target", self.target)):
            if estimator is None:
                continue
            values = [("updates", estimator.updates), ("too_old", estimator.too_old),
                      ("nis", estimator.last_nis if estimator.last_nis is not None else float("nan"))]
            level, message = cv.OK, "tracking"
            if name == "target" and self.holding:
                message = "held: the target from the arm's kinematics (grasp/state), the filter waiting for release"
                values.append(("measurements_while_held", self.skipped_while_held))
            elif not estimator.initialised:
                level, message = cv.WARN, "waiting for its first measurement"
            if name in errors:
                error, covariance = errors[name]
                value = nees(error, covariance)
                if value is None:
                    values.append(("nees", "undefined: the covariance is not positive definite"))
                    statuses.append(cv.diagnostic_status(self.types, level, f"estimators: {name}", message,
                                                         values=values))
                    continue
                total = self._nees[name]
                total[0] += value
                total[1] += 1
                values += [("nees", value), ("mean_nees", total[0] / total[1]), ("nees_dof", len(error))]
                if value > chi2.ppf(NEES_QUANTILE, len(error)):
                    level, message = cv.WARN, f"inconsistent: NEES {value:.3g} above its chi-square " \
                                              f"{NEES_QUANTILE} quantile ({len(error)} dof)"
            statuses.append(cv.diagnostic_status(self.types, level, f"estimators: {name}", message, values=values))
        for topic_name, problem in sorted(self._problems.items()):
            statuses.append(cv.diagnostic_status(self.types, cv.WARN, f"estimators: {topic_name}",
                                                 f"skipped an unreadable message: {problem}"))
        self._problems.clear()
        if self.wanted(self.nodes.diagnostics):
            self.publish(self.nodes.diagnostics, cv.diagnostic_array(self.types, now, statuses))
