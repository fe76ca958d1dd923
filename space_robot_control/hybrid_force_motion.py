"""Hybrid force/motion inverse-dynamics control of a free-flying robot in contact with an unactuated target
(seed 004 ch. 6, eqs. 6.1-6.9), realized on the inputs the system has.

Model (eqs. 6.1-6.2): H(theta) thetadd + C thetad = taubar + J^T lambda, J thetad = 0, with theta the base, arm
and target coordinates (Pinocchio's v: free-flyer twists in their LOCAL frames, joint rates), H from crba, C
thetad + (no gravity) from nonLinearEffects, J the contact rows in the hand's contact frame c1
(`ContactRows`, from Pinocchio's joint Jacobians and the spatial accelerations at zero a):

    J = J_c1 - c1Xc2 J_c2,    J thetadd + gamma = 0,  gamma = a_c1 - c1Xc2 a_c2 + e_v x (c1Xc2 v_c2)  (a = 0)

The thesis's law (eqs. 6.6-6.7)

    taubar = (H Sdot + C S) vdot + H S (vdd_d + K_D edot + K_P e) - J^T lambda_c,
    lambda_c = lambda_d - K_F e_F - K_I int e_F,   e_F = lambda - lambda_d,

gives generalized forces on every coordinate, the target's included; the target is unactuated, so taubar
cannot be applied as written (`thesis_generalized_force` returns it, to show its target rows). The realization
here asks for what the law achieves in closed loop (eq. 6.8-6.9): the prescribed accelerations
thetadd_m = vdd_d + K_D edot + K_P e on the motion coordinates m (base rotation, arm joints) and the contact
force equal to lambda_c on the force rows f, solving for the inputs u the system has (B: the actuated
coordinates, e.g. thruster wrench on the base and joint torques), the accelerations and the multipliers
together:

    [ H    -B   -J^T ] [thetadd]   [ -C thetad          ]
    [ J     0    0   ] [   u   ] = [ -gamma             ]
    [ E_m   0    0   ] [lambda ]   [ thetadd_m          ]                                           (R)
    [ 0     0    E_f ]             [ lambda_c (on f)    ]

square when dim u = dim m + dim f. The force loop is solved implicitly: with lambda = lambda_c and lambda_c =
lambda_d - K_F (lambda - lambda_d) - K_I z (z = int e_F), lambda_f = lambda_d - K_I z / (1 + K_F) per row, whose
error obeys (1 + K_F) edot_F + K_I e_F = 0 (the thesis's text after eq. 6.9). The remaining multiplier rows
follow from the motion (the target's 6 coordinates are moved only by lambda). Units: SI, rad; force rows N,
torque rows N m, in c1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from scipy.linalg import lapack

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError


class ContactRows:
    """J (6 x nv) and gamma (6) of a 6D contact between c1 = placement1 on joint1 and c2 = placement2 on joint2
    (LOCAL frame of c1), from Pinocchio's joint Jacobians and joint spatial accelerations."""

    def __init__(self, model: pin.Model, joint1: int, placement1: pin.SE3, joint2: int, placement2: pin.SE3):
        self.model, self.data = model, model.createData()
        self.joint1, self.joint2 = joint1, joint2
        self.placement1, self.placement2 = placement1, placement2

    def evaluate(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        model, data = self.model, self.data
        pin.forwardKinematics(model, data, q, v, np.zeros(model.nv))
        pin.computeJointJacobians(model, data, q)
        c1 = data.oMi[self.joint1] * self.placement1
        c2 = data.oMi[self.joint2] * self.placement2
        c1_c2 = c1.actInv(c2)
        J1 = self.placement1.toActionMatrixInverse().dot(pin.getJointJacobian(model, data, self.joint1, pin.LOCAL))
        J2 = (c1_c2.toActionMatrix().dot(self.placement2.toActionMatrixInverse())
              .dot(pin.getJointJacobian(model, data, self.joint2, pin.LOCAL)))
        v_c1 = self.placement1.actInv(data.v[self.joint1])
        v_c2_in_c1 = c1_c2.act(self.placement2.actInv(data.v[self.joint2]))
        a_c1 = self.placement1.actInv(data.a[self.joint1])
        a_c2_in_c1 = c1_c2.act(self.placement2.actInv(data.a[self.joint2]))
        e_v = v_c1 - v_c2_in_c1
        gamma = (a_c1 - a_c2_in_c1).vector + e_v.cross(v_c2_in_c1).vector
        return J1 - J2, gamma


@dataclass(frozen=True)
class HybridGains:
    """Diagonal gains of eqs. 6.6-6.7: K_P (1/s^2), K_D (1/s) per motion coordinate (a scalar: the same on
    each; or a vector in the motion coordinates' order), K_F (dimensionless), K_I (1/s) on every force row."""

    kp: float | np.ndarray
    kd: float | np.ndarray
    kf: float
    ki: float

    def check(self, field: str = "gains") -> None:
        """ConfigError naming the gain outside its range: K_P, K_D > 0 (Hurwitz error dynamics), K_F >= 0,
        K_I >= 0, all finite."""
        for name, value, positive in (("kp", self.kp, True), ("kd", self.kd, True), ("kf", self.kf, False),
                                      ("ki", self.ki, False)):
            values = np.asarray(value, dtype=float) if isinstance(value, (int, float, np.ndarray)) else np.nan
            if not (np.all(np.isfinite(values)) and np.all(values > 0 if positive else values >= 0)):
                raise ConfigError(f"{field}.{name}", f"must be a finite number {'>' if positive else '>='} 0, got "
                                                     f"{value!r}")


def read_hybrid_gains(reader: ConfigReader) -> HybridGains:
    """A `gains` section {kp, kd, kf, ki}, checked (ConfigError naming the field). kp, kd: one number for every
    motion coordinate, or a list in their order (base rotation x, y, z, then the arm joints)."""
    def motion_gain(key: str) -> float | np.ndarray:
        return reader.vector(key) if isinstance(reader.raw(key), list) else reader.number(key)

    gains = HybridGains(motion_gain("kp"), motion_gain("kd"), reader.number("kf"), reader.number("ki"))
    gains.check(reader.path or "gains")
    return gains


def check_motion_sizes(gains: HybridGains, arm_joints, field: str = "gains", source: str | None = None) -> None:
    """ConfigError naming `field`.kp / .kd when one has neither one entry nor one per motion coordinate (base
    rotation x, y, z, then the arm joints)."""
    size = 3 + len(arm_joints)
    for name in ("kp", "kd"):
        given = np.size(getattr(gains, name))
        if given not in (1, size):
            raise ConfigError(f"{field}.{name}", f"one number or {size} (base rotation x, y, z, then "
                                                 f"{list(arm_joints)}), got {given}", source)


@dataclass(frozen=True)
class RealizedLaw:
    """One solve of (R): inputs u (actuated order), accelerations a (nv), multipliers lambda (6, on the hand), and
    the contact rows J (6 x nv) it was solved with."""

    inputs: np.ndarray
    acceleration: np.ndarray
    force: np.ndarray
    contact_jacobian: np.ndarray


class HybridForceMotionLaw:
    """The realization (R) of eqs. 6.6-6.7 on a Pinocchio model.

    actuated_v: v indices the inputs act on (one input per index, a generalized force there: for a free flyer's
    six, the wrench on the base in its LOCAL frame; for joints, their torque or force); motion_v: v indices whose
    acceleration is prescribed; force_rows: rows of lambda (0-5: force x, y, z, torque x, y, z in c1) set by the
    force law. len(actuated_v) must be len(motion_v) + len(force_rows).
    """

    def __init__(self, model: pin.Model, contact: ContactRows, actuated_v, motion_v, force_rows):
        self.model, self.data, self.contact = model, model.createData(), contact
        self.actuated = np.asarray(actuated_v, dtype=int)
        self.motion = np.asarray(motion_v, dtype=int)
        self.force_rows = np.asarray(force_rows, dtype=int)
        if len(self.actuated) != len(self.motion) + len(self.force_rows):
            raise ConfigError("hybrid_force_motion.inputs", f"{len(self.actuated)} inputs for {len(self.motion)} "
                              f"motion coordinates and {len(self.force_rows)} force rows: (R) must be square")
        nv, nu = model.nv, len(self.actuated)
        self.size = nv + nu + 6
        self._matrix = np.zeros((self.size, self.size))
        m = self._matrix
        m[self.actuated, nv + np.arange(nu)] = -1.0
        rows = nv + 6
        m[rows + np.arange(len(self.motion)), self.motion] = 1.0
        rows += len(self.motion)
        m[rows + np.arange(len(self.force_rows)), nv + nu + self.force_rows] = 1.0
        self._lower = np.tril_indices(nv, -1)       # crba fills M's upper triangle: the lower one is copied from it

    def solve(self, q: np.ndarray, v: np.ndarray, motion_acceleration: np.ndarray, force_command: np.ndarray
              ) -> RealizedLaw:
        """(R) at (q, v): motion_acceleration (len motion_v), force_command lambda_f (len force_rows, on the
        hand, c1). LinAlgError if (R) is singular (the inputs cannot produce the task at this state)."""
        model, nv, nu = self.model, self.model.nv, len(self.actuated)
        m = self._matrix
        H = m[:nv, :nv]
        H[...] = pin.crba(model, self.data, q)
        H[self._lower] = H.T[self._lower]
        h = pin.nonLinearEffects(model, self.data, q, v)
        J, gamma = self.contact.evaluate(q, v)
        m[:nv, nv + nu:] = -J.T
        m[nv:nv + 6, :nv] = J
        rhs = np.concatenate((-h, -gamma, motion_acceleration, force_command))
        # LAPACK's LU (gesv, as numpy.linalg.solve) called directly: numpy's wrapper costs more than the solve here
        _lu, _pivots, x, info = lapack.dgesv(m, rhs)
        if info:
            raise np.linalg.LinAlgError(f"(R) is singular at this state (LAPACK dgesv info {info})")
        return RealizedLaw(x[nv:nv + nu], x[:nv], x[nv + nu:], J)

    def thesis_generalized_force(self, q: np.ndarray, v: np.ndarray, acceleration: np.ndarray,
                                 lambda_c: np.ndarray) -> np.ndarray:
        """Eq. 6.6 as written: taubar = H thetadd* + C thetad - J^T lambda_c (nv), with thetadd* = S vdd* + Sdot vd
        the constrained accelerations the law asks for (e.g. RealizedLaw.acceleration) and lambda_c (6)."""
        tau = pin.rnea(self.model, self.data, q, v, acceleration)
        J, _ = self.contact.evaluate(q, v)
        return tau - J.T.dot(lambda_c)


def implicit_force_command(desired: np.ndarray, integral: np.ndarray, gains: HybridGains) -> np.ndarray:
    """lambda_f solving lambda = lambda_c(lambda) of eq. 6.7: lambda_d - K_I z / (1 + K_F) (z = int e_F dt)."""
    return desired - gains.ki * integral / (1.0 + gains.kf)


def motion_acceleration(error: np.ndarray, error_rate: np.ndarray, desired_acceleration: np.ndarray,
                        gains: HybridGains) -> np.ndarray:
    """vdd_d + K_D edot + K_P e (eq. 6.6), e = v_d - v (rad or m), edot its rate."""
    return desired_acceleration + gains.kd * error_rate + gains.kp * error
