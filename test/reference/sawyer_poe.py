"""Independent reference for the Sawyer arm: product-of-exponentials kinematics and Lie-group inverse dynamics.

Seed 001 (Korczyk et al., "Modeling of an on-orbit maintenance robotic arm test-bed"):
- forward kinematics by the product of exponentials, eq. 8: T_sn = exp([S_1] th_1) ... exp([S_n] th_n) M_sn,
  with space-frame screw axes S_i = (w_i, v_i), |w_i| = 1, v_i = -w_i x q_i (eq. 9; q_i a point on the axis),
  printed for Sawyer in eqs. 10-11 (SEED_SCREW_AXES below) and [S] as in eq. 12;
- inverse dynamics by the recursive Lie-group algorithm of Park, Bobrow & Ploen (seed refs. [6]-[8]), here in
  the form of Lynch & Park, "Modern Robotics" (2017), sec. 8.3.2 (the paper's ref. [9] follows that book):
      T_{i,i-1} = exp(-[A_i] th_i) M_{i,i-1}
      V_i       = Ad_{T_{i,i-1}} V_{i-1} + A_i dth_i
      dV_i      = Ad_{T_{i,i-1}} dV_{i-1} + ad_{V_i} A_i dth_i + A_i ddth_i
      F_i       = Ad_{T_{i+1,i}}^T F_{i+1} + G_i dV_i - ad_{V_i}^T G_i V_i
      tau_i     = F_i^T A_i
  with dV_0 = (0, 0, 0, -g), i.e. the seed's dV_0 = [0, 0, 0, 0, 0, g] for g = (0, 0, -g) (eq. 6 and below).

numpy only: no Pinocchio, no URDF parser. The kinematic and inertial figures are transcribed from
/work/shared/reference/sawyer_parameters.md (values of upstream sawyer_base.urdf.xacro), not read from the
project's urdf/sawyer_arm.urdf.xacro, so a transcription slip in either copy shows up as a disagreement.

Conventions: twists and wrenches are ordered (angular, linear) as in the seed and in Modern Robotics
(Pinocchio orders them (linear, angular)). The space frame {s} is the URDF root link `base` of the arm
(x forward, z up). Reference link frame {i} (i = 1..7, carried by joint right_j{i-1}) has its origin at the
centre of mass of URDF link right_l{i-1} and, in the zero configuration, the axes of {s}: deliberately
unlike Pinocchio's joint frames. The head (fixed to right_l0, head_pan kept fixed as in the project URDF)
is lumped into {1}. Units: m, rad, kg, kg m^2, N, N m, s.
"""
from __future__ import annotations

import numpy as np

# ---- figures transcribed from sawyer_parameters.md ----------------------------------------------------------
# (joint, parent link, child link, origin xyz, origin rpy, moves?) in tree order. All moving joints turn about
# their local z axis. right_arm_mount is the identity (upstream: base -> right_arm_mount -> right_arm_base_link).
JOINTS = (
    ("right_arm_mount", "base", "right_arm_base_link", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), False),
    ("right_j0", "right_arm_base_link", "right_l0", (0.0, 0.0, 0.08), (0.0, 0.0, 0.0), True),
    ("head_pan", "right_l0", "head", (0.0, 0.0, 0.2965), (0.0, 0.0, 0.0), False),
    ("right_j1", "right_l0", "right_l1", (0.081, 0.05, 0.237), (-1.5707963, 1.5707963, 0.0), True),
    ("right_j2", "right_l1", "right_l2", (0.0, -0.14, 0.1425), (1.5707963, 0.0, 0.0), True),
    ("right_j3", "right_l2", "right_l3", (0.0, -0.042, 0.26), (-1.5707963, 0.0, 0.0), True),
    ("right_j4", "right_l3", "right_l4", (0.0, -0.125, -0.1265), (1.5707963, 0.0, 0.0), True),
    ("right_j5", "right_l4", "right_l5", (0.0, 0.031, 0.275), (-1.5707963, 0.0, 0.0), True),
    ("right_j6", "right_l5", "right_l6", (0.0, -0.11, 0.1053), (-1.5707963, -0.17453, 3.1416), True),
    ("right_hand", "right_l6", "right_hand", (0.0, 0.0, 0.0245), (0.0, 0.0, 1.570796), False),
)

# link: (mass, CoM in the link frame, (ixx, ixy, ixz, iyy, iyz, izz) about the CoM in link axes)
LINKS = {
    "right_arm_base_link": (2.0687, (-0.0006241, -2.8025e-05, 0.065404),
                            (0.0067599, -4.2024e-05, -6.1904e-07, 0.0067877, 1.5888e-05, 0.0074031)),
    "right_l0": (5.3213, (0.024366, 0.010969, 0.14363),
                 (0.053314, 0.0047093, 0.011734, 0.057902, 0.0080179, 0.023659)),
    "head": (1.5795, (0.0053207, -2.6549e-05, 0.1021),
             (0.011833, -4.4669e-06, 4.9425e-05, 0.0082709, 4.2124e-07, 0.0049661)),
    "right_l1": (4.505, (-0.0030849, -0.026811, 0.092521),
                 (0.022398, -0.00023986, -0.00029362, 0.014613, -0.0060875, 0.017295)),
    "right_l2": (1.745, (-0.00016044, -0.014967, 0.13582),
                 (0.025506, 4.4101e-06, 1.4955e-05, 0.0253, -0.0033204, 0.0034179)),
    "right_l3": (2.5097, (-0.0048135, -0.0281, -0.084154),
                 (0.01016, -9.7452e-06, 0.00026624, 0.0065685, 0.0030316, 0.0069078)),
    "right_l4": (1.1136, (-0.0018844, 0.0069001, 0.1341),
                 (0.013557, 1.8109e-05, 0.00013523, 0.013555, 0.0010561, 0.0013658)),
    "right_l5": (1.5625, (0.0061133, -0.023697, 0.076416),
                 (0.0047328, 0.00011526, 4.6269e-05, 0.0029676, -0.0011557, 0.0031762)),
    "right_l6": (0.3292, (-8.0726e-06, 0.0085838, -0.0049566),
                 (0.00031105, 1.4771e-06, -3.7074e-07, 0.00021549, -8.4533e-06, 0.00035976)),
}

ARM_JOINTS = ("right_j0", "right_j1", "right_j2", "right_j3", "right_j4", "right_j5", "right_j6")
MOVING_LINKS = ("right_l0", "right_l1", "right_l2", "right_l3", "right_l4", "right_l5", "right_l6")
# Bodies carried by reference frame {i}: the moving link and whatever is fixed to it.
CARRIED = (("right_l0", "head"), ("right_l1",), ("right_l2",), ("right_l3",), ("right_l4",), ("right_l5",),
           ("right_l6",))
END_FRAME = "right_hand"

# Seed 001 eqs. 10-11, rows S_1..S_7 = (w, v) in the space frame, as printed (m, rounded to 0.1-1 mm).
SEED_SCREW_AXES = np.array([
    [0, 0, 1, 0, 0, 0],
    [0, 1, 0, -0.317, 0, 0.081],
    [1, 0, 0, 0, 0.317, -0.1925],
    [0, 1, 0, -0.317, 0, 0.481],
    [1, 0, 0, 0, 0.317, -0.024],
    [0, 1, 0, -0.317, 0, 0.881],
    [1, 0, 0, 0, 0.317, -0.1603],
], dtype=float)


# ---- SE(3) primitives ((angular, linear) ordering) ------------------------------------------------------------
def skew(p) -> np.ndarray:
    """[p] in so(3): skew(p) @ x = p x x."""
    return np.array([[0.0, -p[2], p[1]], [p[2], 0.0, -p[0]], [-p[1], p[0], 0.0]])


def rpy_matrix(rpy) -> np.ndarray:
    """URDF rpy (fixed axes x, then y, then z): R = Rz(yaw) Ry(pitch) Rx(roll)."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return rz @ ry @ rx


def transform(rotation, position) -> np.ndarray:
    t = np.eye(4)
    t[:3, :3] = rotation
    t[:3, 3] = position
    return t


def inverse(t) -> np.ndarray:
    r, p = t[:3, :3], t[:3, 3]
    return transform(r.T, -r.T @ p)


def adjoint(t) -> np.ndarray:
    """Ad_T = [[R, 0], [[p] R, R]] (Modern Robotics eq. 3.83)."""
    r, p = t[:3, :3], t[:3, 3]
    ad = np.zeros((6, 6))
    ad[:3, :3] = r
    ad[3:, 3:] = r
    ad[3:, :3] = skew(p) @ r
    return ad


def ad(twist) -> np.ndarray:
    """ad_V = [[[w], 0], [[v], [w]]] (Modern Robotics eq. 8.38); its transpose is the seed's ad*_V (eq. 4)."""
    w, v = twist[:3], twist[3:]
    out = np.zeros((6, 6))
    out[:3, :3] = skew(w)
    out[3:, 3:] = skew(w)
    out[3:, :3] = skew(v)
    return out


def exp_screw(screw, theta) -> np.ndarray:
    """exp([S] theta) for a unit rotational screw axis (|w| = 1), Modern Robotics eq. 3.88 (Rodrigues)."""
    w, v = np.asarray(screw[:3], float), np.asarray(screw[3:], float)
    k = skew(w)
    s, c = np.sin(theta), np.cos(theta)
    rotation = np.eye(3) + s * k + (1.0 - c) * k @ k
    g = np.eye(3) * theta + (1.0 - c) * k + (theta - s) * k @ k
    return transform(rotation, g @ v)


def spatial_inertia(mass, inertia) -> np.ndarray:
    """G_b = diag(I_c, m I_3) of a frame at the CoM with the link's axes (Modern Robotics eq. 8.32)."""
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    g = np.zeros((6, 6))
    g[:3, :3] = [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]
    g[3:, 3:] = mass * np.eye(3)
    return g


# ---- zero configuration from the joint table ---------------------------------------------------------------
def home_link_poses() -> dict[str, np.ndarray]:
    """Pose (4x4, space frame {s} = link `base`) of every URDF link at zero joint angles.

    A URDF joint frame coincides with its child link's frame, so the joint axis is the child's z axis.
    """
    poses = {"base": np.eye(4)}
    for _, parent, child, xyz, rpy, _moves in JOINTS:
        poses[child] = poses[parent] @ transform(rpy_matrix(rpy), xyz)
    return poses


def space_screw_axes() -> np.ndarray:
    """S_i = (w_i, -w_i x q_i) of the seven arm joints from the URDF origins (seed 001 eq. 9), rows S_1..S_7."""
    poses = home_link_poses()
    child = {name: c for name, _, c, *_ in JOINTS}
    rows = []
    for joint in ARM_JOINTS:
        pose = poses[child[joint]]
        w, q = pose[:3, 2], pose[:3, 3]
        rows.append(np.concatenate([w, -np.cross(w, q)]))
    return np.array(rows)


def end_home() -> np.ndarray:
    """M_sn of eq. 8: pose of the end frame `right_hand` at zero joint angles, space frame."""
    return home_link_poses()[END_FRAME]


def poe_forward_kinematics(theta, screw_axes=None, home=None) -> np.ndarray:
    """Seed 001 eq. 8: T_sn = exp([S_1] th_1) ... exp([S_7] th_7) M_sn (space frame, m)."""
    screw_axes = space_screw_axes() if screw_axes is None else screw_axes
    t = np.eye(4)
    for s, th in zip(screw_axes, theta):
        t = t @ exp_screw(s, th)
    return t @ (end_home() if home is None else home)


# ---- recursive Lie-group inverse dynamics ------------------------------------------------------------------
class LieGroupInverseDynamics:
    """Modern Robotics algorithm 8.3.2 on the seven reference link frames {1}..{7} (module docstring)."""

    def __init__(self, gravity=(0.0, 0.0, -9.81)):
        self.gravity = np.asarray(gravity, float)
        poses = home_link_poses()
        self.body_home = poses
        # {i}: origin at right_l{i-1}'s CoM, axes of {s} at home.
        self.frame_home = [np.eye(4)]
        for link in MOVING_LINKS:
            com = LINKS[link][1]
            self.frame_home.append(transform(np.eye(3), (poses[link] @ np.r_[com, 1.0])[:3]))
        screws = space_screw_axes()
        self.screw_axes = screws
        # A_i = Ad_{M_i^{-1}} S_i: joint i's screw axis in {i}.
        self.axes = [adjoint(inverse(self.frame_home[i + 1])) @ screws[i] for i in range(7)]
        # M_{i-1,i}, and M_{i,i-1} = M_{i-1,i}^{-1}.
        self.m_prev = [inverse(self.frame_home[i]) @ self.frame_home[i + 1] for i in range(7)]
        # G_i: every carried body's G_b moved into {i}, G_i = Ad_{T_bi}^T G_b Ad_{T_bi} (MR eq. 8.42).
        self.inertias = []
        self.carried = []   # per frame: [(name, mass, CoM in {i}, I_c in {i} axes)]
        for i, bodies in enumerate(CARRIED, start=1):
            g_i = np.zeros((6, 6))
            carried = []
            for body in bodies:
                mass, com, inertia = LINKS[body]
                com_pose = poses[body] @ transform(np.eye(3), com)      # CoM frame with the link's axes
                t_bi = inverse(com_pose) @ self.frame_home[i]
                g_b = spatial_inertia(mass, inertia)
                g_i += adjoint(t_bi).T @ g_b @ adjoint(t_bi)
                t_ib = inverse(t_bi)
                carried.append((body, mass, t_ib[:3, 3], t_ib[:3, :3] @ g_b[:3, :3] @ t_ib[:3, :3].T))
            self.inertias.append(g_i)
            self.carried.append(carried)

    def forward(self, theta, dtheta, ddtheta, dv0):
        """Forward recursion: poses T_si of {i} in {s}, body twists V_i and their rates dV_i (in {i})."""
        t_s = np.eye(4)
        v = np.zeros(6)
        dv = np.asarray(dv0, float)
        poses, twists, rates, transforms = [], [], [], []
        for i in range(7):
            a = self.axes[i]
            t_prev = exp_screw(-a, theta[i]) @ inverse(self.m_prev[i])     # T_{i,i-1}
            ad_t = adjoint(t_prev)
            v = ad_t @ v + a * dtheta[i]
            dv = ad_t @ dv + ad(v) @ a * dtheta[i] + a * ddtheta[i]
            t_s = t_s @ inverse(t_prev)
            poses.append(t_s)
            twists.append(v)
            rates.append(dv)
            transforms.append(t_prev)
        return poses, twists, rates, transforms

    def inverse_dynamics(self, theta, dtheta, ddtheta) -> np.ndarray:
        """Joint torques (N m) for the joint path (rad, rad/s, rad/s^2) under gravity, no tip wrench."""
        dv0 = np.concatenate([np.zeros(3), -self.gravity])
        _, twists, rates, transforms = self.forward(theta, dtheta, ddtheta, dv0)
        tau = np.zeros(7)
        f = np.zeros(6)
        ad_next = np.zeros((6, 6))          # Ad_{T_{i+1,i}}; F_8 = 0 (no tip wrench)
        for i in reversed(range(7)):
            g, v = self.inertias[i], twists[i]
            f = ad_next.T @ f + g @ rates[i] - ad(v).T @ g @ v
            tau[i] = f @ self.axes[i]
            ad_next = adjoint(transforms[i])
        return tau

    def body_motion(self, theta, dtheta, ddtheta):
        """Motion of every massive body (space frame {s}, no gravity): for the seed 001 eqs. 14-21 sums.

        Returns dicts with name, mass, inertia (about the CoM, {s} axes), r (CoM), dr, ddr (its velocity and
        acceleration), w, dw (angular velocity and acceleration), all in {s}. The arm's base link is fixed.
        """
        poses, twists, rates, _ = self.forward(theta, dtheta, ddtheta, np.zeros(6))
        mass, com, inertia = LINKS["right_arm_base_link"]
        base_pose = self.body_home["right_arm_base_link"]
        r_base = base_pose[:3, :3]
        bodies = [dict(name="right_arm_base_link", mass=mass,
                       inertia=r_base @ spatial_inertia(mass, inertia)[:3, :3] @ r_base.T,
                       r=(base_pose @ np.r_[com, 1.0])[:3], dr=np.zeros(3), ddr=np.zeros(3),
                       w=np.zeros(3), dw=np.zeros(3))]
        for i in range(7):
            rot, p = poses[i][:3, :3], poses[i][:3, 3]
            w_b, v_b = twists[i][:3], twists[i][3:]
            dw_b, dv_b = rates[i][:3], rates[i][3:]
            for name, mass, c, inertia_c in self.carried[i]:
                u = v_b + np.cross(w_b, c)                                   # CoM velocity, {i} coordinates
                acc = dv_b + np.cross(dw_b, c) + np.cross(w_b, u)            # CoM acceleration, {i} coordinates
                bodies.append(dict(name=name, mass=mass, inertia=rot @ inertia_c @ rot.T, r=p + rot @ c,
                                   dr=rot @ u, ddr=rot @ acc, w=rot @ w_b, dw=rot @ dw_b))
        return bodies
