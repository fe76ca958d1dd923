"""Independent reference: free-floating bodies joined by revolute-joint constraints (seed 000, eqs. 1-10).

Kłak & Jarzębowska 2020 (seed 000), section "Space Manipulator Constrained Dynamics Modeling Using
Quaternion Description". Written from the paper's equations with numpy/scipy only: no Pinocchio, so it
shares no code and no coordinates with the product's articulated-body (reduced-coordinate) dynamics.

Every body i is a free rigid body with the 13-element state of eq. 1,
    x_i = [r_i, v_i, q_i, w_i]
r_i: centre of mass, world frame (m); v_i = dr_i/dt, world frame (m/s); q_i: unit quaternion rotating
body-frame coordinates into the world frame, stored (x, y, z, w) as everywhere in the project;
w_i: angular velocity in the body frame (rad/s). The velocity vector of eq. 3 is w = [v_1, w_1, v_2, ...].

Dynamics (eqs. 2 and 10): [[M, B^T], [B, 0]] [dw/dt; lam] = [f; mu - 2 alpha dphi/dt - beta^2 phi], with
M = diag(m_i I_3, J_i), f = [F_i (world); T_i - w_i x J_i w_i (body)] (Newton-Euler; the gyroscopic term is
a velocity-dependent generalised force), B the constraint Jacobian (dphi/dt = B w, eq. 3; the constraints
are scleronomic, phi_t = 0) and mu = B dw/dt - d2phi/dt2 (eq. 4). The printed eq. 9 reads
"dphi + 2 alpha dphi + beta^2 phi"; its first term is the second derivative (Baumgarte 1972), which is what
eq. 10 implements.

Revolute joint between parent body i and child body j:
- eq. 5, coincident joint points: phi_1 = r_i + R_i s_i - r_j - R_j s_j (3 rows, world frame, m);
- eq. 6, parallel axes: a_i x a_j = 0 with a_i = R_i u_i, a_j = R_j u_j. The three components of a cross
  product of two unit vectors are not independent (the component along a_i vanishes to first order), and
  keeping all three would make the matrix of eq. 10 singular. As in the paper ("5 [constraints] per each
  link"), we keep the two components along g_k = R_i e_k, k = 1, 2, where (e_1, e_2, u_i) is a right-handed
  orthonormal triad of body i: phi_2k = g_k . (a_i x a_j) = h_k . a_j with h_k = g_k x a_i, fixed in body i.
A joint torque tau acts on the child as +tau a_j and on the parent as -tau a_j (world frame), so it is
internal and conserves momentum.

Optional (eqs. 7-8): conservation of linear momentum p = sum m_i v_i and of angular momentum about the
system centre of mass L = sum m_i (r_i - r_c) x v_i + R_i J_i w_i, appended to B as velocity-level
constraints with the first Baumgarte gain only (the paper: "for the non-holonomic constraint, it is enough
that only the first gain is applied"). With the joint constraints alone the equations already conserve
momentum (the constraint forces come in equal and opposite pairs), so these rows are linearly independent
of the joint rows (B_mom M^-1 B_joint^T = 0) and their multipliers stay at the size of the integration error.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.integrate import solve_ivp

STATE_SIZE = 13   # eq. 1: r (3), v (3), q (4), w (3)
_R, _V, _Q, _W = slice(0, 3), slice(3, 6), slice(6, 10), slice(10, 13)


# ---- quaternion algebra, (x, y, z, w) storage, Hamilton product ------------------------------------
def quat_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a (x) b of quaternions stored (x, y, z, w)."""
    av, aw, bv, bw = a[:3], a[3], b[:3], b[3]
    out = np.empty(4)
    out[:3] = aw * bv + bw * av + cross(av, bv)
    out[3] = aw * bw - av @ bv
    return out


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    return np.array([-q[0], -q[1], -q[2], q[3]])


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """Rotation matrix of a (not necessarily unit) quaternion (x, y, z, w): normalised first."""
    x, y, z, w = q / np.sqrt(q @ q)
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b for 3-vectors (numpy.cross is general and about 30 times slower on single vectors)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def skew(a: np.ndarray) -> np.ndarray:
    """[a]x such that [a]x b = a x b."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


# ---- system description --------------------------------------------------------------------------
@dataclass(frozen=True)
class Body:
    """A rigid body: mass (kg) and inertia tensor about its centre of mass in its body frame (kg m^2)."""

    name: str
    mass: float
    inertia: np.ndarray


@dataclass(frozen=True)
class RevoluteJoint:
    """Revolute joint between bodies `parent` (i) and `child` (j), indices into the body list.

    s_parent, s_child: vectors from each body's centre of mass to the joint point, in that body's frame
    (s_1i^P, s_1j^P of eq. 5, m). axis_parent, axis_child: unit joint axis in each body frame (s_2i^P,
    s_2j^P of eq. 6). rest_rotation: child orientation in the parent frame at zero joint angle.
    """

    name: str
    parent: int
    child: int
    s_parent: np.ndarray
    s_child: np.ndarray
    axis_parent: np.ndarray
    axis_child: np.ndarray
    rest_rotation: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 0.0, 1.0]))

    def normal_pair(self) -> tuple[np.ndarray, np.ndarray]:
        """(e_1, e_2): body-i unit vectors with (e_1, e_2, u_i) right-handed orthonormal."""
        u = self.axis_parent / np.linalg.norm(self.axis_parent)
        trial = np.array([1.0, 0.0, 0.0]) if abs(u[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        e1 = trial - (trial @ u) * u
        e1 /= np.linalg.norm(e1)
        return e1, cross(u, e1)


class ConstrainedBodies:
    """Bodies + revolute joints, integrated as eq. 10 with Lagrange multipliers and Baumgarte terms.

    alpha, beta (1/s): Baumgarte gains of eq. 9 for the joint constraints. momentum_constraints: also
    enforce eqs. 7-8 (gain alpha) about the momenta of the initial state.
    """

    def __init__(self, bodies: list[Body], joints: list[RevoluteJoint], alpha: float, beta: float,
                 momentum_constraints: bool = False):
        self.bodies = list(bodies)
        self.joints = list(joints)
        self.alpha, self.beta = float(alpha), float(beta)
        self.momentum_constraints = momentum_constraints
        self.nb = len(self.bodies)
        self.masses = np.array([b.mass for b in self.bodies])
        self.inertias = [np.asarray(b.inertia, float) for b in self.bodies]
        self._inv_inertias = [np.linalg.inv(j) for j in self.inertias]
        self._normals = [j.normal_pair() for j in self.joints]
        self.n_joint_rows = 5 * len(self.joints)
        self.n_rows = self.n_joint_rows + (6 if momentum_constraints else 0)
        mass_diag = []
        for body in self.bodies:
            mass_diag.append(body.mass * np.eye(3))
            mass_diag.append(np.asarray(body.inertia, float))
        self.mass_matrix = _block_diag(mass_diag)
        self.p0 = np.zeros(3)
        self.l0 = np.zeros(3)
        self.last_multipliers = np.zeros(self.n_rows)

    # ---- state access ------------------------------------------------------------------------
    def body_state(self, x: np.ndarray, i: int):
        """(r, v, q, w, R) of body i from the stacked state (see module docstring for frames)."""
        xi = x[STATE_SIZE * i:STATE_SIZE * (i + 1)]
        return xi[_R], xi[_V], xi[_Q], xi[_W], quat_to_matrix(xi[_Q])

    def unpack(self, x: np.ndarray) -> list[tuple]:
        """body_state of every body (rotation matrices computed once per state)."""
        return [self.body_state(x, i) for i in range(self.nb)]

    @staticmethod
    def pack(states: list[tuple]) -> np.ndarray:
        """Stack per-body (r, v, q, w) into the state vector."""
        return np.concatenate([np.concatenate([r, v, q, w]) for r, v, q, w in states]).astype(float)

    def set_momentum_reference(self, x0: np.ndarray) -> None:
        """p0 and L0 of eqs. 7-8: the momenta of the initial state."""
        self.p0, self.l0 = self.momentum(x0)

    # ---- constraints (eqs. 3-6) --------------------------------------------------------------
    def joint_constraints(self, x: np.ndarray, states: list[tuple] | None = None):
        """phi (5 per joint), B (5 per joint x 6 nb) and mu (eq. 4) for the revolute joints."""
        states = self.unpack(x) if states is None else states
        nb, rows = self.nb, self.n_joint_rows
        phi, B, mu = np.zeros(rows), np.zeros((rows, 6 * nb)), np.zeros(rows)
        for k, joint in enumerate(self.joints):
            i, j = joint.parent, joint.child
            ri, _, _, wi, Ri = states[i]
            rj, _, _, wj, Rj = states[j]
            row = 5 * k
            # eq. 5: r_i + R_i s_i - r_j - R_j s_j = 0; d/dt R s = R (w x s) = -R [s]x w.
            si, sj = joint.s_parent, joint.s_child
            phi[row:row + 3] = ri + Ri @ si - rj - Rj @ sj
            B[row:row + 3, 6 * i:6 * i + 3] = np.eye(3)
            B[row:row + 3, 6 * i + 3:6 * i + 6] = -Ri @ skew(si)
            B[row:row + 3, 6 * j:6 * j + 3] = -np.eye(3)
            B[row:row + 3, 6 * j + 3:6 * j + 6] = Rj @ skew(sj)
            mu[row:row + 3] = -(Ri @ cross(wi, cross(wi, si)) - Rj @ cross(wj, cross(wj, sj)))
            # eq. 6 resolved on g_k = R_i e_k: phi = h_k . a_j, h_k = g_k x a_i (fixed in body i).
            Wi, Wj = Ri @ wi, Rj @ wj                       # angular velocities, world frame
            ai = Ri @ joint.axis_parent
            aj = Rj @ joint.axis_child
            for n, e in enumerate(self._normals[k]):
                h = cross(Ri @ e, ai)
                c = cross(h, aj)                         # d(h . a_j)/dt = (h x a_j) . (W_i - W_j)
                r = row + 3 + n
                phi[r] = h @ aj
                B[r, 6 * i + 3:6 * i + 6] = c @ Ri          # W = R w, w in the body frame
                B[r, 6 * j + 3:6 * j + 6] = -(c @ Rj)
                c_dot = cross(cross(Wi, h), aj) + cross(h, cross(Wj, aj))
                mu[r] = -(c_dot @ (Wi - Wj))
        return phi, B, mu

    def momentum_rows(self, x: np.ndarray, states: list[tuple] | None = None):
        """Eqs. 7-8 as velocity-level constraints: A w = (p, L), and the velocity-product part of dA/dt w."""
        states = self.unpack(x) if states is None else states
        nb = self.nb
        A = np.zeros((6, 6 * nb))
        rc = self.center_of_mass(x)
        p = np.zeros(3)
        gyro = np.zeros(3)
        for i in range(nb):
            r, v, _, w, R = states[i]
            m, J = self.masses[i], self.inertias[i]
            A[0:3, 6 * i:6 * i + 3] = m * np.eye(3)
            A[3:6, 6 * i:6 * i + 3] = m * skew(r - rc)
            A[3:6, 6 * i + 3:6 * i + 6] = R @ J
            p += m * v
            gyro += R @ cross(w, J @ w)
        vc = p / self.masses.sum()
        # d/dt sum m (r_i - r_c) x v_i = sum m (v_i - v_c) x v_i + ... = -v_c x p + (terms in dv/dt);
        # d/dt (R J w) = R (w x J w) + R J dw/dt.
        a_dot_w = np.concatenate([np.zeros(3), -cross(vc, p) + gyro])
        return A, a_dot_w

    # ---- dynamics (eq. 10) -------------------------------------------------------------------
    def accelerations(self, x: np.ndarray, body_torques: np.ndarray, states: list[tuple] | None = None) -> np.ndarray:
        """dw/dt from eq. 10. body_torques: (nb, 3) applied torques, each in its body frame (N m)."""
        states = self.unpack(x) if states is None else states
        nb = self.nb
        f = np.zeros(6 * nb)
        w = np.empty(6 * nb)
        for i in range(nb):
            _, v, _, om, _ = states[i]
            w[6 * i:6 * i + 3] = v
            w[6 * i + 3:6 * i + 6] = om
            f[6 * i + 3:6 * i + 6] = body_torques[i] - cross(om, self.inertias[i] @ om)
        phi, B, mu = self.joint_constraints(x, states)
        rhs_c = mu - 2.0 * self.alpha * (B @ w) - self.beta ** 2 * phi
        if self.momentum_constraints:
            A, a_dot_w = self.momentum_rows(x, states)
            residual = A @ w - np.concatenate([self.p0, self.l0])
            B = np.vstack([B, A])
            rhs_c = np.concatenate([rhs_c, -a_dot_w - self.alpha * residual])
        n = 6 * nb
        kkt = np.zeros((n + self.n_rows, n + self.n_rows))
        kkt[:n, :n] = self.mass_matrix
        kkt[:n, n:] = B.T
        kkt[n:, :n] = B
        sol = np.linalg.solve(kkt, np.concatenate([f, rhs_c]))
        self.last_multipliers = sol[n:]
        return sol[:n]

    def joint_body_torques(self, x: np.ndarray, joint_torques: np.ndarray,
                           states: list[tuple] | None = None) -> np.ndarray:
        """Body-frame torques of the joint actuators: +tau a on the child, -tau a on the parent."""
        states = self.unpack(x) if states is None else states
        out = np.zeros((self.nb, 3))
        for joint, tau in zip(self.joints, joint_torques, strict=True):
            Ri = states[joint.parent][4]
            Rj = states[joint.child][4]
            axis_world = Rj @ joint.axis_child
            out[joint.child] += tau * joint.axis_child
            out[joint.parent] -= tau * (Ri.T @ axis_world)
        return out

    def rhs(self, t: float, x: np.ndarray, joint_torque) -> np.ndarray:
        """dx/dt for solve_ivp; joint_torque(t) -> torques (N m), joint order."""
        states = self.unpack(x)
        torques = self.joint_body_torques(x, np.asarray(joint_torque(t), float), states)
        acc = self.accelerations(x, torques, states)
        dx = np.empty_like(x)
        for i in range(self.nb):
            xi = x[STATE_SIZE * i:STATE_SIZE * (i + 1)]
            d = dx[STATE_SIZE * i:STATE_SIZE * (i + 1)]
            d[_R] = xi[_V]
            d[_V] = acc[6 * i:6 * i + 3]
            # dq/dt = 1/2 q (x) (w, 0): w in the body frame, q body -> world.
            d[_Q] = 0.5 * quat_multiply(xi[_Q], np.array([xi[10], xi[11], xi[12], 0.0]))
            d[_W] = acc[6 * i + 3:6 * i + 6]
        return dx

    def simulate(self, x0: np.ndarray, t_eval: np.ndarray, joint_torque, rtol: float, atol: float):
        """Integrate eq. 10 with scipy's DOP853 (8th order, error-controlled); returns the solve_ivp result."""
        if self.momentum_constraints:
            self.set_momentum_reference(x0)
        result = solve_ivp(self.rhs, (float(t_eval[0]), float(t_eval[-1])), x0, method="DOP853",
                           t_eval=t_eval, rtol=rtol, atol=atol, args=(joint_torque,))
        if not result.success:
            raise RuntimeError(f"reference integration failed: {result.message}")
        return result

    # ---- outputs -----------------------------------------------------------------------------
    def center_of_mass(self, x: np.ndarray) -> np.ndarray:
        return sum(self.masses[i] * self.body_state(x, i)[0] for i in range(self.nb)) / self.masses.sum()

    def momentum(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(p, L): eq. 7 linear momentum and eq. 8 angular momentum about the system CoM, world frame."""
        rc = self.center_of_mass(x)
        p, L = np.zeros(3), np.zeros(3)
        for i in range(self.nb):
            r, v, _, w, R = self.body_state(x, i)
            p += self.masses[i] * v
            L += self.masses[i] * cross(r - rc, v) + R @ (self.inertias[i] @ w)
        return p, L

    def body_momenta_scale(self, x: np.ndarray) -> tuple[float, float]:
        """Largest single-body |m v| and |angular momentum about the system CoM|: the scale of momentum drift."""
        rc = self.center_of_mass(x)
        p_max = l_max = 0.0
        for i in range(self.nb):
            r, v, _, w, R = self.body_state(x, i)
            p_max = max(p_max, float(np.linalg.norm(self.masses[i] * v)))
            l_max = max(l_max, float(np.linalg.norm(self.masses[i] * cross(r - rc, v)
                                                     + R @ (self.inertias[i] @ w))))
        return p_max, l_max

    def constraint_residuals(self, x: np.ndarray) -> tuple[float, float, float]:
        """max |phi_1| (m), max |phi_2| (rad, small-angle), max |dphi/dt| (m/s or rad/s) over the joints."""
        phi, B, _ = self.joint_constraints(x)
        w = np.concatenate([np.concatenate([self.body_state(x, i)[1], self.body_state(x, i)[3]])
                            for i in range(self.nb)])
        position = np.concatenate([phi[5 * k:5 * k + 3] for k in range(len(self.joints))])
        axis = np.concatenate([phi[5 * k + 3:5 * k + 5] for k in range(len(self.joints))])
        return float(np.abs(position).max()), float(np.abs(axis).max()), float(np.abs(B @ w).max())

    def joint_angle(self, x: np.ndarray, k: int) -> float:
        """Rotation (rad, in (-pi, pi]) of the child about the joint axis, relative to the rest rotation."""
        joint = self.joints[k]
        qi = self.body_state(x, joint.parent)[2]
        qj = self.body_state(x, joint.child)[2]
        rel = quat_multiply(quat_conjugate(joint.rest_rotation),
                            quat_multiply(quat_conjugate(qi), qj))
        rel /= np.linalg.norm(rel)
        return float(2.0 * np.arctan2(rel[:3] @ joint.axis_parent, rel[3]))

    def point_position(self, x: np.ndarray, i: int, offset: np.ndarray) -> np.ndarray:
        """World position of the point at `offset` (body-i frame, from its CoM)."""
        r, _, _, _, R = self.body_state(x, i)
        return r + R @ offset


def _block_diag(blocks: list[np.ndarray]) -> np.ndarray:
    n = sum(b.shape[0] for b in blocks)
    out = np.zeros((n, n))
    k = 0
    for b in blocks:
        out[k:k + b.shape[0], k:k + b.shape[0]] = b
        k += b.shape[0]
    return out


# ---- the numerical study of seed 000 (rigid case) ---------------------------------------------------
# Figures from the section "Numerical Study of the Rigid-Flexible Space Manipulator Model" of seed 000;
# geometry as read from its Fig. 1 and stated in urdf/planar_two_link.urdf. Typed here from the paper, not
# read from the URDF, so a slip in the URDF shows up as a disagreement.
BASE_MASS = 4.0            # kg
BASE_INERTIA_Z = 0.4       # kg m^2
BASE_SIDE = 1.0            # m: joint 1 at the middle of a side, BASE_SIDE / 2 from the base centre
LINK_LENGTH = 1.0          # m, centre of mass at mid-length
LINK_MASS = 1.0            # kg
LINK_INERTIA_Z = 0.1       # kg m^2
# Not in the paper (out-of-plane, does not enter planar motion): isotropic base; slender links with
# 0.01 kg m^2 about their own axis (see the URDF header).
BASE_INERTIA = np.diag([BASE_INERTIA_Z] * 3)
LINK_INERTIA = np.diag([0.01, LINK_INERTIA_Z, LINK_INERTIA_Z])
TORQUE_AMPLITUDE = 0.5     # N m, both joints
TORQUE_PERIOD = 1.0        # s
DURATION = 5.0             # s


def seed000_joint_torque(t: float) -> np.ndarray:
    """Open-loop input of the study: 0.5 N m sinusoid of period 1 s about z, the same on both joints.

    The paper gives amplitude and period, starts from rest and plots from t = 0; we read it as a sine
    (zero torque at t = 0, no step at the start).
    """
    tau = TORQUE_AMPLITUDE * np.sin(2.0 * np.pi * t / TORQUE_PERIOD)
    return np.array([tau, tau])


def seed000_two_link(alpha: float, beta: float, momentum_constraints: bool = False):
    """(ConstrainedBodies, x0) of the study: base + 2 links, arm stretched along +x, at rest (all w = 0).

    World frame = base frame at t = 0, origin at the base centre of mass; joint axes along z.
    """
    z = np.array([0.0, 0.0, 1.0])
    half = 0.5 * LINK_LENGTH
    bodies = [Body("base", BASE_MASS, BASE_INERTIA), Body("link_1", LINK_MASS, LINK_INERTIA),
              Body("link_2", LINK_MASS, LINK_INERTIA)]
    joints = [
        RevoluteJoint("joint_1", 0, 1, np.array([0.5 * BASE_SIDE, 0.0, 0.0]), np.array([-half, 0.0, 0.0]), z, z),
        RevoluteJoint("joint_2", 1, 2, np.array([half, 0.0, 0.0]), np.array([-half, 0.0, 0.0]), z, z),
    ]
    identity, zero = np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3)
    x0 = ConstrainedBodies.pack([
        (zero, zero, identity, zero),
        (np.array([0.5 * BASE_SIDE + half, 0.0, 0.0]), zero, identity, zero),
        (np.array([0.5 * BASE_SIDE + LINK_LENGTH + half, 0.0, 0.0]), zero, identity, zero),
    ])
    return ConstrainedBodies(bodies, joints, alpha, beta, momentum_constraints), x0


END_EFFECTOR_OFFSET = np.array([0.5 * LINK_LENGTH, 0.0, 0.0])   # tip of link 2 from its CoM, link-2 frame
