"""Cartesian approach of a free-floating arm through the generalized Jacobian (seed 004 ch. 5; docs/controllers.md
sec. 1):
resolved-rate control of the end effector towards a goal frame that may move (the grapple fixture of a
tumbling target), the reaction wheels holding the bus.

One update at time t from the model state (q, v) (all twists world axes, linear part at the frame origin):
1. goal pose T_g and twist V_g: a fixed world pose, or a model frame (e.g. ``target/grapple_frame``) times a
   fixed offset, whose twist Pinocchio gives from (q, v) (`getFrameVelocity`, LOCAL_WORLD_ALIGNED, moved to
   the offset point);
2. pose error e = (p_g - p_e, log3(R_g R_e^T)) (m, rad; world axes);
3. desired hand twist V_d = V_g + diag(k_p, k_o) e - V_drift, V_drift the hand motion the servicer's
   momentum causes with the arm at rest (generalized_jacobian.py, mode "held": the bus attitude is held by
   the wheels, the bus translates, the wheels take the angular momentum);
4. joint rates qdot_d = J*^# V_d by damped least squares on the length-scaled J* (damping on as sigma_min
   falls below `singularity_threshold`; sigma_min and lambda are reported), scaled down uniformly if a rate
   exceeds `max_joint_rate`;
5. inner joint-rate loop a* = k_v (qdot_d - qdot), realized on the floating system by the computed torque of
   computed_torque.py (bus, wheels and target eliminated; eq. 2 there) with the wheel torques of the
   quaternion-PD attitude hold (attitude_control.py, with the feed-forward of computed_torque eq. 5).
With ideal rate tracking the error obeys e' = -diag(k_p, k_o) e + (J* J*^# - I) V_d, i.e. first-order
convergence with time constant 1/k away from singularities, and a residual along the damped directions
near one.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.command_checks import all_finite, numeric_vector, require_finite
from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .attitude_control import AttitudeController, AttitudeGains, unit_quaternion, wheel_spin_axes
from .computed_torque import ComputedTorqueStep, FreeFloatingComputedTorque
from .generalized_jacobian import GeneralizedJacobian, damped_pseudo_inverse

WORLD_FRAME = "world"


@dataclass(frozen=True)
class CartesianApproachSettings:
    """Gains and limits (SI). Gains are 1/s (first-order loops); the validated ranges are in
    read_cartesian_approach_settings."""

    end_effector: str
    bus_subtree: str = "servicer"
    position_gain: float = 1.0           # 1/s, k_p
    orientation_gain: float = 1.0        # 1/s, k_o
    rate_gain: float = 20.0              # 1/s, k_v
    length_scale: float = 1.0            # m
    singularity_threshold: float = 0.05  # sigma_min of the length-scaled J* where damping starts
    max_damping: float = 0.05            # lambda at sigma_min = 0
    max_joint_rate: float = 0.5          # rad/s
    attitude_natural_frequency: float = 0.4   # rad/s
    attitude_damping_ratio: float = 1.0


# (minimum, maximum) of each gain: a first-order loop faster than ~1/10 of a 1 kHz control rate is not
# realisable (k dt <= 0.1), and zero or negative gains do not converge.
GAIN_RANGES = {
    "position_gain": (0.0, 100.0), "orientation_gain": (0.0, 100.0), "rate_gain": (0.0, 100.0),
    "attitude_natural_frequency": (0.0, 10.0), "attitude_damping_ratio": (0.0, 10.0),
}


def read_cartesian_approach_settings(reader: ConfigReader) -> CartesianApproachSettings:
    """The `cartesian_approach` section (config/controller.yaml); ConfigError names a bad field."""
    gains = {name: reader.number(name, getattr(CartesianApproachSettings, name), exclusive_minimum=low,
                                 maximum=high) for name, (low, high) in GAIN_RANGES.items()}
    settings = CartesianApproachSettings(
        end_effector=reader.string("end_effector"),
        bus_subtree=reader.string("bus_subtree", "servicer"),
        length_scale=reader.number("length_scale", 1.0, exclusive_minimum=0.0),
        singularity_threshold=reader.number("singularity_threshold", 0.05, exclusive_minimum=0.0, maximum=1.0),
        max_damping=reader.number("max_damping", 0.05, minimum=0.0, maximum=1.0),
        max_joint_rate=reader.number("max_joint_rate", 0.5, exclusive_minimum=0.0),
        **gains)
    reader.reject_unknown()
    return settings


def check_gains(settings: CartesianApproachSettings) -> None:
    """ConfigError naming the first gain outside GAIN_RANGES (for settings built in code)."""
    for name, (low, high) in GAIN_RANGES.items():
        value = getattr(settings, name)
        if not (isinstance(value, (int, float)) and math.isfinite(value) and low < value <= high):
            raise ConfigError(f"cartesian_approach.{name}", f"must be in ({low}, {high}], got {value!r}")


@dataclass(frozen=True)
class CartesianOutput:
    """One update. arm_torque, wheel_torque: N m after limits (arm_joints / wheel_joints order);
    position_error (m), orientation_error (rad): norms of e; sigma_min: dynamic-singularity measure (length-scaled
    J*); damping: lambda used; joint_rate_demand: qdot_d (rad/s); wheel_saturated: wheel torque scaled down."""

    arm_torque: np.ndarray
    wheel_torque: np.ndarray
    position_error: float
    orientation_error: float
    sigma_min: float
    damping: float
    joint_rate_demand: np.ndarray
    wheel_saturated: bool


class CartesianApproachController:
    """Steps 1-5 of the module docstring on a SystemModel with reaction wheels on the bus."""

    def __init__(self, system: SystemModel, settings: CartesianApproachSettings):
        check_gains(settings)
        self.system, self.settings = system, settings
        self.model = system.model
        self.data = self.model.createData()
        self.jacobian = GeneralizedJacobian(system, settings.end_effector, settings.bus_subtree, "held",
                                            settings.length_scale)
        self.arm_v, self.wheel_v = system.arm_v, system.wheel_v
        bus = system.subtree(settings.bus_subtree)
        self.bus_joint = bus.root_joint_id
        first = self.model.joints[self.bus_joint].idx_v
        self._bus_w = np.arange(first + 3, first + 6)
        self.dynamics = FreeFloatingComputedTorque(self.model, self.arm_v, system.arm_effort_limit)
        self._step = ComputedTorqueStep(self.dynamics, self.wheel_v, self._bus_w)
        self._bus_wp = np.array([self.dynamics.passive_index(i) for i in self._bus_w])
        reduced = self.dynamics.reduce(system.neutral(), np.zeros(system.nv))
        inertia = np.linalg.inv(reduced.passive_inverse[np.ix_(self._bus_wp, self._bus_wp)])
        gains = AttitudeGains.from_bandwidth(0.5 * (inertia + inertia.T), settings.attitude_natural_frequency,
                                             settings.attitude_damping_ratio)
        self.attitude = AttitudeController(wheel_spin_axes(self.model, self.bus_joint, system.wheel_joints),
                                           system.wheel_max_torque, system.wheel_max_speed, gains)
        self._weights = np.array([1.0 / settings.length_scale] * 3 + [1.0] * 3)
        self._gains = np.array([settings.position_gain] * 3 + [settings.orientation_gain] * 3)
        self._goal_frame: int | None = None
        self._goal = pin.SE3.Identity()      # the fixed pose, or the offset in the goal frame
        self._has_goal = False

    def set_gains(self, **gains) -> None:
        """Replace gains (names of GAIN_RANGES) at run time; ConfigError naming the first unknown or out-of-range
        one, and nothing changes then."""
        unknown = sorted(set(gains) - set(GAIN_RANGES))
        if unknown:
            raise ConfigError(f"cartesian_approach.{unknown[0]}", f"not a gain (gains: {', '.join(GAIN_RANGES)})")
        settings = dataclasses.replace(self.settings, **gains)
        check_gains(settings)
        self.settings = settings
        self._gains = np.array([settings.position_gain] * 3 + [settings.orientation_gain] * 3)

    # ---- goals ---------------------------------------------------------------------------------
    def set_goal_frame(self, frame: str, offset: pin.SE3 | None = None) -> None:
        """Track model frame `frame` (e.g. the target's grapple frame) times `offset` (its pose in that frame).
        CommandError for an unknown frame."""
        if not isinstance(frame, str) or not self.model.existFrame(frame):
            raise CommandError("goal.frame", f"no frame named {frame!r} in the model")
        self._goal_frame = self.model.getFrameId(frame)
        self._goal = pin.SE3.Identity() if offset is None else offset
        self._has_goal = True

    def set_goal_pose(self, position, orientation_xyzw, frame: str = WORLD_FRAME) -> None:
        """A goal pose (m; unit quaternion frame -> goal) in `frame`: "world" (fixed goal) or a model frame (the
        goal then moves with it). CommandError naming the field for NaN, a non-unit quaternion or an unknown
        frame; nothing changes then."""
        p = numeric_vector(position, 3, "goal.position")
        require_finite((p, "goal.position"))
        quat = unit_quaternion(orientation_xyzw, "goal.orientation")
        pose = pin.SE3(pin.Quaternion(quat[3], *quat[:3]).toRotationMatrix(), p)
        if frame == WORLD_FRAME:
            self._goal_frame, self._goal, self._has_goal = None, pose, True
        else:
            self.set_goal_frame(frame, pose)

    # ---- control step --------------------------------------------------------------------------
    def goal(self, q: np.ndarray, v: np.ndarray) -> tuple[pin.SE3, np.ndarray]:
        """Goal pose (world) and twist (6: linear at the goal origin, angular; world axes) at (q, v)."""
        if self._goal_frame is None:
            return self._goal, np.zeros(6)
        pin.forwardKinematics(self.model, self.data, q, v)
        frame_pose = pin.updateFramePlacement(self.model, self.data, self._goal_frame)
        twist = pin.getFrameVelocity(self.model, self.data, self._goal_frame, pin.LOCAL_WORLD_ALIGNED)
        arm = frame_pose.rotation.dot(self._goal.translation)
        linear = twist.linear + np.cross(twist.angular, arm)
        return frame_pose * self._goal, np.concatenate((linear, twist.angular))

    def update(self, t: float, q, v) -> CartesianOutput:
        """One control step from the full model state. CommandError for a bad state or no goal."""
        if not self._has_goal:
            raise CommandError("goal", "no Cartesian goal set")
        q = numeric_vector(q, self.model.nq, "q")
        v = numeric_vector(v, self.model.nv, "v")
        require_finite((q, "q"), (v, "v"))
        q = pin.normalize(self.model, q)
        goal, goal_twist = self.goal(q, v)
        hand = pin.updateFramePlacement(self.model, self.data, self.jacobian.frame_id) \
            if self._goal_frame is not None else self._hand_pose(q)
        hand = pin.SE3(hand)
        error = np.concatenate((goal.translation - hand.translation,
                                pin.log3(goal.rotation.dot(hand.rotation.T))))
        momentum_map = self.jacobian.servicer_momentum_map(q)
        jstar = self.jacobian.evaluate(q, momentum_map.dot(v), momentum_map)
        demand = goal_twist + self._gains * error - jstar.drift
        inverse, damping, sigma_min = damped_pseudo_inverse(jstar.matrix, self.settings.singularity_threshold,
                                                            self.settings.max_damping, self._weights)
        rates = inverse.dot(demand)
        peak = float(np.abs(rates).max(initial=0.0))
        if peak > self.settings.max_joint_rate:
            rates *= self.settings.max_joint_rate / peak
        acceleration = self.settings.rate_gain * (rates - v[self.arm_v])
        step = self._step
        step.solve(q, v, acceleration)
        pin.forwardKinematics(self.model, self.data, q)
        bus = self.data.oMi[self.bus_joint]
        orientation = pin.Quaternion(bus.rotation).coeffs()
        if self.attitude.setpoint is None:
            self.attitude.set_setpoint(orientation)
        wheel_torque, _, saturated, _ = self.attitude.wheel_command(
            orientation, v[self._bus_w].tolist(), v[self.wheel_v].tolist(), step.cancelling_force())
        arm_torque = self.dynamics.limit(step.torque(wheel_torque))
        if not (all_finite(arm_torque) and all_finite(wheel_torque)):
            raise CommandError("state", "the control law gives non-finite torques at this state")
        return CartesianOutput(arm_torque, wheel_torque, float(np.linalg.norm(error[:3])),
                               float(np.linalg.norm(error[3:])), jstar.sigma_min, damping, rates, saturated)

    def _hand_pose(self, q: np.ndarray) -> pin.SE3:
        pin.forwardKinematics(self.model, self.data, q)
        return pin.updateFramePlacement(self.model, self.data, self.jacobian.frame_id)
