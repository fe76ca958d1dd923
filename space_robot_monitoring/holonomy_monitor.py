"""Online holonomy monitor: one call per control cycle, ROS-free.

    monitor = HolonomyMonitor(system, load_monitor_settings("config/monitor.yaml"))
    report = monitor.update(t, q, v)              # or update(t, q, v, attached=True) at a grasp
    report.level, report.message                  # "OK" | "WARN" | "ERROR", a sentence for people
    report.key_values()                           # [(key, value string)], for diagnostic_msgs/KeyValue

Stable API (used by the monitor node): HolonomyMonitor(system, settings), HolonomyMonitor.from_yaml(path,
system=None), .update(t, q, v, attached=None, body_wrenches=None) -> MonitorReport, .attached, .reset(),
MonitorReport fields below and MonitorReport.key_values(). Inputs: t in s (strictly increasing), q (nq,) and v (nv,)
in the SystemModel's Pinocchio convention (free-flyer twists in the base frame). Bad input raises CommandError.

What each figure means (docs/holonomy.md has one paragraph and the equation for each):
- momentum residual: change of the total linear momentum p and of the angular momentum L about the centre
  of mass of the monitored bodies (the robot; robot + target while attached) since the first update after a
  reset or an attach/detach, world frame. Relative values are fractions of the momentum capacity (what the
  robot's joints generate at their reference speeds). Non-zero means an external force or torque acts (mean
  value reported); a jump within one cycle means an impact or contact event. In orbit (update's body_wrenches,
  orbital_view.py) the impulse of gravity's wrench on the monitored bodies, integrated between cycles by the
  trapezoidal rule, is taken out of the change first: gravity gradient is physics, not an error.
- momentum constraint matrix: singular values and rank of seed 004's B (eq. 2.32) made dimensionless with
  the system mass M and length scale L; rank 6 means the base (and target) motion is determined by qdot.
- thesis Y_h ranks (seed 004 eqs. 4.1-4.16), linear and angular: reproduced as published, but they are the
  rank of the V_b columns of A, not an integrability test (yh_criterion.py).
- nonholonomy rank: number of independent base-attitude changes that small closed joint loops produce
  (rank of the curvature's angular parts, mechanical_connection.py); 0 would mean holonomic. While the
  target is held the curvature is that of the combined momentum + grasp constraints (seed 004 eq. 2.34),
  and this rank is their Frobenius rank.
- linear integrability residual: centre-of-mass velocity of the curvature, relative; zero up to round-off
  because linear momentum is integrable. A large value means the model or its derivatives are inconsistent.
- contact residual (attached only): relative twist of end effector and grapple over the end-effector
  speed capacity; non-zero means the grasp slips or is lost.
- generalized Jacobian J* (space_robot_control/generalized_jacobian.py, from the connection's fields): smallest
  singular value and manipulability of the length-scaled J*, and its inverse condition number
  sigma_min / sigma_max; that ratio going to zero is a dynamic singularity (a uniformly small J*, e.g. while
  holding a heavy target, is not).
- the mechanical connection K and its curvature F themselves (SI, MonitorReport.connection, .curvature and
  .curvature_tensor()): the matrices the ranks and J* above come from, for users' own analysis.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import pinocchio as pin

from space_robot_control.generalized_jacobian import conditioning, generalized_jacobian, jacobian_scale
from space_robot_dynamics.command_checks import numeric_vector, require_finite
from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel

from .contact_constraint import MomentumAndWeld
from .mechanical_connection import CurvatureFigureMaker, CurvatureFigures, Fibre, MechanicalConnection
from .momentum_matrices import CentroidalMomentum, ThesisMomentumModel, momentum_shift
from .monitor_settings import SECTION, MonitorSettings, load_monitor_settings
from .small_linear_algebra import inverse, singular_values, symmetric_eigenvalues
from .system_partition import index_or_slice, subtree_partition
from .yh_criterion import block_gram, closed_form_from_gram_inverse, thesis_criterion

OK, WARN, ERROR = "OK", "WARN", "ERROR"
_LEVEL_ORDER = {OK: 0, WARN: 1, ERROR: 2}
YH_NOTE = ("thesis Y_h rank = rank of the V_b columns of the constraint matrix (seed 004 eq. 4.16 reduces to "
           "A[:, :3]^T (A A^T)^-1); it does not test integrability (it changes with the velocity ordering and "
           "the reference point): see nonholonomy_rank")


@dataclass(frozen=True)
class MonitorReport:
    """One monitor cycle. Vectors in the world frame unless stated; SI units."""

    t: float
    attached: bool
    level: str
    message: str
    momentum_interpretation: str
    linear_momentum: np.ndarray              # kg m/s, monitored bodies
    angular_momentum: np.ndarray             # kg m^2/s, about their centre of mass
    linear_momentum_residual: np.ndarray     # kg m/s, p - p0
    angular_momentum_residual: np.ndarray    # kg m^2/s, L - L0
    linear_residual_fraction: float          # |p - p0| / linear momentum capacity
    angular_residual_fraction: float         # |L - L0| / angular momentum capacity
    momentum_jump_fraction: float            # largest of the two over the last cycle
    mean_external_force: np.ndarray          # N, (p - p0) / (t - t0)
    mean_external_torque: np.ndarray         # N m, (L - L0) / (t - t0)
    constraint_singular_values: np.ndarray   # (6,), dimensionless B (eq. 2.32)
    constraint_rank: int
    thesis_yh_linear: np.ndarray             # (3, 3) seed 004 eq. 4.16, linear momentum
    thesis_yh_angular: np.ndarray            # (3, 3) angular momentum
    thesis_yh_rank_linear: int
    thesis_yh_rank_angular: int
    nonholonomy_rank: int
    attitude_curvature_singular_values: np.ndarray   # (3,), rad per (rad)^2 of loop area, dimensionless
    linear_integrability_residual: float
    contact_residual: float                  # NaN when not attached
    jstar_singular_values: np.ndarray        # scaled J*, decreasing
    jstar_sigma_min: float
    jstar_inverse_condition: float           # sigma_min / sigma_max of the scaled J*
    jstar_manipulability: float
    jstar: np.ndarray = field(repr=False)    # (6 x n) SI, end-effector frame origin twist, world axes
    # The mechanical connection and its curvature (mechanical_connection.py), columns per shape joint in
    # `shape_joints` order (the robot's one-DOF joints): fibre twists stacked per fibre (robot base, then the
    # target's while attached), each [linear m/s, angular rad/s] in its own base frame (Pinocchio LOCAL).
    connection: np.ndarray = field(repr=False)   # K (6 n_f x n_s): base twist per unit joint rate, xi = K qdot
    curvature: np.ndarray = field(repr=False)    # F (6 n_f x n_pairs): column p = F_ij, (i, j) = curvature_pairs[p]
    curvature_pairs: tuple = field(repr=False)   # (i, j) index arrays, i < j, into shape_joints
    shape_joints: tuple = field(repr=False)      # joint names of K's columns and of the pairs' indices

    def curvature_tensor(self) -> np.ndarray:
        """F as (n_s, n_s, 6 n_f), F[i, j] the base-twist change per unit loop area in joints i then j
        (rad or m per rad^2), antisymmetric in (i, j)."""
        n_shape = len(self.shape_joints)
        tensor = np.zeros((n_shape, n_shape, len(self.curvature)))
        i, j = self.curvature_pairs
        tensor[i, j] = self.curvature.T
        tensor[j, i] = -self.curvature.T
        return tensor

    @classmethod
    def of(cls, **values) -> MonitorReport:
        """The report with every field given by keyword: the same object as MonitorReport(**fields), built by
        filling its dict at once (the frozen __init__ sets the 28 fields one object.__setattr__ at a time, a
        sizeable part of a monitor cycle)."""
        if values.keys() != _REPORT_FIELDS:
            raise TypeError(f"MonitorReport.of needs exactly the fields {sorted(_REPORT_FIELDS)}")
        report = object.__new__(cls)
        report.__dict__.update(values)
        return report

    def key_values(self) -> list[tuple[str, str]]:
        """Flat (key, value) strings for diagnostic_msgs/KeyValue, in a fixed order."""
        contact = "n/a (not attached)" if not self.attached else _g(self.contact_residual)
        return [
            ("level", self.level),
            ("message", self.message),
            ("attached", str(self.attached).lower()),
            ("momentum_interpretation", self.momentum_interpretation),
            ("linear_momentum_residual_fraction", _g(self.linear_residual_fraction)),
            ("angular_momentum_residual_fraction", _g(self.angular_residual_fraction)),
            ("linear_momentum_residual [N s, world]", _vec(self.linear_momentum_residual)),
            ("angular_momentum_residual [N m s, world, about CoM]", _vec(self.angular_momentum_residual)),
            ("mean_external_force [N, world]", _vec(self.mean_external_force)),
            ("mean_external_torque [N m, world]", _vec(self.mean_external_torque)),
            ("momentum_jump_fraction", _g(self.momentum_jump_fraction)),
            ("constraint_matrix_rank", str(self.constraint_rank)),
            ("constraint_matrix_singular_values [scaled]", _vec(self.constraint_singular_values)),
            ("thesis_Yh_rank_linear", str(self.thesis_yh_rank_linear)),
            ("thesis_Yh_rank_angular", str(self.thesis_yh_rank_angular)),
            ("thesis_Yh_note", YH_NOTE),
            ("nonholonomy_rank", str(self.nonholonomy_rank)),
            ("attitude_curvature_singular_values [scaled]", _vec(self.attitude_curvature_singular_values)),
            ("linear_integrability_residual", _g(self.linear_integrability_residual)),
            ("contact_residual", contact),
            ("jstar_sigma_min [scaled]", _g(self.jstar_sigma_min)),
            ("jstar_inverse_condition", _g(self.jstar_inverse_condition)),
            ("jstar_manipulability [scaled]", _g(self.jstar_manipulability)),
        ]


_REPORT_FIELDS = frozenset(f.name for f in fields(MonitorReport))


def _g(x: float) -> str:
    return f"{x:.6g}"


def _vec(x: np.ndarray) -> str:
    return "[" + ", ".join([f"{v:.6g}" for v in np.ravel(x).tolist()]) + "]"      # Python floats format faster


class HolonomyMonitor:
    """See the module docstring. One instance per monitored system; not thread-safe (owns Pinocchio data)."""

    def __init__(self, system: SystemModel, settings: MonitorSettings):
        self.system = system
        self.settings = settings
        model = system.model
        self.model = model
        src = settings.source
        self.robot = subtree_partition(system, settings.robot_subtree, f"{SECTION}.robot_subtree")
        robot = self.robot
        self.ee_frame = _frame(model, settings.end_effector_frame, f"{SECTION}.end_effector_frame", src)
        if model.frames[self.ee_frame].parentJoint not in robot.body_joint_ids:
            raise ConfigError(f"{SECTION}.end_effector_frame", f"frame {settings.end_effector_frame!r} is not on "
                              f"subtree {robot.name!r}", src)
        self.centroidal = CentroidalMomentum(model)
        self.target = None
        self._connection_attached = None
        if settings.target is not None:
            self.target = subtree_partition(system, settings.target.subtree, f"{SECTION}.target.subtree")
            if len(self.target.joint_v):
                raise ConfigError(f"{SECTION}.target.subtree", f"the target must be one rigid body; subtree "
                                  f"{self.target.name!r} has joints {self.target.joint_names}", src)
            grapple = _frame(model, settings.target.grapple_frame, f"{SECTION}.target.grapple_frame", src)
            if model.frames[grapple].parentJoint != self.target.root_joint_id:
                raise ConfigError(f"{SECTION}.target.grapple_frame", f"frame {settings.target.grapple_frame!r} "
                                  f"is not on the target {self.target.name!r}", src)
            self._connection_attached = MechanicalConnection(
                model, [MomentumAndWeld(model, self.ee_frame, grapple, self.centroidal)],
                [Fibre(robot.root_joint_id, robot.base_v), Fibre(self.target.root_joint_id, self.target.base_v)],
                robot.joint_v, robot.shape_basis)
        self._connection_free = MechanicalConnection(model, [self.centroidal],
                                                     [Fibre(robot.root_joint_id, robot.base_v)], robot.joint_v,
                                                     robot.shape_basis)
        self.thesis = ThesisMomentumModel(system, robot, self.target, self.ee_frame, self.centroidal)
        self.length_scale = settings.length_scale or self._auto_length_scale()
        self.reference_speed = self._reference_speeds()
        self.shape_scale = np.where(robot.prismatic, self.length_scale, 1.0)
        if settings.jacobian_joints == "arm":
            position = {v: k for k, v in enumerate(robot.joint_v)}
            missing = [n for n, v in zip(system.arm_joints, system.arm_v) if v not in position]
            if missing or not len(system.arm_v):
                raise ConfigError(f"{SECTION}.generalized_jacobian.joints", f"'arm' needs the model's arm_joints "
                                  f"on subtree {robot.name!r} (missing: {missing or 'no arm joints'})", src)
            self.jacobian_columns = np.array([position[v] for v in system.arm_v], dtype=int)
        else:
            self.jacobian_columns = np.arange(len(robot.joint_v))
        self._jacobian_cols = index_or_slice(self.jacobian_columns)
        self._jacobian_scale = jacobian_scale(robot.prismatic[self.jacobian_columns], self.length_scale)
        # end-effector speed capacity = sum_j v_ref,j (|J*_lin,j| / L + |J*_ang,j|)
        self._contact_weights = np.outer([1.0 / self.length_scale, 1.0], self.reference_speed)
        self._row_sums = np.kron(np.eye(2), np.ones(3))       # (2, 6): sums of rows 0:3 and 3:6
        self._modes = {False: self._mode([robot], self._connection_free)}
        if self.target is not None:
            self._modes[True] = self._mode([robot, self.target], self._connection_attached)
        for mode in self._modes.values():      # the reports hand these index arrays out: nobody may change them
            for index in mode.figures.pairs:
                index.flags.writeable = False
        self._attached = bool(settings.target.attached) if settings.target is not None else False
        self.reset()

    def _mode(self, fibres: list, connection: MechanicalConnection) -> _Mode:
        """Everything constant for one contact state (free robot, or robot holding the target)."""
        roots = tuple(f.root_joint_id for f in fibres)
        masses = tuple(f.mass for f in fibres)
        mass, length = float(sum(masses)), self.length_scale
        # B of eq. 2.32 made dimensionless: rows P / (M L), L / (M L^2); columns V_b, v_t times L, prismatic
        # qdot times L (Omega_b, omega_t, revolute qdot are already per radian).
        rows = np.r_[np.full(3, 1.0 / (mass * length)), np.full(3, 1.0 / (mass * length ** 2))][:, None]
        cols = np.r_[np.full(3, length), np.ones(3), self.shape_scale]
        if len(fibres) > 1:
            cols = np.r_[cols, np.ones(3), np.full(3, length)]
        figures = CurvatureFigureMaker(self.shape_scale, len(fibres), length, self.settings.rank_rtol)
        # monitored velocities: the robot's (base, joints, a flexible model's tip chains), then the target's base
        monitored = np.concatenate([f.momentum_v for f in fibres])
        # inversion matrix: blockdiag(C_f (6 nf square), Gram_linear, Gram_angular (3 x 3 each))
        square = np.zeros((6 * len(fibres) + 6,) * 2)
        shares = np.array(masses) / mass
        speeds = np.zeros(len(monitored))       # reference speeds of the monitored columns: robot joints only
        speeds[6:6 + len(self.reference_speed)] = self.reference_speed
        return _Mode(roots, tuple(index_or_slice(f.base_v) for f in fibres), shares, np.repeat(shares, 6),
                     index_or_slice(monitored), speeds, connection, figures, rows * cols[None, :], square)

    @classmethod
    def from_yaml(cls, path: str | Path, system: SystemModel | None = None) -> HolonomyMonitor:
        """Monitor configured by the holonomy_monitor section of `path`; builds its `model` if no system is given."""
        settings = load_monitor_settings(path)
        if system is None:
            if settings.model is None:
                raise ConfigError(f"{SECTION}.model", "is required when no SystemModel is passed", settings.source)
            system = SystemModel(load_model_config(settings.model))
        return cls(system, settings)

    # ---- state ------------------------------------------------------------------------------
    @property
    def attached(self) -> bool:
        return self._attached

    def reset(self) -> None:
        """Forget the momentum reference: the next update takes its momentum as the initial momentum."""
        self._h0 = None             # momentum at the reference time t0 and at the previous cycle (6 floats)
        self._h_prev = None
        self._impulse = np.zeros(6)     # the known external wrenches' impulse since t0 (body_wrenches), N s, N m s
        self._wrench_prev = None
        self._t0 = None
        self._t_prev = None

    # ---- the cycle ----------------------------------------------------------------------------
    def update(self, t: float, q: np.ndarray, v: np.ndarray, attached: bool | None = None,
               body_wrenches=None) -> MonitorReport:
        """One cycle at time t (s) on the state (q, v). `body_wrenches` (orbital_view.BodyWrenches, world axes, at
        this q): external wrenches known to act on the bodies (gravity in orbit), whose impulse on the monitored ones
        is taken out of their momentum change."""
        q, v, t = self._checked(t, q, v)
        if attached is not None and bool(attached) != self._attached:
            if attached and self.target is None:
                raise CommandError("attached", "no target is configured (holonomy_monitor.target)")
            self._attached = bool(attached)
            self.reset()        # the monitored set of bodies changed: new momentum reference
        s, data = self.settings, self.centroidal.data
        mode = self._modes[self._attached]
        connection = mode.connection
        # One Pinocchio data for the whole pass: the constraint rows C(q) (A_G; while attached also the grasp
        # rows, from data.J) leave the kinematics at q in it, and the connection's derivative calls keep them.
        c = connection.matrix(q)
        ag = c[:6]
        ee_position = j_ee = None
        if self._attached:      # B needs the hand's Jacobian; data.J is at q already (the grasp rows)
            j_ee = self._end_effector_jacobian(data)
            ee_position = data.oMf[self.ee_frame].translation
        b = self.thesis.constraint_matrix(self._attached, ag, j_ee, ee_position)     # eq. 2.32
        blocks = b.reshape(2, 3, -1)          # linear, angular rows: the two A of seed 004 sec. 4.2

        # ---- one inversion: C_f of the connection and the Gram blocks of the closed-form Y_h, block-diagonal
        square = mode.square.copy()
        n_fibre = len(square) - 6
        square[:n_fibre, :n_fibre] = connection.fibre_block(c)
        block_gram(blocks, out=square[n_fibre:, n_fibre:])
        inv = inverse(square)
        curvature = connection.pair_curvature(q, c, inv[:n_fibre, :n_fibre])     # the derivative calls fill data.J
        if not self._attached:
            if not len(self.robot.joint_v):     # no derivative calls: data.J is not there yet
                pin.computeJointJacobians(self.model, data, q)
            j_ee = self._end_effector_jacobian(data)
        if s.thesis_yh_method == "closed_form":
            yh, yh_scale = closed_form_from_gram_inverse(blocks, inv[n_fibre:, n_fibre:])
            yh_threshold = [s.rank_rtol * x for x in yh_scale]
        else:                   # eqs. 4.8-4.16 literally, on request (config)
            literal = [thesis_criterion(a, s.rank_rtol, s.thesis_yh_method) for a in blocks]
            yh, yh_threshold = [r.Yh for r in literal], [r.threshold for r in literal]

        system_com = data.com[0].copy()          # r_G, before _centre_of_mass reuses data.com as work space
        offset, com_jacobian = self._centre_of_mass(data, mode)
        parts = mode.figures.parts(curvature.F, curvature.term_size, com_jacobian)

        # ---- generalized Jacobian
        jstar_all = generalized_jacobian(j_ee, curvature.fields)
        jstar = jstar_all[:, self._jacobian_cols]

        # ---- singular values: B (dimensionless, eq. 2.32), Y_h linear and angular (for their ranks), the scaled
        # J*, and the attitude curvature's from its Gram matrix
        b_sv = singular_values(b * mode.b_scale)
        b_values = b_sv.tolist()
        b_threshold = s.rank_rtol * b_values[0]
        b_rank = len([x for x in b_values if x > b_threshold])
        yh_rank_lin, yh_rank_ang = (len([x for x in singular_values(m).tolist() if x > threshold])
                                    for m, threshold in zip(yh, yh_threshold))
        jac_sv = singular_values(jstar * self._jacobian_scale)
        if parts is not None:
            gram_values = symmetric_eigenvalues(parts.attitude_gram)[::-1]
            figures = mode.figures.figures_from(parts, mode.figures.attitude_singular_values(parts, gram_values))
        else:
            figures = CurvatureFigures(np.zeros(3), 0, 0.0)
        sigma_min, inverse_condition, manipulability = conditioning(jac_sv)

        # ---- momentum of the monitored bodies about their centre of mass, its change and its capacity
        wrench = None if body_wrenches is None else self._wrench_on_monitored(body_wrenches, mode,
                                                                              system_com - offset)
        momenta, frac_lin, frac_ang, jump_frac = self._momentum(t, ag, v, mode, offset, wrench)
        h, dh, mean_wrench = momenta       # (2, 3) each: linear, angular

        # ---- contact residual
        contact = float("nan")
        if self._attached:
            contact = self._contact_residual(c[6:12] @ v, ee_position, jstar_all)

        level, message, interpretation = self._assess(frac_lin, frac_ang, jump_frac, mean_wrench, dh, figures,
                                                      inverse_condition, contact, self._attached)
        return MonitorReport.of(
            t=t, attached=self._attached, level=level, message=message, momentum_interpretation=interpretation,
            linear_momentum=h[0], angular_momentum=h[1], linear_momentum_residual=dh[0],
            angular_momentum_residual=dh[1], linear_residual_fraction=frac_lin, angular_residual_fraction=frac_ang,
            momentum_jump_fraction=jump_frac, mean_external_force=mean_wrench[0],
            mean_external_torque=mean_wrench[1], constraint_singular_values=b_sv, constraint_rank=b_rank,
            thesis_yh_linear=yh[0], thesis_yh_angular=yh[1], thesis_yh_rank_linear=yh_rank_lin,
            thesis_yh_rank_angular=yh_rank_ang, nonholonomy_rank=figures.nonholonomy_rank,
            attitude_curvature_singular_values=figures.attitude_singular_values,
            linear_integrability_residual=figures.linear_residual,
            contact_residual=contact, jstar_singular_values=jac_sv,
            jstar_sigma_min=sigma_min, jstar_inverse_condition=inverse_condition,
            jstar_manipulability=manipulability, jstar=jstar, connection=curvature.K, curvature=curvature.F,
            curvature_pairs=mode.figures.pairs, shape_joints=self.robot.joint_names,
        )

    def _centre_of_mass(self, data: pin.Data, mode: _Mode) -> tuple[np.ndarray, np.ndarray]:
        """(r_G - r, com_jacobian): the offset of the system centre of mass r_G from the monitored bodies' r
        (world, m) and com_jacobian (3, 6 n_f) = [G_f], their centre-of-mass velocity per fibre twist:
        G_f = (m_f / M) R_f [E_3, -[c_f x]], c_f the centre of mass of the subtree on fibre f in its base frame,
        i.e. m_f / M times the base columns of Pinocchio's subtree centre-of-mass Jacobian (from data.J at q,
        which the connection's derivative calls leave). That call reuses data.com as work space, so r_G
        (data.com[0], from the centroidal map) is read before it."""
        system_com = data.com[0].copy()
        blocks, coms = [], []
        for root, fibre_v in zip(mode.roots, mode.fibre_v):
            blocks.append(pin.jacobianSubtreeCenterOfMass(self.model, data, root)[:, fibre_v])
            coms.append(data.com[root])
        if len(coms) == 1:                  # the share is 1
            return system_com - coms[0], blocks[0]
        jacobian = np.concatenate(blocks, axis=1)
        jacobian *= mode.column_shares
        return system_com - mode.mass_shares_array.dot(coms), jacobian

    def _wrench_on_monitored(self, wrenches, mode: _Mode, centre: np.ndarray) -> np.ndarray:
        """The resultant of `wrenches` on the monitored bodies (those whose joint moves a monitored column),
        force and moment about their centre of mass `centre` (6,)."""
        cols = set(np.arange(self.model.nv)[mode.cols].tolist())
        rows = [k for k, j in enumerate(wrenches.joints) if self.model.joints[j].idx_v in cols]
        force = wrenches.force[rows]
        moment = np.cross(wrenches.com[rows] - centre, force).sum(axis=0) + wrenches.torque[rows].sum(axis=0)
        return np.concatenate((force.sum(axis=0), moment))

    def _momentum(self, t: float, ag: np.ndarray, v: np.ndarray, mode: _Mode, offset: np.ndarray, wrench=None):
        """Momentum of the monitored bodies about their centre of mass r (A_G's angular rows are about the total
        centre of mass r_G: L = L_G + (r_G - r) x p, offset = r_G - r), its change since the reference less the
        known external wrench's impulse (trapezoidal, `wrench` at t; none: zero), the largest one-cycle change (less
        the same) and the momentum capacity. Returns ((h, h - h0 - J, (h - h0 - J) / (t - t0)) as (3, 2, 3), linear
        fraction, angular fraction, jump fraction); h and its changes as plain floats."""
        moment = momentum_shift(offset).dot(ag[:, mode.cols])      # momentum map about r, monitored columns
        h = moment.dot(v[mode.cols]).tolist()
        # capacity: |column| of that map per robot joint (linear, angular rows), times the joint speeds (the
        # speeds of the other monitored columns, the bases', are zero)
        moment *= moment
        cap_lin, cap_ang = np.sqrt(self._row_sums.dot(moment)).dot(mode.column_speeds).tolist()
        if self._h0 is None:
            self._h0, self._h_prev, self._t0 = h, h, t
            self._impulse, self._wrench_prev = np.zeros(6), wrench
        step = np.zeros(6)
        if wrench is not None and self._wrench_prev is not None and self._t_prev is not None and t > self._t0:
            step = 0.5 * (wrench + self._wrench_prev) * (t - self._t_prev)
            self._impulse = self._impulse + step
        self._wrench_prev = wrench
        impulse, step = self._impulse.tolist(), step.tolist()
        dh = [a - b - c for a, b, c in zip(h, self._h0, impulse)]
        jump = [a - b - c for a, b, c in zip(h, self._h_prev, step)]
        self._h_prev, self._t_prev = h, t
        elapsed = t - self._t0
        mean = [x / elapsed for x in dh] if elapsed > 0.0 else [0.0] * 6
        hypot = math.hypot
        return (np.array((h, dh, mean)).reshape(3, 2, 3), hypot(*dh[:3]) / cap_lin, hypot(*dh[3:]) / cap_ang,
                max(hypot(*jump[:3]) / cap_lin, hypot(*jump[3:]) / cap_ang))

    def _end_effector_jacobian(self, data: pin.Data) -> np.ndarray:
        """Frame Jacobian (LOCAL_WORLD_ALIGNED, 6 x nv) of the end effector from data.J at q. getFrameJacobian
        also places the frame in data.oMf (Pinocchio 3 and 4), so its origin is data.oMf[ee_frame] after it."""
        return pin.getFrameJacobian(self.model, data, self.ee_frame, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)

    # ---- pieces ---------------------------------------------------------------------------------
    def _checked(self, t, q, v):
        try:
            t = float(t)
        except (TypeError, ValueError) as exc:
            raise CommandError("t", f"not a number: {t!r}") from exc
        if not math.isfinite(t):
            raise CommandError("t", f"must be finite, got {t}")
        if self._t_prev is not None and t <= self._t_prev:
            raise CommandError("t", f"must increase: got {t} after {self._t_prev}")
        q, v = numeric_vector(q, self.model.nq, "q"), numeric_vector(v, self.model.nv, "v")
        require_finite((q, "q"), (v, "v"))
        q = pin.normalize(self.model, q)                 # normalize returns a new vector
        coordinates = self.system.coordinates
        if coordinates is not None and not coordinates.trivial:     # tip chains on the modal coordinates (eq. 14)
            v = v.copy()
            coordinates.project(q, v)
        return q, v, t

    def _auto_length_scale(self) -> float:
        """Distance from the base centroid to the end effector at the neutral configuration (the arm's reach)."""
        data = self.model.createData()
        q = self.system.neutral()
        pin.framesForwardKinematics(self.model, data, q)
        base = data.oMi[self.robot.root_joint_id].act(self.robot.base_com_local)
        length = float(np.linalg.norm(data.oMf[self.ee_frame].translation - base))
        if not length > 0.0:
            raise ConfigError(f"{SECTION}.length_scale", "auto gives zero (end effector at the base centroid); "
                              "give a length in m", self.settings.source)
        return length

    def _reference_speeds(self) -> np.ndarray:
        """Per shape coordinate: the speed at which it generates momentum for the capacity. A flexible model's modal
        coordinates are not commanded: 0 (they carry momentum, counted in the residual, but set no capacity)."""
        flexibility = self.system.flexibility
        modal = {m.name for m in flexibility.modal} if flexibility is not None else set()
        passive = np.array([name in modal for name in self.robot.joint_names], dtype=bool)
        if self.settings.reference_joint_speed is not None:
            return np.where(passive, 0.0, self.settings.reference_joint_speed)
        limits = np.where(passive, 0.0, self.model.velocityLimit[self.robot.joint_v])
        bad = [name for name, lim, p in zip(self.robot.joint_names, limits, passive)
               if not p and not (0.0 < lim < 1e300)]
        if bad:
            raise ConfigError(f"{SECTION}.momentum.reference_joint_speed", f"'urdf' needs velocity limits; joints "
                              f"{bad} have none: give a speed", self.settings.source)
        return np.array(limits, dtype=float)

    def _contact_residual(self, spatial: np.ndarray, ee_point: np.ndarray, jstar_all: np.ndarray) -> float:
        """|relative twist at the end effector| (scaled) over the end-effector speed capacity.

        spatial: spatial twist of the grapple body minus that of the end-effector body (world, at the world
        origin); moved to the end-effector point: dv + dw x p_EE.
        """
        vx, vy, vz, wx, wy, wz = spatial.tolist()        # six numbers: plain floats beat array calls
        px, py, pz = ee_point.tolist()
        lin = (vx + wy * pz - wz * py, vy + wz * px - wx * pz, vz + wx * py - wy * px)
        relative = math.hypot(*lin) / self.length_scale + math.hypot(wx, wy, wz)
        columns = jstar_all * jstar_all
        norms = np.sqrt(np.add.reduce(columns.reshape(2, 3, -1), axis=1))     # (linear, angular) per joint
        return relative / float(np.add.reduce(norms * self._contact_weights, axis=None))

    def _assess(self, frac_lin, frac_ang, jump_frac, mean_wrench, dh, figures, inverse_condition, contact,
                attached):
        """mean_wrench, dh: (2, 3), linear then angular."""
        s = self.settings
        level = OK
        findings = []

        def raise_to(new):
            nonlocal level
            if _LEVEL_ORDER[new] > _LEVEL_ORDER[level]:
                level = new

        parts = []
        if frac_lin > s.momentum_warn:
            raise_to(ERROR if frac_lin > s.momentum_error else WARN)
            parts.append(f"linear momentum changed by {np.linalg.norm(dh[0]):.3g} N s ({frac_lin:.2g} of capacity): "
                         f"an external force acts (mean {np.linalg.norm(mean_wrench[0]):.3g} N)")
        if frac_ang > s.momentum_warn:
            raise_to(ERROR if frac_ang > s.momentum_error else WARN)
            parts.append(f"angular momentum changed by {np.linalg.norm(dh[1]):.3g} N m s ({frac_ang:.2g} of "
                         f"capacity): an external torque acts (mean {np.linalg.norm(mean_wrench[1]):.3g} N m)")
        if jump_frac > s.momentum_jump:
            raise_to(ERROR)
            parts.append(f"momentum jumped by {jump_frac:.2g} of capacity in one cycle: impact or contact event")
        interpretation = "; ".join(parts) if parts else (
            f"momentum conserved (changes {frac_lin:.1e} linear, {frac_ang:.1e} angular of capacity): "
            "no external force or torque")
        findings.append(interpretation[0].upper() + interpretation[1:])
        if attached and contact > s.contact_warn:
            raise_to(ERROR if contact > s.contact_error else WARN)
            findings.append(f"End effector moves relative to the grapple ({contact:.2g} of its speed capacity): "
                            "grasp slipping or contact lost")
        if figures.linear_residual > s.linear_residual_error:
            raise_to(ERROR)
            findings.append(f"Linear-momentum curvature residual {figures.linear_residual:.2g}: the model or its "
                            "derivatives are inconsistent")
        rank = figures.nonholonomy_rank
        findings.append("Constraints holonomic at this configuration (no attitude change from joint loops)" if rank == 0
                        else f"Constraints nonholonomic: small joint loops can turn the base about {rank} "
                             f"independent {'axes' if rank > 1 else 'axis'}")
        if inverse_condition < s.inverse_condition_warn:
            raise_to(ERROR if inverse_condition < s.inverse_condition_error else WARN)
            findings.append(f"End effector at or near a dynamic singularity (J* inverse condition "
                            f"{inverse_condition:.2g}): some end-effector directions are lost to base motion")
        else:
            findings.append(f"End effector clear of dynamic singularities (J* inverse condition "
                            f"{inverse_condition:.2g})")
        return level, "; ".join(findings) + ".", interpretation


@dataclass(frozen=True)
class _Mode:
    roots: tuple            # root joint ids of the monitored free bodies (robot first)
    fibre_v: tuple          # their base velocity indices (slices)
    mass_shares_array: np.ndarray   # their subtree masses over the monitored mass
    column_shares: np.ndarray       # the same per fibre-twist component (6 n_f)
    cols: np.ndarray | slice    # v indices of the monitored bodies
    column_speeds: np.ndarray   # reference speed per monitored column (zero on the bases)
    connection: MechanicalConnection
    figures: CurvatureFigureMaker
    b_scale: np.ndarray     # (6, N) factors making B dimensionless
    square: np.ndarray      # zeros, template of the inversion matrix (update)


def _frame(model: pin.Model, name: str, field_name: str, source: str | None) -> int:
    if not model.existFrame(name):
        raise ConfigError(field_name, f"no frame named {name!r} in the model", source)
    return model.getFrameId(name)
