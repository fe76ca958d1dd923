"""The stepping loop: validated commands -> actuator limits -> forward dynamics -> integrator.

Forward dynamics is Pinocchio's articulated-body algorithm: M(q) vdot + C(q, v) v + g(q) = tau
(`pinocchio.aba`). Commands are held constant over a step (zero-order hold, as a digital controller).
Energy accounting, so that T(t) - T(0) = actuator_work - dissipated_energy (zero gravity) can be checked:
- `actuator_work` (J): the work of the commanded joint and wheel torques. The torque is constant over a
  step, so its work is tau . dq with dq the step's joint-angle increments (the integrator's own quadrature
  of the rates): no extra state is integrated.
- `dissipated_energy` (J): the energy taken by joint damping and friction, whose torque varies within a
  step; an auxiliary state integrated with the same scheme, present only when dissipation is on.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..command_checks import checked_vector
from ..config_reader import ConfigReader
from ..errors import SimulationDivergedError
from ..model.system_model import SystemModel
from .integrators import INTEGRATORS
from .joint_dissipation import JointDissipation, check_explicit_stability
from .reaction_wheels import saturate_wheel_torque
from .state import AuxLayout, SimState
from .system_momentum import MomentumState, momentum_state


@dataclass(frozen=True)
class SimulationSettings:
    """dt (s), integrator name, and whether the URDF joint damping/friction act (arm joints)."""

    dt: float = 1e-3
    integrator: str = "rk4"
    joint_damping: bool = False
    joint_friction: bool = False
    friction_smoothing_speed: float = 1e-2   # rad/s, width of the tanh Coulomb model


def read_simulation_settings(reader: ConfigReader) -> SimulationSettings:
    settings = SimulationSettings(
        dt=reader.number("dt", 1e-3, exclusive_minimum=0.0, maximum=0.1),
        integrator=reader.string("integrator", "rk4", choices=tuple(INTEGRATORS)),
        joint_damping=reader.boolean("joint_damping", False),
        joint_friction=reader.boolean("joint_friction", False),
        friction_smoothing_speed=reader.number("friction_smoothing_speed", 1e-2, exclusive_minimum=0.0),
    )
    reader.reject_unknown()
    return settings


@dataclass(frozen=True)
class BaseState:
    """Pose of a subtree's base link in the world frame and its twist in the base-link frame."""

    position: np.ndarray          # m, world frame
    orientation_xyzw: np.ndarray  # unit quaternion base -> world, (x, y, z, w)
    linear_velocity: np.ndarray   # m/s, base-link origin, base-link frame
    angular_velocity: np.ndarray  # rad/s, base-link frame


@dataclass(frozen=True)
class Observation:
    t: float
    q: np.ndarray
    v: np.ndarray
    bases: dict                 # subtree name -> BaseState
    momentum: MomentumState
    arm_torque: np.ndarray      # N m applied after limits, arm_joints order
    wheel_torque: np.ndarray    # N m applied after limits, wheel_joints order
    saturated: np.ndarray       # bool, arm joints then wheels: command altered by a limit
    actuator_work: float        # J
    dissipated_energy: float    # J


class Simulator:
    """Free-floating multibody simulation of a `SystemModel`."""

    def __init__(self, system: SystemModel, settings: SimulationSettings = SimulationSettings(),
                 q0: np.ndarray | None = None, v0: np.ndarray | None = None):
        self.system = system
        self.settings = settings
        self.model = system.model
        self.data = self.model.createData()
        self._obs_data = self.model.createData()    # observations never disturb the integrator's data
        self.integrator = INTEGRATORS[settings.integrator](self.model)
        self.dissipation = self._make_dissipation()
        self.layout = AuxLayout()
        if self.dissipation is not None:
            self.layout.add("dissipated_energy", 1)   # _rhs returns its rate right after vdot
        self._actuator_work = 0.0
        self._tau_cmd = np.zeros(self.model.nv)
        self._arm_applied = np.zeros(len(system.arm_joints))
        self._wheel_applied = np.zeros(len(system.wheel_joints))
        self._arm_command = np.zeros(len(system.arm_joints))
        self._wheel_command = np.zeros(len(system.wheel_joints))
        self.state = SimState(0.0, system.neutral(), np.zeros(self.model.nv), np.zeros(self.layout.size),
                              self.layout)
        self.reset(q0, v0)
        if self.dissipation is not None:
            check_explicit_stability(self.model, self.state.q, self.dissipation, settings.dt, settings.integrator,
                                     list(system.arm_joints))

    def _make_dissipation(self) -> JointDissipation | None:
        s = self.settings
        if not (s.joint_damping or s.joint_friction) or len(self.system.arm_v) == 0:
            return None
        idx = self.system.arm_v
        damping = self.model.damping[idx] if s.joint_damping else np.zeros(len(idx))
        friction = self.model.friction[idx] if s.joint_friction else np.zeros(len(idx))
        return JointDissipation(idx, damping, friction, s.friction_smoothing_speed)

    # ---- state ------------------------------------------------------------------------------
    def reset(self, q: np.ndarray | None = None, v: np.ndarray | None = None, t: float = 0.0) -> None:
        q = self.system.neutral() if q is None else checked_vector(q, self.model.nq, "q")
        v = np.zeros(self.model.nv) if v is None else checked_vector(v, self.model.nv, "v")
        q = pin.normalize(self.model, q.copy())
        self._actuator_work = 0.0
        self.state = SimState(float(t), q, v.copy(), np.zeros(self.layout.size), self.layout)

    # ---- stepping ---------------------------------------------------------------------------
    def set_command(self, arm_torque=None, wheel_torque=None) -> None:
        """Validate and latch torques (N m; arm_joints / wheel_joints order; None = zero).

        Raises CommandError (nothing changes) on a wrong length or a NaN/inf. Arm torques are clipped
        to the URDF effort limits; wheel torques to max_torque and cut at max_speed.
        """
        system = self.system
        arm = np.zeros(len(system.arm_joints)) if arm_torque is None else \
            checked_vector(arm_torque, len(system.arm_joints), "arm_torque")
        wheel = np.zeros(len(system.wheel_joints)) if wheel_torque is None else \
            checked_vector(wheel_torque, len(system.wheel_joints), "wheel_torque")
        arm_applied = np.minimum(np.maximum(arm, -system.arm_effort_limit), system.arm_effort_limit)
        wheel_applied = saturate_wheel_torque(wheel, self.state.v[system.wheel_v], system.wheel_max_torque,
                                              system.wheel_max_speed)
        self._tau_cmd[system.arm_v] = arm_applied     # other entries stay zero (set in __init__)
        self._tau_cmd[system.wheel_v] = wheel_applied
        self._arm_applied, self._wheel_applied = arm_applied, wheel_applied
        self._arm_command, self._wheel_command = arm, wheel   # saturation flags are worked out in observe()

    def step(self, arm_torque=None, wheel_torque=None) -> SimState:
        """Advance one dt with the given torques (see set_command); returns the new state."""
        self.set_command(arm_torque, wheel_torque)
        s, nv = self.state, self.model.nv
        y0 = s.v if self.dissipation is None else np.concatenate((s.v, s.z))
        q, y, dq = self.integrator.step(self._rhs, s.q, y0, self.settings.dt)
        if not (np.isfinite(y).all() and np.isfinite(q).all()):
            # Never pass a NaN on: keep the last finite state and say why the step failed.
            raise SimulationDivergedError(s.t, np.flatnonzero(~np.isfinite(y[:nv])).tolist(),
                                          np.flatnonzero(~np.isfinite(q)).tolist())
        self._actuator_work += float(self._tau_cmd @ dq)
        self.state = SimState(s.t + self.settings.dt, q, y[:nv], y[nv:], self.layout)
        return self.state

    def _rhs(self, q: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ydot = vdot at (q, y = v) under the latched command; with dissipation on, y = [v, dissipated
        energy] and ydot = [vdot, dissipated power]."""
        if self.dissipation is None:
            return pin.aba(self.model, self.data, q, y, self._tau_cmd)
        nv, idx = self.model.nv, self.dissipation.v_indices
        v = y[:nv]
        tau_d = self.dissipation.torque(v)
        tau = self._tau_cmd.copy()
        tau[idx] += tau_d
        ydot = np.empty(nv + 1)
        ydot[:nv] = pin.aba(self.model, self.data, q, v, tau)
        ydot[nv] = -(tau_d @ v[idx])
        return ydot

    # ---- outputs ----------------------------------------------------------------------------
    @property
    def applied_torques(self) -> tuple[np.ndarray, np.ndarray]:
        """(arm, wheel) torques in N m applied over the last step, after limits; cheap, unlike observe()."""
        return self._arm_applied, self._wheel_applied

    def observe(self) -> Observation:
        """Everything users plot or publish, computed from the current state."""
        s, model, data = self.state, self.model, self._obs_data
        pin.forwardKinematics(model, data, s.q, s.v)
        bases = {}
        for subtree in self.system.subtrees:
            frame = subtree.base_frame_id
            placement = pin.updateFramePlacement(model, data, frame)
            twist = pin.getFrameVelocity(model, data, frame, pin.ReferenceFrame.LOCAL)
            bases[subtree.name] = BaseState(placement.translation.copy(),
                                            pin.Quaternion(placement.rotation).coeffs().copy(),
                                            twist.linear.copy(), twist.angular.copy())
        return Observation(
            t=s.t, q=s.q.copy(), v=s.v.copy(), bases=bases,
            momentum=momentum_state(model, data, s.q, s.v),
            arm_torque=self._arm_applied.copy(), wheel_torque=self._wheel_applied.copy(),
            saturated=np.concatenate([self._arm_applied != self._arm_command,
                                      self._wheel_applied != self._wheel_command]),
            actuator_work=self._actuator_work,
            dissipated_energy=float(s.aux("dissipated_energy")[0]) if self.dissipation is not None else 0.0,
        )
