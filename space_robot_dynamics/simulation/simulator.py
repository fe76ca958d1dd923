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

from ..command_checks import all_finite, checked_vector, numeric_vector, require_finite
from ..config_reader import ConfigReader
from ..errors import SimulationDivergedError
from ..index_views import contiguous_index
from ..model.system_model import SystemModel
from .integrators import INTEGRATORS
from .joint_dissipation import JointDissipation, check_explicit_stability
from .reaction_wheels import cut_speeding_wheels
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
        self._dt = settings.dt
        self._rhs = self._aba if self.dissipation is None else self._aba_dissipative
        # Actuator commands travel as one vector: arm joints then wheels.
        self._n_arm = len(system.arm_joints)
        self._n_actuated = self._n_arm + len(system.wheel_joints)
        self._actuated_v = contiguous_index(np.concatenate((system.arm_v, system.wheel_v)))
        self._wheel_v = contiguous_index(system.wheel_v)
        self._lower = -np.concatenate((system.arm_effort_limit, system.wheel_max_torque))
        self._upper = -self._lower
        self._wheel_max_speed = system.wheel_max_speed.tolist()
        self._actuator_work = 0.0
        self._tau_cmd = np.zeros(self.model.nv)
        self._applied = np.zeros(self._n_actuated)
        self._command = np.zeros(self._n_actuated)
        self._no_aux = np.zeros(0)
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
        command = self._checked_command(arm_torque, wheel_torque)
        applied = np.minimum(np.maximum(command, self._lower), self._upper)
        cut_speeding_wheels(applied[self._n_arm:], self.state.v[self._wheel_v].tolist(), self._wheel_max_speed)
        self._tau_cmd[self._actuated_v] = applied     # other entries stay zero (set in __init__)
        self._applied, self._command = applied, command   # saturation flags are worked out in observe()

    def _checked_command(self, arm_torque, wheel_torque) -> np.ndarray:
        """[arm_torque, wheel_torque] as a new float vector, or CommandError naming the field.

        Each part is checked for type and length and copied in; one sum then screens both for NaN/inf, and
        only when it is not finite are the parts checked one by one, for the error message.
        """
        n_arm, n_wheel = self._n_arm, self._n_actuated - self._n_arm
        command = np.zeros(self._n_actuated)
        if arm_torque is not None:
            command[:n_arm] = numeric_vector(arm_torque, n_arm, "arm_torque")
        if wheel_torque is not None:
            command[n_arm:] = numeric_vector(wheel_torque, n_wheel, "wheel_torque")
        if not all_finite(command):
            require_finite((command[:n_arm], "arm_torque"), (command[n_arm:], "wheel_torque"))
        return command

    def step(self, arm_torque=None, wheel_torque=None) -> SimState:
        """Advance one dt with the given torques (see set_command); returns the new state."""
        self.set_command(arm_torque, wheel_torque)
        s = self.state
        if self.dissipation is None:
            q, v, dq = self.integrator.step(self._rhs, s.q, s.v, self._dt)
            y, z = v, self._no_aux
        else:
            q, y, dq = self.integrator.step(self._rhs, s.q, np.concatenate((s.v, s.z)), self._dt)
            v, z = y[:self.model.nv], y[self.model.nv:]
        # Never pass a NaN on: keep the last finite state and say why the step failed.
        if not (all_finite(y) and all_finite(q)):
            raise SimulationDivergedError(s.t, np.flatnonzero(~np.isfinite(v)).tolist(),
                                          np.flatnonzero(~np.isfinite(q)).tolist())
        self._actuator_work += float(self._tau_cmd.dot(dq))
        self.state = SimState(s.t + self._dt, q, v, z, self.layout)
        return self.state

    def _aba(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """vdot at (q, v) under the latched command (no auxiliary states)."""
        return pin.aba(self.model, self.data, q, v, self._tau_cmd)

    def _aba_dissipative(self, q: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ydot = [vdot, dissipated power] at (q, y = [v, dissipated energy]) under the latched command
        plus the joint damping and friction torques."""
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
        return self._applied[:self._n_arm], self._applied[self._n_arm:]

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
            arm_torque=self._applied[:self._n_arm].copy(), wheel_torque=self._applied[self._n_arm:].copy(),
            saturated=self._applied != self._command,
            actuator_work=self._actuator_work,
            dissipated_energy=float(s.aux("dissipated_energy")[0]) if self.dissipation is not None else 0.0,
        )
