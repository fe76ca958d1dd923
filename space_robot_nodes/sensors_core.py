"""Sensors node core: the model's sensors (space_robot_sensing) between the simulator's truth and ROS messages.

Subscribes the dynamics node's exact state: joint_states, the odometry of each floating base (pose in the world,
twist in the base link) and grasp/wrench. At each sensor's own rate (the model file's `sensors` section) it
samples the sensor model with the truth of that instant and reports (config/nodes.yaml `sensors.topics`):
- imu/data (sensor_msgs/Imu): the gyro's rate in its own frame, with the white part's covariance
  (GyroConfig.white_variance); orientation and linear acceleration marked not provided (-1);
- star_tracker/attitude (sensor_msgs/Imu): the attitude of the tracker's link (the bus) in the world, its
  covariance about the world's axes; angular velocity and acceleration not provided;
- encoders/joint_states, tachometers/joint_states (sensor_msgs/JointState): arm joint positions, wheel speeds;
- wrist/wrench (geometry_msgs/WrenchStamped): the grasp wrench (the target's on the hand; zero without a grasp),
  moved to the sensor's frame and through the sensor model;
- target/pose_measurement (geometry_msgs/PoseWithCovarianceStamped): the target frame in the pose sensor's frame,
  when in view and not dropped;
- tf_static: each sensor's frame on its link (latched), so every frame_id above is in the tree;
- visualization/pose_sensor_field_of_view (visualization_msgs/Marker, latched): the pose sensor's cone for RViz;
- diagnostics: per sensor, measurements reported and, for the star tracker and the pose sensor, why the last
  sample gave none (an outage, the target out of view, a dropout) at WARN.
Every message is stamped at the instant the sensor sampled; one with latency is published at the first release
tick (sensors.release_rate) at or after stamp + latency. Sampling runs in the COMMAND phase, after the dynamics
node has published the state of the instant (SENSE) and before the controller's update (CONTROL).

Frames: the gyro and the star tracker must sit on a floating base's link, the pose sensor too, and its target
frame must be another floating base's link (their truth is that base's odometry); the wrist sensor on the frame
the dynamics node gives grasp/wrench in. A state message the node cannot read is skipped and reported (WARN):
the sensors keep their last truth, and the sample of that instant is not taken.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_scenario.faults import FaultSchedule
from space_robot_scenario.node_config import SensorsNodeConfig
from space_robot_sensing.sensor_suite import SensorSuiteConfig

from . import conversions as cv
from . import message_builders as mb
from .message_types import MessageTypes
from .node_core import COMMAND, NodeCore
from .robot_state import check_odometry_topics, floating_subtrees

FIELD = "sensors"             # the model file's section, for errors about where a sensor sits
FOV_EDGES = 24                # lines along the pose sensor's cone in RViz
FOV_LINE_WIDTH = 0.005        # m
FOV_COLOUR = (1.0, 0.85, 0.2, 0.6)   # RGBA: amber, translucent
_CHANNELS = ("joint_encoders", "wheel_tachometers")     # joint_states channels, sampled by _sample_channel


class SensorsCore(NodeCore):
    name = "sensors"

    def __init__(self, types: MessageTypes, system: SystemModel, suite: SensorSuiteConfig,
                 config: SensorsNodeConfig, source: str | None = None, faults: FaultSchedule | None = None):
        """`source`: the model file (named by errors about where a sensor sits). `faults`: the scenario's schedule,
        whose sensor faults this node applies (outages and dropouts as windows, bias jumps when due) and reports
        at the tick each happens."""
        super().__init__(types)
        self.config = config
        self.source = source
        self.faults = faults or FaultSchedule()
        self._faults_until = -float("inf")              # faults due up to this time are applied
        self.system = system
        check_odometry_topics(system, config.odometry, "sensors.topics.odometry")
        self.sensors = suite.build()
        self._base_of = {s.base_link: s.name for s in floating_subtrees(system)}   # base link -> subtree
        self._link_of = {name: link for link, name in self._base_of.items()}       # subtree -> base link
        # the latest odometry message per subtree, read only when a sensor samples (the bus's comes at 1 kHz and
        # the sensors sample at 100 Hz at most: reading every one would cost ten times what is used)
        self._odometry_msg: dict[str, object] = {}
        self._joint_msg = None
        self._joints: tuple[np.ndarray, np.ndarray] | None = None
        self._wrench: tuple[str, np.ndarray, np.ndarray] | None = None
        self._problems: dict[str, str] = {}            # topic -> the last reading problem
        self._counts = {name: 0 for name in self.sensors}
        self._why_not: dict[str, str] = {}             # sensor -> why its last sample gave nothing
        names = system.config
        self._arm, self._wheels = tuple(names.arm_joints), tuple(names.wheel_joints)
        # the joints each channel reads (its `joints`, default all of its sort) as indices into arm + wheels
        self._channels = {name: self._channel_joints(name, sort, offset) for name, sort, offset in
                          (("joint_encoders", self._arm, 0), ("wheel_tachometers", self._wheels, len(self._arm)))
                          if name in self.sensors}
        for subtree, topic_name in config.odometry.items():
            self.add_subscription(topic_name, cv.ODOMETRY, lambda msg, s=subtree: self._take_odometry(s, msg),
                                  latest_only=True)
        # the state's stamps are the node's clock under ROS 2 (node_core): a 1 kHz sensor samples every 1 ms, not
        # at /clock's 100 Hz (its timers would run once per clock tick); in the lockstep runtime, no difference
        self.add_subscription(config.joint_states, cv.JOINT_STATE, self._take_joints, latest_only=True,
                              time_source=True)
        if "wrist_force_torque" in self.sensors:
            self.add_subscription(config.grasp_wrench, cv.WRENCH_STAMPED, self._take_wrench, latest_only=True)
        self._check_frames()
        for name, attribute in (("star_tracker", "outages"), ("target_pose", "dropouts")):
            if name in self.sensors:
                windows = getattr(self.sensors[name], attribute)
                for start, end in self.faults.windows(name).windows:
                    windows = windows.added(start, end)
                setattr(self.sensors[name], attribute, windows)
        if self.faults.faults:          # first in the tick: a fault at t strikes the samples taken at t
            self.add_timer("faults", 1.0 / config.release_rate, self._apply_faults, COMMAND,
                           ("nodes", "sensors.release_rate"))
        rates = "sensors"                               # the model file's section names the rate
        for name, sensor in self.sensors.items():
            topic_name = getattr(config, "imu" if name == "gyro" else name)
            msgtype = {"gyro": cv.IMU, "star_tracker": cv.IMU, "joint_encoders": cv.JOINT_STATE,
                       "wheel_tachometers": cv.JOINT_STATE, "wrist_force_torque": cv.WRENCH_STAMPED,
                       "target_pose": cv.POSE_WITH_COVARIANCE_STAMPED}[name]
            self.add_publication(topic_name, msgtype)
            sample = functools.partial(self._sample_channel, name) if name in _CHANNELS else \
                getattr(self, f"_sample_{name}")
            self.add_timer(name, 1.0 / sensor.config.rate, sample, COMMAND, ("model", f"{rates}.{name}.rate"))
        if {"star_tracker", "target_pose"} & set(self.sensors):
            self.add_timer("release", 1.0 / config.release_rate, self._release, COMMAND,
                           ("nodes", "sensors.release_rate"))
        self.add_publication(config.tf_static, cv.TF_MESSAGE, transient_local=True)
        if "target_pose" in self.sensors:
            self.add_publication(config.field_of_view, mb.MARKER, transient_local=True)
        self.add_publication(config.diagnostics, cv.DIAGNOSTIC_ARRAY)
        self.add_timer("diagnostics", 1.0 / config.diagnostics_rate, self._diagnostics, COMMAND,
                       ("nodes", "sensors.diagnostics_rate"))

    # ---- where the sensors sit ---------------------------------------------------------------------------------
    def _channel_joints(self, name: str, joints: tuple, offset: int) -> tuple[tuple, list]:
        """(joint names, their indices in arm + wheels) of an encoder or tachometer channel."""
        chosen = self.sensors[name].config.joints
        chosen = joints if chosen is None else chosen
        unknown = [j for j in chosen if j not in joints]
        if unknown or not chosen:
            sort = "arm joints" if name == "joint_encoders" else "reaction wheels"
            raise ConfigError(f"{FIELD}.{name}.joints", f"must name {sort} of the model ({', '.join(joints) or 'none'})"
                              f", got {list(chosen)}", self.source)
        return tuple(chosen), [offset + joints.index(j) for j in chosen]

    def _check_frames(self) -> None:
        for name in ("gyro", "star_tracker", "target_pose"):
            if name in self.sensors and self.sensors[name].config.mounting.frame not in self._base_of:
                frame = self.sensors[name].config.mounting.frame
                raise ConfigError(f"{FIELD}.{name}.frame", f"must be the link of a floating base (one of "
                                  f"{sorted(self._base_of)}): its truth is that base's odometry, got {frame!r}",
                                  self.source)
        if "wrist_force_torque" in self.sensors:
            grasp = self.system.config.grasp
            frame = self.sensors["wrist_force_torque"].config.mounting.frame
            if grasp is None or frame != grasp.end_effector_frame:
                raise ConfigError(f"{FIELD}.wrist_force_torque.frame", "must be the grasp's end_effector_frame (the "
                                  "frame of grasp/wrench, the sensor's load), "
                                  + (f"{grasp.end_effector_frame!r}" if grasp else "and the model has no grasp")
                                  + f", got {frame!r}", self.source)
        if "target_pose" in self.sensors:
            config = self.sensors["target_pose"].config
            if config.target_frame not in self._base_of or config.target_frame == config.mounting.frame:
                raise ConfigError(f"{FIELD}.target_pose.target_frame", "must be the link of another floating base "
                                  f"(one of {sorted(set(self._base_of) - {config.mounting.frame})}), got "
                                  f"{config.target_frame!r}", self.source)

    def start(self) -> None:
        transforms = [cv.transform_stamped(self.types, 0.0, sensor.config.mounting.frame,
                                           sensor.config.mounting.sensor_frame, sensor.config.mounting.position,
                                           sensor.config.mounting.orientation_xyzw)
                      for name, sensor in self.sensors.items() if hasattr(sensor.config, "mounting")]
        if transforms:
            self.publish(self.config.tf_static, cv.tf_message(self.types, transforms))
        if "target_pose" in self.sensors:
            self.publish(self.config.field_of_view, self.field_of_view_marker())

    def field_of_view_marker(self):
        """The pose sensor's field of view for RViz: a cone about its +z (the boresight), half-angle
        field_of_view / 2, drawn from min_range to field_of_view_length (m) as a LINE_LIST in its frame."""
        config = self.sensors["target_pose"].config
        half, length = config.field_of_view / 2.0, self.config.field_of_view_length
        builder = mb.MarkerBuilder(self.types)
        rim = [(math.sin(half) * math.cos(a), math.sin(half) * math.sin(a), math.cos(half))
               for a in np.linspace(0.0, 2.0 * math.pi, FOV_EDGES, endpoint=False)]
        points = []
        for k, direction in enumerate(rim):
            following = rim[(k + 1) % len(rim)]
            points += [builder.point([config.min_range * c for c in direction]),
                       builder.point([length * c for c in direction]),           # an edge of the cone
                       builder.point([length * c for c in direction]),
                       builder.point([length * c for c in following])]           # the rim at its far end
        return builder.marker(cv.header(self.types, 0.0, config.mounting.sensor_frame), "field_of_view", 0,
                              builder.LINE_LIST, builder.pose((0.0, 0.0, 0.0)), (FOV_LINE_WIDTH, 0.0, 0.0),
                              FOV_COLOUR, points, frame_locked=True)

    # ---- truth in ----------------------------------------------------------------------------------------------
    def _take_odometry(self, subtree: str, msg) -> None:
        self._odometry_msg[subtree] = msg

    def _take_joints(self, msg) -> None:
        self._joint_msg = msg

    def _joint_state(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(positions, velocities) of arm joints then wheels from the latest joint_states, None if unreadable."""
        if self._joint_msg is not None:
            msg, self._joint_msg = self._joint_msg, None
            try:
                self._joints = cv.read_joint_state(msg, self._arm + self._wheels, self.config.joint_states)
            except CommandError as exc:
                self._problems[self.config.joint_states] = str(exc)
                self._joints = None
        return self._joints

    def _take_wrench(self, msg) -> None:
        force, torque = cv.xyz_of(msg.wrench.force), cv.xyz_of(msg.wrench.torque)
        if not (np.isfinite(force).all() and np.isfinite(torque).all()):
            self._problems[self.config.grasp_wrench] = f"{self.config.grasp_wrench}: non-finite wrench"
            return
        self._wrench = (msg.header.frame_id, force, torque)

    def _base_state(self, link: str):
        """(position, xyzw, linear, angular) of the floating base whose link is `link`, from its latest odometry;
        None before the first or when it cannot be read (reported)."""
        subtree = self._base_of[link]
        msg = self._odometry_msg.get(subtree)
        if msg is None:
            return None
        topic_name = self.config.odometry[subtree]
        try:
            return cv.read_odometry(msg, self.config.world_frame, self._link_of[subtree], topic_name)
        except CommandError as exc:
            self._problems[topic_name] = str(exc)
            return None

    # ---- sampling ----------------------------------------------------------------------------------------------
    def _sample_gyro(self, now: float) -> None:
        gyro = self.sensors["gyro"]
        state = self._base_state(gyro.config.mounting.frame)
        if state is None:
            return
        rate = gyro.sample(state[3])
        covariance = np.eye(3) * gyro.config.white_variance
        self._counts["gyro"] += 1
        if self.wanted(self.config.imu):            # sampled either way: the noise stream stays the same
            self.publish(self.config.imu, cv.imu(self.types, now, gyro.config.mounting.sensor_frame,
                                                 angular_velocity=rate, angular_velocity_covariance=covariance))

    def _sample_star_tracker(self, now: float) -> None:
        tracker = self.sensors["star_tracker"]
        state = self._base_state(tracker.config.mounting.frame)
        if state is not None and not tracker.sample(now, state[1]):
            self._why_not["star_tracker"] = f"outage at t = {now:.3f} s"
        elif state is not None:
            self._why_not.pop("star_tracker", None)

    def _sample_channel(self, name: str, now: float) -> None:
        """Encoders (arm positions) or tachometers (wheel speeds) from the latest joint_states."""
        joints = self._joint_state()
        if joints is None:
            return
        names, rows = self._channels[name]
        encoders = name == "joint_encoders"
        measured = self.sensors[name].sample(joints[0 if encoders else 1][rows])
        self._counts[name] += 1
        topic_name = getattr(self.config, name)
        if self.wanted(topic_name):
            self.publish(topic_name, cv.joint_state(self.types, now, names, measured if encoders else [],
                                                    [] if encoders else measured, []))

    def _sample_wrist_force_torque(self, now: float) -> None:
        from space_robot_sensing.force_torque_sensor import wrench_in_sensor_frame

        sensor = self.sensors["wrist_force_torque"]
        mounting = sensor.config.mounting
        force, torque = np.zeros(3), np.zeros(3)            # no grasp/wrench yet: nothing loads the wrist
        if self._wrench is not None:
            frame, force, torque = self._wrench
            if frame != mounting.frame:
                self._problems[self.config.grasp_wrench] = (f"{self.config.grasp_wrench}: in frame {frame!r}, but "
                                                            f"the wrist sensor sits on {mounting.frame!r}")
                return
        measured = sensor.sample(wrench_in_sensor_frame(mounting, force, torque))
        self._counts["wrist_force_torque"] += 1
        if self.wanted(self.config.wrist_force_torque):
            self.publish(self.config.wrist_force_torque, cv.wrench_stamped(
                self.types, now, mounting.sensor_frame, measured[:3], measured[3:]))

    def _sample_target_pose(self, now: float) -> None:
        from scipy.spatial.transform import Rotation

        sensor = self.sensors["target_pose"]
        mounting = sensor.config.mounting
        bus, target = self._base_state(mounting.frame), self._base_state(sensor.config.target_frame)
        if bus is None or target is None:
            return
        bus_rotation = Rotation.from_quat(bus[1])
        sensor_rotation = bus_rotation * mounting.rotation                       # R_world_sensor
        sensor_position = bus[0] + bus_rotation.apply(mounting.position)
        position = sensor_rotation.inv().apply(target[0] - sensor_position)      # p_CT
        rotation = sensor_rotation.inv() * Rotation.from_quat(target[1])         # R_CT
        if sensor.sample(now, position, rotation):
            self._why_not.pop("target_pose", None)
        else:
            self._why_not["target_pose"] = f"{sensor.status} at t = {now:.3f} s"

    def _release(self, now: float) -> None:
        if "star_tracker" in self.sensors:
            tracker = self.sensors["star_tracker"]
            from space_robot_sensing.star_tracker import covariance_in_world

            for solution in tracker.release(now):
                self._counts["star_tracker"] += 1
                self.publish(self.config.star_tracker, cv.imu(
                    self.types, solution.stamp, tracker.config.mounting.frame,
                    orientation_xyzw=solution.value.xyzw,
                    orientation_covariance=covariance_in_world(solution.value)))
        if "target_pose" in self.sensors:
            sensor = self.sensors["target_pose"]
            for measurement in sensor.release(now):
                self._counts["target_pose"] += 1
                m = measurement.value
                self.publish(self.config.target_pose, cv.pose_with_covariance_stamped(
                    self.types, measurement.stamp, sensor.config.mounting.sensor_frame, m.position, m.xyzw,
                    m.covariance))

    # ---- faults ------------------------------------------------------------------------------------------------
    def _apply_faults(self, now: float) -> None:
        """The faults due since the last look: a bias jump changes the gyro from now on (outages and dropouts are
        windows its sensor already holds); each is reported at once, at WARN, naming what happened."""
        due = self.faults.due(self._faults_until, now)
        self._faults_until = now
        if not due:
            return
        statuses = []
        for fault in due:
            if fault.kind == "bias_jump":
                self.sensors["gyro"].add_bias(fault.value)
            statuses.append(cv.diagnostic_status(self.types, cv.WARN, f"sensors: {fault.component}",
                                                 f"fault: {fault.description}",
                                                 values=[("fault", fault.kind), ("time_s", fault.time)]))
        self.publish(self.config.diagnostics, cv.diagnostic_array(self.types, now, statuses))

    # ---- diagnostics -------------------------------------------------------------------------------------------
    def _diagnostics(self, now: float) -> None:
        if not self.wanted(self.config.diagnostics):
            return
        statuses = []
        for name in self.sensors:
            why = self._why_not.get(name)
            statuses.append(cv.diagnostic_status(
                self.types, cv.WARN if why else cv.OK, f"sensors: {name}",
                f"no measurement: {why}" if why else "measuring",
                values=[("measurements", self._counts[name])]))
        for topic_name, problem in sorted(self._problems.items()):
            statuses.append(cv.diagnostic_status(self.types, cv.WARN, f"sensors: {topic_name}",
                                                 f"skipped an unreadable message: {problem}"))
        self._problems.clear()
        self.publish(self.config.diagnostics, cv.diagnostic_array(self.types, now, statuses))
