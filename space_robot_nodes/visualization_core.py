"""Visualization node core: what a GNC engineer wants to see in RViz, drawn from the state at a display rate.

Subscribes (newest message only): the throttled joint state and odometry (config/nodes.yaml, 50 Hz), the
attitude setpoint and the arm's trajectory goals. Publishes, in the world frame unless said:
- visualization/markers (visualization_msgs/MarkerArray) at `rate` (20 Hz):
  - ns `momentum`: the linear (N s) and angular (N m s, about the system centre of mass) momentum of each body
    group of each subtree - base, arm, wheels - as arrows at the group's centre of mass, and of the whole system
    at its centre of mass, each labelled with its value (seed 004 eqs. 2.9-2.12, body by body);
  - ns `attitude`: the bus's axes and its setpoint's axes (ghost) at the bus, and the angle between them;
  - ns `wheels`: one disc per reaction wheel on its spin axis just outside the bus, locked to the wheel's frame
    so that its stripe turns with the wheel, labelled with the wheel speed (rpm);
  - ns `goal`: the end effector's pose at the last trajectory goal (its last point, bus where it was then);
  - ns `orbit` (in orbit, docs/orbit.md sec. 6): the LVLH axes at the reference point, labelled, the direction to the
    central body's centre and the orbital velocity's, and the bus thrusters' commanded force at the bus (the
    station keeping's, as the dynamics node applied it), labelled in N;
- visualization/end_effector_path (nav_msgs/Path) at `path_rate`: where the end effector has been;
- visualization/planned_end_effector_path (nav_msgs/Path, latched), once per trajectory goal: the end effector along
  the reference the controller will follow (the controller's own trajectory follower, ServicerController.
  preview_trajectory, from the state at the goal's arrival), sampled;
- visualization/goal_pose and visualization/attitude_setpoint (geometry_msgs/PoseStamped): the end effector at
  the goal; the setpoint orientation placed at the bus.
Everything is computed at the display rate from the state, never at the physics rate, so the node costs little
whatever the control rate. Markers that have nothing to show (a zero arrow) are deleted, not drawn as dots.
"""
from __future__ import annotations

import dataclasses
import math
import textwrap
from collections import deque
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_control.servicer_controller import ServicerController
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.model.urdf_joints import urdf_joints
from space_robot_dynamics.simulation.orbital_environment import OrbitalEnvironment
from space_robot_scenario.node_config import VisualizationNodeConfig
from space_robot_scenario.robot_descriptions import robot_descriptions

from . import conversions as cv
from . import message_builders as mb
from .controller_core import ControllerCore
from .message_types import MessageTypes
from .node_core import MONITOR, NodeCore
from .robot_state import StateAssembler, floating_subtrees

MARKER_ARRAY = "visualization_msgs/msg/MarkerArray"
PATH = "nav_msgs/msg/Path"
POSE_STAMPED = "geometry_msgs/msg/PoseStamped"

LINEAR, ANGULAR = (0.95, 0.35, 0.2), (0.3, 0.55, 1.0)        # RGB of the momentum arrows
AXES = ((1.0, 0.0, 0.0), (0.0, 0.8, 0.0), (0.1, 0.3, 1.0))   # x, y, z as RViz draws frames
ACTUATOR_REPORT = f"{ControllerCore.name}: actuators"    # the controller's diagnostic status with its torques
DIAGNOSTICS_LINE_WIDTH = 70       # characters: a status line cut there (its whole text is on /diagnostics)
STATIC_PERIOD = 2.0               # s between two sends of the latched markers (see publish_static_markers)
NADIR, VELOCITY, THRUST = (0.55, 0.35, 0.15), (0.9, 0.9, 0.2), (1.0, 0.5, 0.0)    # RGB of the orbit markers
# m: the LVLH axes long enough to stand out of an Envisat-class target (10 m x 2.6 m) at the origin; letters;
# m per N: the thrusters' 100 N drawn as 2 m
ORBIT_MARKERS = {"axis_length": 6.0, "axis_width": 0.04, "text_height": 0.25, "thrust_scale": 0.02}


@dataclass(frozen=True)
class BodyGroup:
    """Bodies (Pinocchio joint ids) whose momentum is drawn as one: `name` like "servicer base"."""

    name: str
    joints: tuple


def body_groups(system: SystemModel) -> list[BodyGroup]:
    """Per subtree: its base (the root body and what is fixed to it), its arm (the arm joints' bodies and what
    they carry), its reaction wheels."""
    model = system.model
    wheels = {system.joint_id(n) for n in system.wheel_joints}
    arm = {system.joint_id(n) for n in system.arm_joints}
    groups = []
    for subtree in system.subtrees:
        members: dict[str, list[int]] = {"base": [], "arm": [], "wheels": []}
        for name in subtree.joint_names:
            j = model.getJointId(name)
            kind = "wheels" if j in wheels else "arm" if arm & set(model.supports[j]) else "base"
            members[kind].append(j)
        groups += [BodyGroup(f"{subtree.name} {kind}", tuple(ids)) for kind, ids in members.items() if ids]
    return groups


def build_visualization(types: MessageTypes, system: SystemModel, scenario) -> VisualizationCore:
    """The visualization node core of a scenario: its nodes file's visualization section, the state topics of its
    dynamics node (throttled) where the section names none, the scenario's controller for planned paths."""
    nodes = scenario.nodes
    config = nodes.visualization
    dynamics = nodes.dynamics
    control = scenario.controller
    controller = ServicerController(system, control) if control is not None and "joint_tracking" in control.modes \
        else None
    bus = control.bus_subtree if control is not None and any(s.name == control.bus_subtree
                                                             for s in system.subtrees) else None
    end_effector = config.end_effector_frame or (scenario.evaluation.end_effector_frame if scenario.evaluation
                                                 else arm_tip_frame(system))
    return VisualizationCore(types, system, dataclasses.replace(config, end_effector_frame=end_effector), controller,
                             bus, config.joint_states or dynamics.throttled_joint_states,
                             config.odometry if config.odometry is not None else dynamics.throttled_odometry,
                             dynamics.throttled_flexible_modes, scenario.orbit, dynamics.base_thrusters_applied)


def arm_tip_frame(system: SystemModel) -> str:
    """The link the last arm joint moves ("" without an arm): where an arm's end effector is by default."""
    if not system.arm_joints:
        return ""
    joint = system.joint_id(system.arm_joints[-1])
    bodies = [f.name for f in system.model.frames if f.parentJoint == joint and f.type == pin.FrameType.BODY]
    return bodies[-1] if bodies else ""


class VisualizationCore(NodeCore):
    name = "visualization"

    def __init__(self, types: MessageTypes, system: SystemModel, config: VisualizationNodeConfig,
                 controller: ServicerController | None, bus_subtree: str | None, joint_states: str,
                 odometry: dict, flexible_modes: str = "flexible_modes_throttle", orbit=None,
                 thrusters_applied: str = "base_thrusters/applied"):
        """`orbit`: the scenario's OrbitConfig (None: free space); `thrusters_applied`: the dynamics node's applied
        thrust (models with base thrusters; 50 Hz with the throttled state, not the 1 kHz command), drawn at the bus."""
        super().__init__(types)
        self.system, self.config, self.controller = system, config, controller
        model = system.model
        self.data = model.createData()
        self.world = config.world_frame
        self.state = StateAssembler(system, config.world_frame)
        self.groups = body_groups(system)
        self.bus = system.subtree(bus_subtree) if bus_subtree is not None else None
        if self.bus is not None and self.bus.root_joint_id == 0:
            self.bus = None                        # a fixed base has no attitude to hold
        ee = config.end_effector_frame
        if ee and not model.existFrame(ee):
            raise ConfigError("visualization.end_effector_frame", f"no frame {ee!r} in the model")
        self.ee_frame = model.getFrameId(ee) if ee else None
        self.wheels = self._wheel_axes()
        self._build = mb.MarkerBuilder(types)
        self._origin = self._build.pose((0.0, 0.0, 0.0))
        self.setpoint: np.ndarray | None = None
        self.goal_pose: pin.SE3 | None = None
        self.planned: list | None = None           # PoseStamped messages of the planned path, built once per goal
        self._path: deque = deque()
        self._last_path_point: np.ndarray | None = None
        self.errors = 0
        self.last_error = ""

        topics = config
        joints_holder = self.state.holder("joints", self, joint_states)
        self._joint_state = None                   # the newest joint state, republished at the display rate

        def take_joint_state(msg) -> None:
            self._joint_state = msg
            joints_holder(msg)
        self.add_subscription(joint_states, cv.JOINT_STATE, take_joint_state, latest_only=True)
        for subtree in floating_subtrees(system):
            if subtree.name not in odometry:
                raise ConfigError("visualization.topics.odometry", f"no odometry topic for the floating subtree "
                                  f"{subtree.name!r} (have {sorted(odometry)})")
            topic = odometry[subtree.name]
            self.add_subscription(topic, cv.ODOMETRY, self.state.holder(subtree.name, self, topic), latest_only=True)
        if system.flexibility is not None:       # modal coordinates and motor angles: part of the state
            self.add_subscription(flexible_modes, cv.JOINT_STATE, self.state.holder("flexible", self, flexible_modes),
                                  latest_only=True)
        self.add_subscription(topics.attitude_setpoint, cv.QUATERNION_STAMPED, self.on_setpoint)
        self.add_subscription(topics.trajectory, cv.JOINT_TRAJECTORY, self.on_trajectory)
        self.arm_joints = tuple(controller.arm_joints) if controller is not None else tuple(system.arm_joints)
        self.commanded: dict[str, float] = {}     # arm joint -> commanded torque (N m), from the controller's report
        self.statuses: dict[str, tuple[int, str]] = {}       # diagnostic status name -> (level, message)
        self.add_subscription(topics.diagnostics, cv.DIAGNOSTIC_ARRAY, self.on_diagnostics)
        self.anchor = (self.bus or next(iter(system.subtrees))).base_link      # where the status text hangs
        self.momentum = all(s.config.base_joint == "free_flyer" for s in system.subtrees) and \
            not np.any(system.config.gravity)      # conserved: worth drawing (a bench arm exchanges it with the world)
        # in orbit: the LVLH frame's directions (orbital_environment.py gives the reference orbit at any instant)
        self.orbit = OrbitalEnvironment(system, orbit) if orbit is not None else None
        self.thrust: np.ndarray | None = None      # N, the thrusters' last commanded force, thruster base frame
        if system.base_thrusters is not None:
            self._thrust_subtree = system.subtree(system.base_thrusters.config.subtree)
            self._thrust_limits = (system.base_thrusters.config.max_force, system.base_thrusters.config.max_torque)
            self._thrust_topic = thrusters_applied
            self.add_subscription(thrusters_applied, cv.WRENCH_STAMPED, self.on_thrust, latest_only=True)
        self.add_publication(topics.markers, MARKER_ARRAY)
        self.add_publication(topics.static_markers, MARKER_ARRAY, transient_local=True)
        self.add_publication(topics.end_effector_path, PATH)
        # the plan of the last goal: latched, a viewer that starts later still shows it
        self.add_publication(topics.planned_end_effector_path, PATH, transient_local=True)
        for topic in (topics.goal_pose, topics.attitude_setpoint_pose):
            self.add_publication(topic, POSE_STAMPED)
        for topic in (topics.display_joint_states, topics.commanded_efforts):
            self.add_publication(topic, cv.JOINT_STATE)
        self.add_timer("markers", 1.0 / config.rate, self.publish_markers, MONITOR, ("nodes", "visualization.rate"))
        self.add_timer("paths", 1.0 / config.path_rate, self.publish_path, MONITOR,
                       ("nodes", "visualization.path_rate"))
        if self.wheels:
            self.add_timer("static_markers", STATIC_PERIOD, self.publish_static_markers, MONITOR)

    # ---- inputs --------------------------------------------------------------------------------
    def _fresh_state(self) -> bool:
        for error in self.state.update():
            self.errors += 1
            self.last_error = error
        return self.state.ready

    def on_setpoint(self, msg) -> None:
        try:
            self.setpoint = cv.read_quaternion_stamped(msg, self.world, self.config.attitude_setpoint, 1e-3)
        except CommandError as exc:
            self.errors += 1
            self.last_error = str(exc)

    def on_thrust(self, msg) -> None:
        try:
            force, _torque = cv.read_wrench_stamped(msg, self._thrust_subtree.base_link, self._thrust_topic,
                                                  *self._thrust_limits)
        except CommandError as exc:
            self.errors += 1
            self.last_error = str(exc)
            return
        self.thrust = force

    def on_diagnostics(self, msg) -> None:
        """Every status's level and message; the controller's actuator report also gives the commanded arm
        torques (its `arm_torque.<joint>` values, at its 10 Hz diagnostics rate: the 1 kHz command topic itself
        would cost this node a receive per control period)."""
        for status in msg.status:
            self.statuses[status.name] = (cv.level_of(status), status.message)
            if status.name == ACTUATOR_REPORT:
                for pair in status.values:
                    if pair.key.startswith("arm_torque."):
                        try:
                            self.commanded[pair.key[len("arm_torque."):]] = float(pair.value)
                        except ValueError:
                            pass

    def on_trajectory(self, msg) -> None:
        """The goal's end-effector pose and the planned path, from the state now (as the controller sees it)."""
        self.planned, self.goal_pose = None, None
        if self.ee_frame is None or not self._fresh_state():
            return
        q, v = self.state.q.copy(), self.state.v.copy()
        try:
            names, points, start = cv.read_joint_trajectory(msg)
            if self.controller is None:
                raise CommandError("trajectory", "no controller model to plan with")
            follower, report = self.controller.preview_trajectory(names, points, self.now(), q, v, start)
        except CommandError as exc:          # the controller refuses it too: nothing to draw
            self.errors += 1
            self.last_error = str(exc)
            return
        times = np.linspace(report.start_time, report.start_time + report.duration, self.config.planned_path_samples)
        stamp = cv.time_msg(self.types, self.now())
        poses = []
        for t in times:
            poses.append(self._pose_stamped(stamp, self._ee_pose(self._with_arm(q, follower.sample(t).positions))))
        self.goal_pose = self._ee_pose(self._with_arm(q, follower.sample(times[-1]).positions))
        self.planned = poses
        self.publish(self.config.planned_end_effector_path, self.types.new(
            PATH, header=cv.header(self.types, self.now(), self.world), poses=poses))

    def _with_arm(self, q: np.ndarray, arm_positions) -> np.ndarray:
        q = q.copy()
        for name, angle in zip(self.controller.arm_joints, arm_positions):
            self.system.set_joint_angle(q, name, float(angle))
        return q

    def _ee_pose(self, q: np.ndarray) -> pin.SE3:
        """The end effector's placement in the world frame at configuration q."""
        pin.forwardKinematics(self.system.model, self.data, q)
        return pin.updateFramePlacement(self.system.model, self.data, self.ee_frame).copy()

    # ---- outputs ---------------------------------------------------------------------------------
    def publish_path(self, now: float) -> None:
        if self.ee_frame is None or not self._fresh_state():
            return
        pose = self._ee_pose(self.state.q)
        point = pose.translation.copy()
        if self._last_path_point is None or np.linalg.norm(point - self._last_path_point) >= self.config.path_spacing:
            self._path.append((now, self._pose_stamped(cv.time_msg(self.types, now), pose)))
            self._last_path_point = point
        while self._path and now - self._path[0][0] > self.config.path_duration:
            self._path.popleft()
        self.publish(self.config.end_effector_path, self.types.new(
            PATH, header=cv.header(self.types, now, self.world), poses=[p for _, p in self._path]))

    def publish_static_markers(self, now: float) -> None:
        """From t = 0 (latched, for a viewer that starts late) every STATIC_PERIOD: RViz marks a marker whose frame
        it cannot place yet (the wheels' tf not there when the latched array arrives) in error until that
        marker comes again."""
        if self.wheels:
            self.publish(self.config.static_markers, self.static_markers(now))

    def publish_markers(self, now: float) -> None:
        c = self.config          # nothing built when nobody takes any of its topics now (a run without a bag)
        if not any(self.wanted(topic) for topic in (c.markers, c.display_joint_states, c.commanded_efforts,
                                                     c.goal_pose, c.attitude_setpoint_pose)):
            return
        if not self._fresh_state():
            return
        q, v = self.state.q, self.state.v
        header = cv.header(self.types, now, self.world)
        markers = (self._momentum_markers(header, q, v) if self.momentum else []) + self._wheel_labels(now, v)
        markers.append(self._diagnostics_text(now))
        self._publish_efforts(now)
        if self.bus is not None:
            markers += self._attitude_markers(header, now, q)
        if self.orbit is not None or self.thrust is not None:
            markers += self._orbit_markers(header, now, q)
        if self.goal_pose is not None:
            markers += self._axes(header, "goal", 0, self.goal_pose, 0.15, 0.7, 0.015)
            self.publish(self.config.goal_pose, self._pose_stamped(header.stamp, self.goal_pose))
        self.publish(self.config.markers, self.types.new(MARKER_ARRAY, markers=markers))

    def _orbit_markers(self, header, now: float, q: np.ndarray) -> list:
        """ns `orbit`: LVLH axes, nadir and velocity directions at the reference point (world origin), labelled;
        the thrusters' force at their base (ORBIT_MARKERS sets the sizes)."""
        length, width, text = ORBIT_MARKERS["axis_length"], ORBIT_MARKERS["axis_width"], ORBIT_MARKERS["text_height"]
        markers = []
        if self.orbit is not None:
            origin = np.zeros(3)
            markers += self._axes(header, "orbit", 0, pin.SE3.Identity(), length, 0.5, width)
            labels = ("x: radial (up)", "y: along-track", "z: orbit normal")
            markers += [self._text(header, "orbit", 3 + k, 1.1 * length * np.eye(3)[k], label, text)
                        for k, label in enumerate(labels)]
            reference = self.orbit.reference_state(now)
            frame = self.orbit.lvlh(reference)
            velocity = frame.axes.T @ reference[3:]                  # LVLH axes
            direction = velocity / np.linalg.norm(velocity)
            markers.append(self._arrow(header, "orbit", 6, origin, -1.5 * length * np.eye(3)[0], NADIR, width))
            markers.append(self._text(header, "orbit", 7, -1.6 * length * np.eye(3)[0], "to the Earth's centre", text))
            markers.append(self._arrow(header, "orbit", 8, origin, 1.5 * length * direction, VELOCITY, width))
            markers.append(self._text(header, "orbit", 9, 1.6 * length * direction,
                                      f"orbital velocity {np.linalg.norm(velocity) / 1000.0:.2f} km/s", text))
        if self.thrust is not None:
            base = self._thrust_subtree
            pin.framesForwardKinematics(self.system.model, self.data, q)
            placement = self.data.oMf[base.base_frame_id]
            force = placement.rotation @ self.thrust
            markers.append(self._arrow(header, "orbit", 10, placement.translation,
                                       ORBIT_MARKERS["thrust_scale"] * force, THRUST, width))
            markers.append(self._text(header, "orbit", 11, placement.translation + ORBIT_MARKERS["thrust_scale"] * force
                                      + (0.0, 0.0, 0.2), f"thrust {np.linalg.norm(force):.3g} N", text))
        return markers

    def _publish_efforts(self, now: float) -> None:
        """The joint state again at the display rate, and the arm command as efforts (N m) of the arm joints."""
        if self._joint_state is not None:
            self.publish(self.config.display_joint_states, self._joint_state)
        if self.commanded and all(name in self.commanded for name in self.arm_joints):
            zeros = np.zeros(len(self.arm_joints))
            efforts = np.array([self.commanded[name] for name in self.arm_joints])
            self.publish(self.config.commanded_efforts, cv.joint_state(self.types, now, self.arm_joints, zeros, zeros,
                                                                        efforts))

    def _diagnostics_text(self, now: float):
        """Every node's diagnostic status as a line (level, name, message), worst first, under the base."""
        lines = [f"{cv.LEVEL_NAMES.get(level, level)}  {name}: {message}"
                 for name, (level, message) in sorted(self.statuses.items(), key=lambda kv: (-kv[1][0], kv[0]))]
        text = "\n".join(textwrap.shorten(line, DIAGNOSTICS_LINE_WIDTH) for line in lines) or "no diagnostics yet"
        return self._text(cv.header(self.types, now, self.anchor), "diagnostics", 0,
                          np.asarray(self.config.diagnostics_text_offset), text, 0.065)

    # ---- momentum ----------------------------------------------------------------------------------
    def group_momenta(self, q: np.ndarray, v: np.ndarray) -> tuple[list, np.ndarray]:
        """[(group, mass kg, centre of mass m, p N s, L N m s about the system CoM)] in the world frame, and the
        system centre of mass (m). Body momentum h_j = oM_j (I_j v_j) about the world origin, summed."""
        model, data = self.system.model, self.data
        pin.forwardKinematics(model, data, q, v)
        com = pin.centerOfMass(model, data, q, False)
        out = []
        for group in self.groups:
            mass, first, linear, angular = 0.0, np.zeros(3), np.zeros(3), np.zeros(3)
            for j in group.joints:
                inertia, placement = model.inertias[j], data.oMi[j]
                h = placement.act(inertia * data.v[j])
                linear += h.linear
                angular += h.angular
                mass += inertia.mass
                first += inertia.mass * placement.act(inertia.lever)
            if mass <= 0.0:
                continue
            out.append((group, mass, first / mass, linear, angular - np.cross(com, linear)))
        return out, com

    def _momentum_markers(self, header, q: np.ndarray, v: np.ndarray) -> list:
        groups, com = self.group_momenta(q, v)
        scale_p, scale_l = self.config.linear_momentum_scale, self.config.angular_momentum_scale
        markers, total_p, total_l = [], np.zeros(3), np.zeros(3)
        lines = ["momentum (L about the system CoM; arrows: p orange, L blue)"]
        for k, (group, _mass, centre, p, l_c) in enumerate(groups):
            total_p += p
            total_l += l_c
            markers += [self._arrow(header, "momentum", 2 * k, centre, scale_p * p, LINEAR, 0.02),
                        self._arrow(header, "momentum", 2 * k + 1, centre, scale_l * l_c, ANGULAR, 0.02)]
            lines.append(f"{group.name}: p {_g(p)} N s, L {_g(l_c)} N m s")
        k = 2 * len(groups)
        lines.append(f"system: p {_g(total_p)} N s, L {_g(total_l)} N m s")
        markers += [self._arrow(header, "momentum", k, com, scale_p * total_p, LINEAR, 0.035),
                    self._arrow(header, "momentum", k + 1, com, scale_l * total_l, ANGULAR, 0.035),
                    self._text(header, "momentum", k + 2, com + np.asarray(self.config.momentum_text_offset),
                               "\n".join(lines), 0.07)]
        return markers

    # ---- attitude ---------------------------------------------------------------------------------
    def _attitude_markers(self, header, now: float, q: np.ndarray) -> list:
        data = self.data
        bus = pin.updateFramePlacement(self.system.model, data, self.bus.base_frame_id)   # after group_momenta's FK
        markers = self._axes(header, "attitude", 0, bus, 0.9, 1.0, 0.03)
        if self.setpoint is not None:
            x, y, z, w = self.setpoint
            target = pin.SE3(pin.Quaternion(w, x, y, z).toRotationMatrix(), bus.translation)
            markers += self._axes(header, "attitude", 3, target, 1.05, 0.35, 0.045)
            angle = float(np.linalg.norm(pin.log3(target.rotation.T @ bus.rotation)))
            markers.append(self._text(header, "attitude", 6, bus.translation + (0.0, 0.0, 0.75),
                                      f"bus attitude error {angle:.2g} rad (ghost axes: setpoint)", 0.07))
            self.publish(self.config.attitude_setpoint_pose, self._pose_stamped(cv.time_msg(self.types, now), target))
        return markers

    # ---- wheels -----------------------------------------------------------------------------------
    def _wheel_axes(self) -> list[tuple[str, str, np.ndarray]]:
        """(joint, child link frame, unit spin axis in that frame) of each reaction wheel, from the URDF."""
        by_name = {j.name: j for d in robot_descriptions(self.system.config)
                   for j in urdf_joints(d.urdf, d.frame_prefix)}
        return [(name, by_name[name].child, by_name[name].axis) for name in self.system.wheel_joints
                if name in by_name]

    def static_markers(self, now: float):
        """A disc and a stripe per wheel, locked to the wheel's frame (RViz moves them with its tf): published once,
        latched, since only the wheel's frame moves."""
        build = self._build
        markers = []
        for k, (_joint, frame, axis) in enumerate(self.wheels):
            header = cv.header(self.types, 0.0, frame)      # stamp 0: RViz places it with the newest tf of the frame
            xyzw = pin.Quaternion(_z_to(axis)).coeffs().tolist()
            centre = self.config.wheel_indicator_offset * axis
            stripe = centre + _z_to(axis) @ np.array([0.055, 0.0, 0.0])
            markers += [build.marker(header, "wheels", 2 * k, build.CYLINDER, build.pose(centre.tolist(), xyzw),
                                     (0.22, 0.22, 0.02), (0.75, 0.75, 0.8, 0.9), frame_locked=True),
                        build.marker(header, "wheels", 2 * k + 1, build.CUBE, build.pose(stripe.tolist(), xyzw),
                                     (0.11, 0.025, 0.03), (0.9, 0.2, 0.2, 1.0), frame_locked=True)]
        return self.types.new(MARKER_ARRAY, markers=markers)

    def _wheel_labels(self, now: float, v: np.ndarray) -> list:
        labels = []
        for k, (joint, frame, axis) in enumerate(self.wheels):
            rpm = v[self.system.v_index(joint)] * 60.0 / (2.0 * math.pi)
            position = (self.config.wheel_indicator_offset + 0.16) * axis
            labels.append(self._text(cv.header(self.types, 0.0, frame), "wheel_speeds", k, position,
                                     f"{joint}: {rpm:.0f} rpm", 0.045, frame_locked=True))
        return labels

    # ---- marker building ------------------------------------------------------------------------------
    def _arrow(self, header, ns: str, marker_id: int, start: np.ndarray, vector: np.ndarray, rgb, width: float,
               alpha: float = 1.0):
        build = self._build
        if float(np.linalg.norm(vector)) < 2.0 * width:      # too short to read: nothing, not a dot
            return build.marker(header, ns, marker_id, build.ARROW, self._origin, (width, width, width),
                                (0.0, 0.0, 0.0, 0.0), action=build.DELETE)
        points = (build.point(start.tolist()), build.point((start + vector).tolist()))
        return build.marker(header, ns, marker_id, build.ARROW, self._origin, (width, 2.0 * width, 3.0 * width),
                            (*rgb, alpha), points)         # scale: shaft and head diameters, head length

    def _axes(self, header, ns: str, first_id: int, placement: pin.SE3, length: float, alpha: float,
              width: float) -> list:
        return [self._arrow(header, ns, first_id + k, placement.translation, length * placement.rotation[:, k], rgb,
                            width, alpha) for k, rgb in enumerate(AXES)]

    def _text(self, header, ns: str, marker_id: int, position, text: str, height: float, frame_locked=False):
        build = self._build
        # scale.z: letter height; scale.x: the width of a space (RViz 2 uses a ~1 m default when it is 0)
        return build.marker(header, ns, marker_id, build.TEXT, build.pose(np.asarray(position, float).tolist()),
                            (0.4 * height, 0.0, height), (0.9, 0.9, 0.9, 1.0), text=text, frame_locked=frame_locked)

    def _pose_stamped(self, stamp, placement: pin.SE3):
        header = self.types.make("std_msgs/msg/Header", stamp=stamp, frame_id=self.world)
        return self.types.new(POSE_STAMPED, header=header, pose=self._build.pose(
            placement.translation.tolist(), pin.Quaternion(placement.rotation).coeffs().tolist()))


def _z_to(axis: np.ndarray) -> np.ndarray:
    """A rotation taking the z axis onto the unit vector `axis` (a cylinder marker's axis onto the spin axis)."""
    return pin.Quaternion.FromTwoVectors(np.array([0.0, 0.0, 1.0]), axis).toRotationMatrix()


def _g(vector: np.ndarray) -> str:
    """|vector| with two significant digits: labels stay short."""
    return f"{float(np.linalg.norm(vector)):.2g}"
