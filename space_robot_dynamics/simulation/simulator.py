"""The stepping loop: validated commands -> actuator limits -> forward dynamics -> integrator.

Forward dynamics is Pinocchio's articulated-body algorithm: M(q) vdot + C(q, v) v + g(q) = tau + sum_j J_j^T f_j
(`pinocchio.aba`, with the external wrenches f_j as its `fext` when any is set: external_wrenches.py).
Commands are held constant over a step (zero-order hold, as a digital controller); so are external wrenches,
in the frame each is expressed in.
Energy accounting, so that T(t) - T(0) = actuator_work + external_work - dissipated_energy (zero gravity) can
be checked:
- `actuator_work` (J): the work of the commanded joint and wheel torques. The torque is constant over a
  step, so its work is tau . dq with dq the step's joint-angle increments (the integrator's own quadrature
  of the rates): no extra state is integrated.
- `dissipated_energy` (J): the energy taken by joint damping and friction, whose torque varies within a
  step; an auxiliary state integrated with the same scheme, present only when dissipation is on.
- `external_work` (J): the work of the external wrenches, whose generalized force varies with q within a
  step; an auxiliary state integrated with the same scheme, present from the first set_external_wrench on.
Without dissipation and external wrenches the step integrates (q, v) alone (the benchmarked default path).

Flexible links and elastic joints (docs/flexibility.md): the model is the expanded one (SystemModel.flexibility);
their elastic and damping generalized forces (eqs. 10, 12, elastic_forces.py) join the command at every
right-hand side, an arm command on an elastic joint acts on its rotor (tau_m / N), the dampers' energy is part of
`dissipated_energy` and the springs' potential energy is Observation.elastic_energy, so that
T + V - (T0 + V0) = actuator_work + external_work - dissipated_energy. With flexible links the tip-chain
coordinates depend on the modal ones (eq. 14): the forward dynamics is then the reduced one of eq. 16
(reduced_dynamics.py) instead of aba, and the dependent entries are re-projected after each step. At start-up
flexible_stability.py checks that dt resolves the stiffest mode.

Contacts (docs/contact.md): a model with a `grasp` section has a gripper (`command_gripper`), one with
`contact_surfaces` a surface contact mode (`set_contact_surface`). Events act at step boundaries: a grasp or a
touchdown is a plastic impulse (Pinocchio's impulseDynamics) that changes v at that instant; while a constraint is
held (the grasp's 6D loop, a surface's normal) the forward dynamics is the constrained one (loop_closure.py,
surface_contact.py) in place of aba or eq. 16. The impulses' energy losses are part of `dissipated_energy`; the
constraint forces are internal, so momentum stays conserved.

Orbit (docs/orbit.md): with an OrbitConfig the state is integrated in the free-falling, non-rotating frame W of the
reference orbit (orbital_environment.py): every body feels the tidal force and gravity-gradient couple
(orbit/tidal_wrenches.py) as part of fext, the reference orbit and the external impulses are auxiliary states, and
the constructor's and reset()'s (q, v), observe()'s q, v and bases are in the LVLH frame; `state` stays in W.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..command_checks import all_finite, checked_vector, numeric_vector, require_finite
from ..config_reader import ConfigReader
from ..contact.contact_events import GRASP, RELEASE, ContactEvent
from ..contact.explicit_constraints import ExplicitConstraintDynamics
from ..contact.grasp import Grasp
from ..contact.loop_closure import LoopClosure
from ..contact.surface_contact import SurfaceContact
from ..contact.surface_mode import SurfaceMode
from ..errors import CommandError, SimulationDivergedError
from ..index_views import contiguous_index
from ..model.system_model import SystemModel
from ..orbit.orbit_config import OrbitConfig
from .actuator_faults import ActuatorFaults
from .compiled_flexible_step import compiled_flexible_step
from .elastic_forces import ElasticForces
from .external_wrenches import ExternalWrench, ExternalWrenches
from .flexible_stability import check_flexible_stability
from .integrators import INTEGRATORS
from .joint_dissipation import JointDissipation, check_explicit_stability
from .momentum_balance import BodyMomenta, MomentumBalance
from .orbital_environment import AUX_BLOCKS, OrbitalEnvironment, OrbitState
from .reaction_wheels import cut_speeding_wheels, wheel_spin_inertia
from .reduced_dynamics import ReducedForwardDynamics
from .state import AuxLayout, SimState
from .system_momentum import MomentumState, momentum_about_point, momentum_state


@dataclass(frozen=True)
class SimulationSettings:
    """dt (s), integrator name, and whether the URDF joint damping/friction act (arm joints)."""

    dt: float = 1e-3
    integrator: str = "rk4"
    joint_damping: bool = False
    joint_friction: bool = False
    friction_smoothing_speed: float = 1e-2   # rad/s, width of the tanh Coulomb model
    flexible_step: str = "compiled"          # "compiled" (when built and applicable) or "python" (module docstring)


FLEXIBLE_STEPS = ("compiled", "python")


def read_simulation_settings(reader: ConfigReader) -> SimulationSettings:
    settings = SimulationSettings(
        dt=reader.number("dt", 1e-3, exclusive_minimum=0.0, maximum=0.1),
        integrator=reader.string("integrator", "rk4", choices=tuple(INTEGRATORS)),
        joint_damping=reader.boolean("joint_damping", False),
        joint_friction=reader.boolean("joint_friction", False),
        friction_smoothing_speed=reader.number("friction_smoothing_speed", 1e-2, exclusive_minimum=0.0),
        flexible_step=reader.string("flexible_step", "compiled", choices=FLEXIBLE_STEPS),
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
class FlexibleState:
    """The `flexible_modes` readout (Flexibility.readout, docs/flexibility.md sec. 7): per name, position, velocity
    and effort (modal coordinates: m or rad, m/s or rad/s, N or N m; motor and deflection: rad, rad/s, N m)."""

    names: tuple
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray


@dataclass(frozen=True)
class Observation:
    t: float
    q: np.ndarray
    v: np.ndarray
    bases: dict                 # subtree name -> BaseState
    momentum: MomentumState     # world frame; in orbit the free-falling frame W's (orbit.* has the inertial one)
    arm_torque: np.ndarray      # N m applied after limits, arm_joints order
    wheel_torque: np.ndarray    # N m applied after limits, wheel_joints order
    saturated: np.ndarray       # bool, arm joints then wheels: command altered by a limit
    actuator_work: float        # J
    dissipated_energy: float    # J (joint damping and friction, modal and elastic-joint dampers, contact impulses)
    external_work: float = 0.0  # J, of the external wrenches
    elastic_energy: float = 0.0     # J, potential energy of the modal and joint springs (flexibility.md eqs. 10, 12)
    flexible: FlexibleState | None = None     # None for a rigid model
    contact: ContactState | None = None       # None for a model without a grasp or contact surfaces
    orbit: OrbitState | None = None           # None in free space; in orbit q, v and bases are in LVLH


@dataclass(frozen=True)
class ContactState:
    """The contacts at one instant (docs/contact.md). mode: "free", "grasp" or "surface".
    gripper_closed: the gripper's state; holding: the grasp holds the target (closed on nothing: False).
    grasp_time (s): when the grasp now holding closed (None). force: the multipliers of the constraint held, from
    the last step's first stage (the grasp: the wrench the target exerts on the hand, [N, N m] in the end-effector
    frame about its origin, 6; a surface: the normal force on the robot's point, N, 1); None when free.
    peak_force (N), peak_torque (N m): largest grasp force and torque since the grasp closed (a surface contact:
    the largest normal force since touchdown, torque 0). drift_position (m), drift_angle (rad): the held grasp's
    pose error |e_p| (loop_closure.py eq. 1), or the surface's |Phi|; 0 when free. surface: the armed surface
    ("" none). events: how many contact events so far (Simulator.contact_events)."""

    mode: str
    gripper_closed: bool
    holding: bool
    grasp_time: float | None
    force: np.ndarray | None
    peak_force: float
    peak_torque: float
    drift_position: float
    drift_angle: float
    surface: str
    events: int


class Simulator:
    """Free-floating multibody simulation of a `SystemModel`."""

    def __init__(self, system: SystemModel, settings: SimulationSettings = SimulationSettings(),
                 q0: np.ndarray | None = None, v0: np.ndarray | None = None, orbit: OrbitConfig | None = None):
        self.system = system
        self.settings = settings
        self.model = system.model
        self.data = self.model.createData()
        self._obs_data = self.model.createData()    # observations never disturb the integrator's data
        self.integrator = INTEGRATORS[settings.integrator](self.model)
        self.dissipation = self._make_dissipation()
        self.flexibility = system.flexibility
        self.elastic = None if self.flexibility is None else ElasticForces(self.flexibility)
        coordinates = system.coordinates
        self._reduced = None if coordinates is None or coordinates.trivial else \
            ReducedForwardDynamics(self.model, coordinates)
        self.layout = AuxLayout()
        if self.dissipation is not None or (self.elastic is not None and self.elastic.damped):
            self.layout.add("dissipated_energy", 1)
        self.orbit = None if orbit is None else OrbitalEnvironment(system, orbit)
        if self.orbit is not None:          # gravity does work from the start; then the orbit's blocks
            self.layout.add("external_work", 1)
            for name, size in AUX_BLOCKS:
                self.layout.add(name, size)
        self._wrenches = ExternalWrenches(self.model)     # set and cleared through the methods below only
        self._dt = settings.dt
        self._setup_contacts()
        self._select_rhs()
        self._compiled, self.step_backend_reason = compiled_flexible_step(system, settings, self.dissipation)
        if self.orbit is not None and self._compiled is not None:
            self.step_backend_reason = "in orbit (docs/orbit.md sec. 11: the compiled step has no orbit yet)"
        # Actuator commands travel as one vector: arm joints then wheels.
        self._n_arm = len(system.arm_joints)
        self._n_actuated = self._n_arm + len(system.wheel_joints)
        arm_v, self._actuation_gain = system.arm_v, None
        if self.flexibility is not None:      # an elastic joint's command drives its rotor: tau_phi = tau_m / N
            where = [self.flexibility.actuation(n, int(v)) for n, v in zip(system.arm_joints, system.arm_v)]
            arm_v = np.array([w[0] for w in where], dtype=int)
            gains = np.concatenate(([w[1] for w in where], np.ones(len(system.wheel_v))))
            self._actuation_gain = gains if np.any(gains != 1.0) else None
            arm_rows = {n: k for k, n in enumerate(system.arm_joints)}
            self._motor_rows = [arm_rows.get(j.joint.name) for j in self.flexibility.joints]
        self._actuated_v = contiguous_index(np.concatenate((arm_v, system.wheel_v)))
        self._wheel_v = contiguous_index(system.wheel_v)
        self._lower = -np.concatenate((system.arm_effort_limit, system.wheel_max_torque))
        self._upper = -self._lower
        self._nominal_lower, self._nominal_upper = self._lower, self._upper
        self.actuator_faults = ActuatorFaults()       # failed drives (actuator_faults.py): none at the start
        self._wheel_max_speed = system.wheel_max_speed.tolist()
        self._actuator_work = 0.0
        self._tau_cmd = np.zeros(self.model.nv)
        self._applied = np.zeros(self._n_actuated)
        self._command = np.zeros(self._n_actuated)
        self._no_aux = np.zeros(0)
        self.state = SimState(0.0, system.neutral(), np.zeros(self.model.nv), np.zeros(self.layout.size),
                              self.layout)
        self.reset(q0, v0)
        if self.flexibility is not None:      # the expanded model's check, with the joint dissipation in it
            check_flexible_stability(system, self.state.q, settings.dt, settings.integrator, self.dissipation)
        elif self.dissipation is not None:
            check_explicit_stability(self.model, self.state.q, self.dissipation, settings.dt, settings.integrator,
                                     list(system.arm_joints))

    def _setup_contacts(self) -> None:
        """The gripper and the surface contacts of the model, if it declares them (docs/contact.md)."""
        system = self.system
        self.grasp: Grasp | None = None
        self.surface_mode: SurfaceMode | None = None
        self._active = None                  # the constraint held now: a LoopClosure or a SurfaceContact
        self._events: list[ContactEvent] = []
        self._impact_loss = 0.0              # J, kinetic energy the contact impulses took
        self._first_stage = False
        if system.grasp is None and not system.contact_surfaces:
            return
        explicit = ExplicitConstraintDynamics(self.model, system.coordinates)
        columns = [np.array([v for name in subtree.joint_names for v in range(*system.v_slice(name).indices(
            self.model.nv))], dtype=int) for subtree in system.subtrees]
        if system.grasp is not None:
            self.grasp = Grasp(self.model, system.grasp, explicit, columns)
        if system.contact_surfaces:
            surfaces = {name: SurfaceContact(self.model, site.config, site.surface_frame, site.contact_frame, explicit)
                        for name, site in system.contact_surfaces.items()}
            self.surface_mode = SurfaceMode(self.model, surfaces, columns)

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
        """Start again from (q, v) at time t (s): the world frame's, LVLH in orbit (the reference orbit then placed
        at t; external work and impulses from zero)."""
        q = self.system.neutral() if q is None else checked_vector(q, self.model.nq, "q")
        v = np.zeros(self.model.nv) if v is None else checked_vector(v, self.model.nv, "v")
        q, v = pin.normalize(self.model, q.copy()), v.copy()
        if self._reduced is not None:         # the tip chains follow the modal coordinates (eq. 14)
            self.system.coordinates.project(q, v)
        self._actuator_work = 0.0
        z = np.zeros(self.layout.size)
        if self.orbit is not None:
            reference = self.orbit.reference_state(float(t))
            z[self.layout["reference_orbit"]] = reference
            q, v = self.orbit.transform.from_lvlh(q, v, self.orbit.lvlh(reference))
        self.state = SimState(float(t), q, v, z, self.layout)
        self._momentum0 = self._inertial_momentum()
        if getattr(self, "_active", None) is not None or getattr(self, "grasp", None) is not None \
                or getattr(self, "surface_mode", None) is not None:     # contacts open (not yet made in __init__)
            for part in (self.grasp, self.surface_mode):
                if part is not None:
                    part.reset()
            self._active = None
            self._impact_loss = 0.0
            self._select_rhs()

    # ---- external wrenches --------------------------------------------------------------------
    def set_external_wrench(self, frame: str, force=None, torque=None, expressed_in: str = "world", point=None,
                            label: str | None = None) -> ExternalWrench:
        """Apply a wrench to the body that `frame` (a link, joint or frame name) is attached to, from the next
        step on, until cleared or replaced (reset() keeps it).

        force (N) acts at `point` (m, in `frame`'s coordinates, a point fixed on the body; default its origin);
        torque (N m) is a couple. Both are 3-vectors (None = zero) in world axes (expressed_in="world": they keep
        their direction) or in `frame`'s axes ("local": they turn with the body). A wrench replaces the one with
        the same `label` (default: the frame name). Bad input raises CommandError naming the field and changes
        nothing. Its work is in Observation.external_work. See external_wrenches.py for the conversion to
        Pinocchio's fext.
        """
        wrench = self._wrenches.set(frame, force, torque, expressed_in, point, label)
        if "external_work" not in self.layout:       # free space: the wrenches' work and impulse from now on
            self.layout = self.layout.extended("external_work", 1).extended("external_impulse", 6)
            s = self.state
            self.state = SimState(s.t, s.q, s.v, np.append(s.z, np.zeros(7)), self.layout)
            self._select_rhs()
        return wrench

    def clear_external_wrench(self, label: str | None = None) -> None:
        """Remove the wrench with that label (default label: the frame name), or all of them (None)."""
        self._wrenches.clear(label)

    @property
    def external_wrenches(self) -> dict[str, ExternalWrench]:
        """The wrenches acting, label -> ExternalWrench, in the order they were set (a copy)."""
        return self._wrenches.wrenches

    # ---- base thrusters ------------------------------------------------------------------------
    THRUSTERS = "base_thrusters"       # the label of their external wrench

    def command_thrusters(self, force=None, torque=None) -> None:
        """The base thrusters' wrench from the next step on (model/base_thrusters.py): force (N, through the base
        link's origin) and couple torque (N m), both in the base link's axes, None = zero; held until the next
        command. CommandError naming the field (and nothing changes) without thrusters, for a non-finite or
        misshapen vector, or beyond the model's limits. All zero removes the wrench."""
        thrusters = self.system.base_thrusters
        if thrusters is None:
            raise CommandError("base_thrusters", "the model has no base thrusters: give it a `base_thrusters` "
                                                 "section (model/base_thrusters.py)")
        force, torque = thrusters.check(np.zeros(3) if force is None else force,
                                        np.zeros(3) if torque is None else torque)
        if not (force.any() or torque.any()):
            if self.THRUSTERS in self._wrenches:
                self._wrenches.clear(self.THRUSTERS)
            return
        if self.THRUSTERS in self._wrenches:       # a new command in place: checked above, no look-ups again
            self._wrenches.replace(self.THRUSTERS, force, torque)
        else:
            self.set_external_wrench(thrusters.base_link, force, torque, expressed_in="local", label=self.THRUSTERS)

    # ---- contacts -------------------------------------------------------------------------------
    def command_gripper(self, closed: bool) -> None:
        """Close (True) or open (False) the gripper from the next step on (grasp.py has what each does).
        CommandError when the model has no grasp or `closed` is not a boolean."""
        if self.grasp is None:
            raise CommandError("gripper", "the model has no gripper to command: give it a `grasp` section "
                                          "(docs/contact.md)")
        if not isinstance(closed, (bool, np.bool_)):
            raise CommandError("gripper", f"must be true (close) or false (open), got {closed!r}")
        self.grasp.command(bool(closed))

    def set_contact_surface(self, name: str | None) -> None:
        """Arm the surface contact mode on the model's surface `name` (None: disarm; a contact held ends).
        CommandError for a surface the model does not have."""
        surfaces = self.surface_mode.surfaces if self.surface_mode is not None else {}
        if name is not None and name not in surfaces:
            raise CommandError("contact_surface", f"no surface {name!r} in the model (have {sorted(surfaces)})")
        if self.surface_mode is None:
            return
        event = self.surface_mode.arm(name, self.state.t)
        if event is not None:
            self._record(event)
            if not self._holding():
                self._activate(None)

    @property
    def contact_events(self) -> tuple[ContactEvent, ...]:
        """Every contact event so far, in order (contact_events.py)."""
        return tuple(self._events)

    @property
    def contact_event_count(self) -> int:
        """len(contact_events), without the copy."""
        return len(self._events)

    def contact_state(self) -> ContactState | None:
        """The contacts now (ContactState); None for a model without a grasp or contact surfaces."""
        grasp, surface = self.grasp, self.surface_mode
        if grasp is None and surface is None:
            return None
        s = self.state
        drift_position = drift_angle = 0.0
        force, peak_force, peak_torque, mode = None, 0.0, 0.0, "free"
        if grasp is not None and grasp.holding:
            mode, force = "grasp", grasp.last_force.copy()
            peak_force, peak_torque = grasp.peak_force, grasp.peak_torque
            error_p, _ = grasp.loop.errors(self._obs_data, s.q)
            drift_position, drift_angle = float(np.linalg.norm(error_p[:3])), float(np.linalg.norm(error_p[3:]))
        elif surface is not None and surface.in_contact:
            mode, force, peak_force = "surface", surface.last_force.copy(), surface.peak_normal_force
            drift_position = abs(surface.armed.distance(self._obs_data, s.q, s.v)[0])
        return ContactState(mode, grasp is not None and grasp.closed, grasp is not None and grasp.holding,
                            grasp.grasp_time if grasp is not None and grasp.holding else None, force, peak_force,
                            peak_torque, drift_position, drift_angle,
                            surface.armed.config.name if surface is not None and surface.armed is not None else "",
                            len(self._events))

    def constraint_force(self) -> np.ndarray | None:
        """The multipliers of the constraint held (as ContactState.force) evaluated at the current state under the
        command applied over the last step (as joint_states' effort); None when no constraint is held."""
        if self._active is None:
            return None
        s = self.state
        # the constraint's forward dynamics alone (the right-hand side without its auxiliary rates, which nobody reads
        # here): the same generalized forces as _held_rhs / _constrained_rhs
        tau, _power, fext = self._constrained_forces(s.q, s.v, np.concatenate((s.v, s.z)))
        self._active.acceleration(self.data, s.q, s.v, tau, fext)
        return self._active.force.copy()

    def contact_wrench(self) -> tuple[str, np.ndarray, np.ndarray]:
        """(frame, force N, torque N m) of the contact now, about the frame's origin in its axes: while the grasp
        holds, the wrench the target exerts on the hand in the end-effector frame (constraint_force); in surface
        contact, the normal force on the robot's point in its contact frame; zero otherwise (the grasp's
        end-effector frame, or the first surface's contact frame)."""
        force = self.constraint_force()
        if self._holding():
            return self.system.grasp.config.end_effector_frame, force[:3], force[3:]
        surface = self.surface_mode
        if surface is not None and surface.in_contact:
            contact = surface.armed
            data = self._obs_data
            pin.forwardKinematics(self.model, data, self.state.q)
            _phi, normal, _point = contact.geometry(data)
            rotation = (data.oMi[contact.contact_joint] * contact.contact.placement).rotation
            return contact.config.contact_frame, rotation.T @ (force[0] * normal), np.zeros(3)
        frame = self.system.grasp.config.end_effector_frame if self.grasp is not None else \
            next(iter(self.system.contact_surfaces.values())).config.contact_frame
        return frame, np.zeros(3), np.zeros(3)

    def _holding(self) -> bool:
        return self.grasp is not None and self.grasp.holding

    def _record(self, event: ContactEvent) -> None:
        self._events.append(event)
        self._impact_loss += event.energy_loss

    def _activate(self, constraint) -> None:
        self._active = constraint
        self._select_rhs()

    def _contact_step_start(self, s: SimState) -> SimState:
        """Gripper commands and the unilateral check of a surface contact, at the start of a step."""
        v = s.v
        if self.grasp is not None:
            v, event = self.grasp.at_step_start(s.t, s.q, v)
            if event is not None:
                self._record(event)
                if event.kind == GRASP:
                    if self.surface_mode is not None and self.surface_mode.in_contact:
                        self._record(self.surface_mode.separate(s.t, "the grasp closed"))
                    self._activate(self.grasp.loop)
                elif event.kind == RELEASE:
                    self._activate(None)
        surface = self.surface_mode
        if surface is not None and surface.in_contact and not self._holding():
            self._rhs(s.q, np.concatenate((v, s.z)) if not self._aux_free else v)
            if surface.armed.force[0] < 0.0:       # the surface would have to pull: the point leaves it
                self._record(surface.separate(s.t, f"normal force {surface.armed.force[0]:.4g} N < 0 under "
                                                   "this step's command"))
                self._activate(None)
        return s if v is s.v else SimState(s.t, s.q, v, s.z, s.layout)

    def _contact_step_end(self, s: SimState) -> SimState:
        """The multipliers of the step's first stage, and a touchdown on an armed surface, at the end of a step."""
        if self._active is not None:
            part = self.grasp if self._holding() else self.surface_mode
            part.record_force(self._stage_force)
        surface = self.surface_mode
        if surface is None or surface.armed is None or surface.in_contact or self._holding():
            return s
        v, event = surface.touchdown(s.t, s.q, s.v)
        if event is None:
            return s
        self._record(event)
        self._activate(surface.armed)
        return SimState(s.t, s.q, v, s.z, s.layout)

    def _select_rhs(self) -> None:
        """The right-hand side for the auxiliary states present: plain aba when there are none; the constrained
        dynamics while a contact is held."""
        layout, nv = self.layout, self.model.nv
        self._aux_free = layout.size == 0
        if getattr(self, "_active", None) is not None:
            # a rigid model without auxiliary states (no dissipation, no external wrench): the latched command alone
            self._rhs = self._held_rhs if self._aux_free and self.elastic is None else self._constrained_rhs
        elif self.flexibility is not None or getattr(self, "orbit", None) is not None:
            self._rhs = self._flexible_rhs
        else:
            self._rhs = self._aba if self._aux_free else self._aba_aux
        # positions in ydot = [vdot, zdot] of the two rates _aba_aux writes
        self._dissipated_rate = nv + layout["dissipated_energy"].start if "dissipated_energy" in layout else None
        self._external_rate = nv + layout["external_work"].start if "external_work" in layout else None
        self._impulse_rate = slice(nv + layout["external_impulse"].start, nv + layout["external_impulse"].stop) \
            if "external_impulse" in layout else None
        self._orbit_rates = slice(nv + layout["reference_orbit"].start, nv + layout["frame_impulse"].stop) \
            if "reference_orbit" in layout else None

    # ---- stepping ---------------------------------------------------------------------------
    def set_command(self, arm_torque=None, wheel_torque=None) -> None:
        """Validate and latch torques (N m; arm_joints / wheel_joints order; None = zero).

        Raises CommandError (nothing changes) on a wrong length or a NaN/inf. Arm torques are clipped
        to the URDF effort limits; wheel torques to max_torque and cut at max_speed.
        """
        command = self._checked_command(arm_torque, wheel_torque)
        applied = np.minimum(np.maximum(command, self._lower), self._upper)
        cut_speeding_wheels(applied[self._n_arm:], self.state.v[self._wheel_v].tolist(), self._wheel_max_speed)
        if self.actuator_faults.failed:      # a dict's truth: no method call on the step's path
            self.actuator_faults.brake(applied, self.state.v, self._dt)
        # other entries stay zero (set in __init__)
        self._tau_cmd[self._actuated_v] = applied if self._actuation_gain is None else applied * self._actuation_gain
        self._applied, self._command = applied, command   # saturation flags are worked out in observe()

    def fail_actuator(self, joint: str, kind: str, torque: float | None = None) -> None:
        """From now on the drive of `joint` (an arm joint or a reaction wheel) is failed as `kind`: "lost" (no
        torque), "halved" (half its torque limit) or "stuck" (a wheel's seized bearing, whose friction of at most
        `torque` N m brakes it to the bus's rate and holds it): actuator_faults.py. CommandError naming the joint
        when it is no actuated joint, or "stuck" is asked of an arm joint or without a torque > 0."""
        actuated = list(self.system.arm_joints) + list(self.system.wheel_joints)
        if joint not in actuated:
            raise CommandError("joint", f"{joint!r} is not an actuated joint (arm joints and wheels: {actuated})")
        index = actuated.index(joint)
        if kind == "stuck":
            if joint not in self.system.wheel_joints or not (torque is not None and torque > 0.0):
                raise CommandError("torque", "a seized bearing is a reaction wheel's, with its friction torque > 0 "
                                             f"(N m); got {joint!r}, {torque!r}")
            spin = wheel_spin_inertia(self.system)[list(self.system.wheel_joints).index(joint)]
            self.actuator_faults.fail(index, kind, self.system.v_index(joint), spin, torque)
        else:
            self.actuator_faults.fail(index, kind)
        self._lower, self._upper = self.actuator_faults.limits(self._nominal_lower, self._nominal_upper)

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
        contacts = self.grasp is not None or self.surface_mode is not None
        if contacts:
            s = self.state = self._contact_step_start(s)
            self._first_stage = self._active is not None
        if self._compiled_step_applies():        # the dependent coordinates come projected (eq. 14)
            self._sync_compiled(s.q)
            q, y, dq, finite = self._compiled.step(self._tau_cmd, s.q, s.v, s.z, self._dt, self._dissipated_rate)
            v, z = (y, self._no_aux) if self._aux_free else (y[:self.model.nv], y[self.model.nv:])
            if self._active is not None:
                self._stage_force = self._compiled.stage_force
                self._first_stage = False
        else:
            if self._aux_free:
                q, v, dq = self.integrator.step(self._rhs, s.q, s.v, self._dt)
                y, z = v, self._no_aux
            else:
                q, y, dq = self.integrator.step(self._rhs, s.q, np.concatenate((s.v, s.z)), self._dt)
                v, z = y[:self.model.nv], y[self.model.nv:]
            if self._reduced is not None:         # against round-off: the tip chains exactly on eq. 14
                self.system.coordinates.project(q, v)
            finite = all_finite(y) and all_finite(q)
        # Never pass a NaN on: keep the last finite state and say why the step failed.
        if not finite:
            raise SimulationDivergedError(s.t, np.flatnonzero(~np.isfinite(v)).tolist(),
                                          np.flatnonzero(~np.isfinite(q)).tolist())
        self._actuator_work += float(self._tau_cmd.dot(dq))
        self.state = SimState(s.t + self._dt, q, v, z, self.layout)
        if contacts:
            self.state = self._contact_step_end(self.state)
        return self.state

    def _aba(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """vdot at (q, v) under the latched command (no auxiliary states)."""
        return pin.aba(self.model, self.data, q, v, self._tau_cmd)

    def _aba_aux(self, q: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ydot = [vdot, zdot] at (q, y = [v, z]): vdot under the latched command, the joint damping and friction
        torques (if on) and the external wrenches (if any); zdot the dissipated power and the external wrenches'
        power, at the places _select_rhs found."""
        nv = self.model.nv
        v = y[:nv]
        tau = self._tau_cmd
        ydot = np.empty(len(y))
        if self.dissipation is not None:
            idx = self.dissipation.v_indices
            tau_d = self.dissipation.torque(v)
            tau = tau.copy()
            tau[idx] += tau_d
            ydot[self._dissipated_rate] = -(tau_d @ v[idx])
        wrenches = self._wrenches
        if len(wrenches):
            ydot[:nv] = pin.aba(self.model, self.data, q, v, tau, wrenches.joint_forces(q))
            ydot[self._external_rate] = wrenches.power(self.data)   # aba left the joint velocities at (q, v)
            self._impulse_rates(q, ydot)
        else:
            ydot[:nv] = pin.aba(self.model, self.data, q, v, tau)
            if self._external_rate is not None:
                ydot[self._external_rate] = 0.0
                ydot[self._impulse_rate] = 0.0
        return ydot

    def _impulse_rates(self, q: np.ndarray, ydot: np.ndarray) -> None:
        """Free space: the external wrenches' resultant force and moment about the world origin at q, the rate of
        `external_impulse`."""
        force, moment = self._wrenches.resultant(q)
        ydot[self._impulse_rate][:3] = force
        ydot[self._impulse_rate][3:] = moment

    def _flexible_rhs(self, q: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ydot at (q, y = [v, z]) for an expanded model: the latched command plus the elastic and damping forces
        (eqs. 10, 12) and the joint dissipation (if on), the external wrenches (if any); aba, or the reduced
        dynamics of eq. 16 with flexible links; zdot the dissipated and the external power."""
        v = y[:self.model.nv]
        tau, power, fext = self._generalized_forces(q, v)
        if self._orbit_rates is not None:
            tau += self._orbit_forces(q, y)
        if self._reduced is not None:
            acceleration = self._reduced(self.data, q, v, tau, fext)
        elif fext is None:
            acceleration = pin.aba(self.model, self.data, q, v, tau)
        else:
            acceleration = pin.aba(self.model, self.data, q, v, tau, fext)
        return self._with_rates(acceleration, q, y, power, fext)

    def _generalized_forces(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, float, object]:
        """(tau, dissipated power, fext) at (q, v): the latched command plus the elastic and damping forces of a
        flexible model (eqs. 10, 12) and the joint dissipation (if on); the external wrenches' joint forces (None
        without any)."""
        tau = self._tau_cmd.copy()
        power = self.elastic.add_to(tau, q, v) if self.elastic is not None else 0.0
        if self.dissipation is not None:
            idx = self.dissipation.v_indices
            tau_d = self.dissipation.torque(v)
            tau[idx] += tau_d
            power -= tau_d @ v[idx]
        wrenches = self._wrenches
        return tau, power, (wrenches.joint_forces(q) if len(wrenches) else None)

    def _constrained_forces(self, q: np.ndarray, v: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float, object]:
        """_generalized_forces plus, in orbit, the tidal generalized force at q and y's reference orbit: what the
        constraint held is solved under."""
        tau, power, fext = self._generalized_forces(q, v)
        if self._orbit_rates is not None:
            tau += self._orbit_forces(q, y)
        return tau, power, fext

    def _with_rates(self, acceleration: np.ndarray, q: np.ndarray, y: np.ndarray, power: float, fext) -> np.ndarray:
        """ydot = [acceleration, zdot]: the dissipated and the external power at their places (the forward pass
        left the joint velocities at (q, v) in data), the external impulse's rates, the orbit's (its tidal forces as
        _orbit_forces evaluated them at q); the acceleration alone without auxiliary states."""
        nv = self.model.nv
        if len(y) == nv:
            return acceleration
        ydot = np.empty(len(y))
        ydot[:nv] = acceleration
        if self._dissipated_rate is not None:
            ydot[self._dissipated_rate] = power
        if self._external_rate is not None:
            ydot[self._external_rate] = self._wrenches.power(self.data) if fext is not None else 0.0
            if self._orbit_rates is None:
                if fext is not None:
                    self._impulse_rates(q, ydot)
                else:
                    ydot[self._impulse_rate] = 0.0
        if self._orbit_rates is not None:
            ydot[self._external_rate] += self.orbit.tidal.generalized_force @ y[:nv]
            wrenches = self._wrenches
            self.orbit.rates(y[self._orbit_rates][:6], wrenches.resultant(q) if len(wrenches) else None,
                             ydot[self._orbit_rates])
        return ydot

    def _orbit_forces(self, q: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The generalized force of every body's tidal force and gravity-gradient couple (orbit/tidal_wrenches.py)
        at q and the reference orbit's state in y."""
        pin.computeJointJacobians(self.model, self.data, q)
        return self.orbit.tidal.evaluate(self.data, self.orbit.start + y[self._orbit_rates][:3])

    def _held_rhs(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """vdot at (q, v) with the contact held under the latched command alone (_constrained_rhs without its
        elastic, dissipative and external terms: the joined step's fast path, bench/bench_contact.py)."""
        acceleration = self._active.acceleration(self.data, q, v, self._tau_cmd)
        if self._first_stage:
            self._stage_force = self._active.force
            self._first_stage = False
        return acceleration

    def _constrained_rhs(self, q: np.ndarray, y: np.ndarray) -> np.ndarray:
        """ydot at (q, y = [v, z]) with the contact held (self._active): the latched command plus the elastic and
        damping forces of a flexible model and the joint dissipation (if on), the external wrenches (if any),
        through the constraint's forward dynamics; its multipliers of a step's first stage are kept."""
        v = y[:self.model.nv]
        tau, power, fext = self._constrained_forces(q, v, y)
        acceleration = self._active.acceleration(self.data, q, v, tau, fext)
        if self._first_stage:
            self._stage_force = self._active.force
            self._first_stage = False
        return self._with_rates(acceleration, q, y, power, fext)

    # ---- outputs ----------------------------------------------------------------------------
    @property
    def step_backend(self) -> str:
        """"compiled" when this step runs in the compiled library (compiled_flexible_step.py: rk4, no joint
        dissipation, not in orbit, external wrenches in local axes only, a grasp held on the fast route), "python"
        otherwise; step_backend_reason says why the library is not used at all ("" when it is built for this
        simulation)."""
        return "compiled" if self._compiled_step_applies() else "python"

    def _sync_compiled(self, q: np.ndarray) -> None:
        """Give the compiled step the grasp held and the external wrenches when they changed."""
        compiled = self._compiled
        if compiled.loop is not self._active:
            compiled.set_loop(self._active)
        wrenches = self._wrenches
        if compiled.wrench_version != wrenches.version:
            compiled.set_wrenches(wrenches.loaded_joint_forces(q) if len(wrenches) else None, wrenches.version,
                                  self._external_rate, None if self._impulse_rate is None else self._impulse_rate.start)

    def _compiled_step_applies(self) -> bool:
        """The library is there for this simulation, not in orbit, the external wrenches (if any) do not depend on q
        (none in world axes), and the contact held (if any) is a grasp on the fast route without dependent
        coordinates (loop_closure.py: Pinocchio's constraintDynamics, which the library runs too)."""
        if self._compiled is None or self.orbit is not None or not self._wrenches.constant:
            return False
        active = self._active
        return active is None or (isinstance(active, LoopClosure) and active.fast and self._reduced is None)

    @property
    def applied_torques(self) -> tuple[np.ndarray, np.ndarray]:
        """(arm, wheel) torques in N m applied over the last step, after limits; cheap, unlike observe()."""
        return self._applied[:self._n_arm], self._applied[self._n_arm:]

    def observe(self) -> Observation:
        """Everything users plot or publish, computed from the current state."""
        s, model, data = self.state, self.model, self._obs_data
        q, v, orbit = s.q, s.v, None
        if self.orbit is not None:
            orbit = self.observe_orbit()
            q, v = self.orbit.transform.to_lvlh(s.q, s.v, orbit.lvlh)
        pin.forwardKinematics(model, data, q, v)
        bases = {}
        for subtree in self.system.subtrees:
            frame = subtree.base_frame_id
            placement = pin.updateFramePlacement(model, data, frame)
            twist = pin.getFrameVelocity(model, data, frame, pin.ReferenceFrame.LOCAL)
            bases[subtree.name] = BaseState(placement.translation.copy(),
                                            pin.Quaternion(placement.rotation).coeffs().copy(),
                                            twist.linear.copy(), twist.angular.copy())
        return Observation(
            t=s.t, q=q.copy(), v=v.copy(), bases=bases,
            momentum=momentum_state(model, data, s.q, s.v),
            arm_torque=self._applied[:self._n_arm].copy(), wheel_torque=self._applied[self._n_arm:].copy(),
            saturated=self._applied != self._command,
            actuator_work=self._actuator_work,
            dissipated_energy=(float(s.aux("dissipated_energy")[0]) if self._dissipated_rate is not None else 0.0)
            + self._impact_loss,
            external_work=float(s.aux("external_work")[0]) if self._external_rate is not None else 0.0,
            elastic_energy=0.0 if self.flexibility is None else self.flexibility.potential_energy(s.q),
            flexible=None if self.flexibility is None else self.flexible_state(),
            contact=self.contact_state(),
            orbit=orbit,
        )

    def observe_orbit(self) -> OrbitState:
        """The orbit now (OrbitState; observe() has it too, with all the rest). CommandError in free space."""
        if self.orbit is None:
            raise CommandError("orbit", "this simulation is in free space: it has no orbit")
        s, layout = self.state, self.layout
        aux = s.z[layout["reference_orbit"].start:layout["frame_impulse"].stop]
        return self.orbit.observe(self.model, self._obs_data, s.q, s.v, aux)

    def lvlh_state(self) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) in the LVLH frame now (new arrays): the free flyers' poses and twists relative to it, every other
        coordinate as in `state` (orbit/lvlh_frame.py). The state itself in free space (copies)."""
        s = self.state
        if self.orbit is None:
            return s.q.copy(), s.v.copy()
        return self.orbit.transform.to_lvlh(s.q, s.v, self.orbit.lvlh(s.aux("reference_orbit")))

    def flexible_state(self) -> FlexibleState:
        """The `flexible_modes` readout at the current state (motor efforts: the torques applied over the last
        step); Flexibility.readout."""
        s, flexibility = self.state, self.flexibility
        arm = self._applied[:self._n_arm]
        motor = np.array([0.0 if row is None else arm[row] for row in self._motor_rows])
        return FlexibleState(flexibility.names, *flexibility.readout(s.q, s.v, motor))

    def _inertial_momentum(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(P, L_X, per-body P_k, per-body L_X,k) at the current state (momentum_balance.py)."""
        s = self.state
        if not hasattr(self, "_bodies"):
            self._bodies = BodyMomenta(self.model)
        if self.orbit is None:
            linear, angular = self._bodies(s.q, s.v)
        else:
            reference = s.aux("reference_orbit")
            linear, angular = self._bodies(s.q, s.v, reference[:3], reference[3:])
        return linear.sum(axis=0), angular.sum(axis=0), linear, angular

    def momentum_balance(self) -> MomentumBalance:
        """The momentum balance now (momentum_balance.py): momentum change since reset() - integrated external
        impulse, inertial; and the largest momentum of a body now."""
        linear, angular, body_linear, body_angular = self._inertial_momentum()
        impulse = self.state.aux("external_impulse") if "external_impulse" in self.layout else np.zeros(6)
        return MomentumBalance(linear - self._momentum0[0] - impulse[:3], angular - self._momentum0[1] - impulse[3:],
                               float(np.max(np.linalg.norm(body_linear, axis=1))),
                               float(np.max(np.linalg.norm(body_angular, axis=1))))

    def momentum_about(self, point) -> tuple[np.ndarray, np.ndarray]:
        """(p, L_P) of the whole system at the current state: total linear momentum (kg m/s) and angular momentum
        about the world point `point` (m) (kg m^2/s), both in the world frame (system_momentum.py); in orbit in the
        free-falling frame W (orbital_environment.py; momentum_balance() has the inertial momentum)."""
        s = self.state
        return momentum_about_point(self.model, self._obs_data, s.q, s.v, point)

