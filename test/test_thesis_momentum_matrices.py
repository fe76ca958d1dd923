"""Seed 004's momentum constraint matrices (eqs. 2.13-2.25, 2.31-2.32) built from Pinocchio, checked against
the thesis's own definitions written out here body by body.

Independent reference: only body placements (positions, rotations), joint axes and the URDF mass properties
come from Pinocchio's forward kinematics; velocities follow eqs. 2.3-2.10 and momenta eqs. 2.11-2.12, summed
in plain numpy. The product code goes through Pinocchio's centroidal map and a change of velocity
coordinates instead, so a wrong frame, sign or reference point shows up as an O(1) difference. Both sides
are exact formulas: they agree to round-off, ~1e-15 relative; the tolerance 1e-11 relative leaves four
orders of margin for the conditioning of the 18-dimensional products.
"""
import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_monitoring.momentum_matrices import ThesisMomentumModel
from space_robot_monitoring.system_partition import subtree_partition

RTOL = 1e-11
AXES = {"X": np.array([1.0, 0, 0]), "Y": np.array([0, 1.0, 0]), "Z": np.array([0, 0, 1.0])}


@pytest.fixture(scope="module", params=["as_published", "offset_centroids"])
def thesis_system(request):
    """The thesis robot; and a variant whose base and target centroids are off their joint frames, so that
    the centroid terms of the velocity map (V_b is the centroid's velocity) are exercised too."""
    system = SystemModel(load_model_config("config/models/thesis_6dof.yaml"))
    if request.param == "offset_centroids":
        model = system.model
        for subtree, lever in (("robot", [0.12, -0.07, 0.05]), ("target", [-0.2, 0.1, 0.15])):
            joint = system.subtree(subtree).root_joint_id
            inertia = model.inertias[joint]
            model.inertias[joint] = pin.Inertia(inertia.mass, np.array(lever), inertia.inertia)
    return system


def _skew(r):
    return np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])


def _random_configuration(system, seed):
    """Random base and target poses (free flyers) and joint positions."""
    rng = np.random.default_rng(seed)
    return pin.integrate(system.model, system.neutral(), rng.normal(scale=0.7, size=system.model.nv))


class ThesisBodies:
    """Bodies of the thesis robot (base b, links 1..n) and target t, with the thesis's kinematic quantities."""

    def __init__(self, system, q):
        model = system.model
        data = model.createData()
        pin.framesForwardKinematics(model, data, q)
        robot, target = subtree_partition(system, "robot"), subtree_partition(system, "target")
        self.joints = [j for j in robot.body_joint_ids if j != robot.root_joint_id]
        self.base = robot.root_joint_id
        self.target = target.root_joint_id

        def body(j):
            inertia, placement = model.inertias[j], data.oMi[j]
            rotation = placement.rotation
            return (inertia.mass, placement.act(inertia.lever), rotation @ inertia.inertia @ rotation.T)

        self.m_b, self.r_b, self.I_b = body(self.base)
        self.links = [body(j) for j in self.joints]
        self.m_t, self.r_t, self.I_t = body(self.target)
        self.r_ee = data.oMf[model.getFrameId("end_effector")].translation.copy()
        # joint axis k_j and position c_j in the world frame; prismatic or revolute (from the joint type)
        self.axes, self.origins, self.prismatic = [], [], []
        for j in self.joints:
            short = model.joints[j].shortname()           # e.g. JointModelRZ, JointModelPX
            self.axes.append(data.oMi[j].rotation @ AXES[short[-1]])
            self.origins.append(data.oMi[j].translation.copy())
            self.prismatic.append(short[-2] == "P")
        self.n = len(self.joints)

    def linear_jacobian(self, point, upto):
        """Eq. 2.5: J_L = [k_1 x (r - c_1), ..., k_i x (r - c_i), 0...] (k_j for a prismatic joint)."""
        cols = np.zeros((3, self.n))
        for j in range(upto):
            k = self.axes[j]
            cols[:, j] = k if self.prismatic[j] else np.cross(k, point - self.origins[j])
        return cols

    def angular_jacobian(self, upto):
        """Eq. 2.9: J_A = [k_1, ..., k_i, 0...] (zero column for a prismatic joint)."""
        cols = np.zeros((3, self.n))
        for j in range(upto):
            cols[:, j] = 0.0 if self.prismatic[j] else self.axes[j]
        return cols

    def momentum(self, theta, with_target):
        """[P; L about r_b] (eqs. 2.11-2.12) for theta = [V_b, Omega_b, qdot(, omega_t, v_t)], all world axes."""
        n = self.n
        v_b, w_b, qdot = theta[:3], theta[3:6], theta[6:6 + n]
        p = self.m_b * v_b                                    # base: V_b is its centroid velocity
        ang = self.I_b @ w_b                                  # r_b/b = 0
        for i, (m, r, inertia) in enumerate(self.links):
            v_i = v_b + np.cross(w_b, r - self.r_b) + self.linear_jacobian(r, i + 1) @ qdot      # eqs. 2.3-2.4
            w_i = w_b + self.angular_jacobian(i + 1) @ qdot                                       # eqs. 2.8-2.9
            p += m * v_i
            ang += inertia @ w_i + m * np.cross(r - self.r_b, v_i)
        if with_target:
            w_t_rel, v_t_rel = theta[6 + n:9 + n], theta[9 + n:12 + n]
            v_t = (v_b + np.cross(w_b, self.r_t - self.r_b) + self.linear_jacobian(self.r_t, n) @ qdot
                   + np.cross(w_t_rel, self.r_t - self.r_ee) + v_t_rel)                          # eq. 2.7
            w_t = w_b + self.angular_jacobian(n) @ qdot + w_t_rel                                 # eq. 2.10
            p += self.m_t * v_t
            ang += self.I_t @ w_t + self.m_t * np.cross(self.r_t - self.r_b, v_t)
        return np.concatenate((p, ang))


def _matrices(system, q, with_target):
    robot, target = subtree_partition(system, "robot"), subtree_partition(system, "target")
    builder = ThesisMomentumModel(system, robot, target, system.model.getFrameId("end_effector"))
    return builder.compute(q, with_target)


@pytest.mark.parametrize("with_target", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_constraint_matrix_equals_direct_sum_over_bodies(thesis_system, with_target, seed):
    """B theta_dot (eq. 2.13 / 2.32) equals the momentum summed body by body (eqs. 2.3-2.12)."""
    q = _random_configuration(thesis_system, seed)
    bodies = ThesisBodies(thesis_system, q)
    mats = _matrices(thesis_system, q, with_target)
    n_theta = mats.B.shape[1]
    assert n_theta == 6 + bodies.n + (6 if with_target else 0)
    reference = np.column_stack([bodies.momentum(e, with_target) for e in np.eye(n_theta)])
    np.testing.assert_allclose(mats.B, reference, rtol=0, atol=RTOL * np.abs(reference).max())


@pytest.mark.parametrize("seed", [3, 4])
def test_velocity_map_reproduces_thesis_body_velocities(thesis_system, seed):
    """v = T theta_dot gives, through Pinocchio's kinematics, the velocities of eqs. 2.3, 2.7, 2.8 and 2.10."""
    q = _random_configuration(thesis_system, seed)
    bodies = ThesisBodies(thesis_system, q)
    mats = _matrices(thesis_system, q, True)
    theta = np.random.default_rng(seed).normal(size=mats.B.shape[1])
    v = mats.to_pinocchio @ theta
    model = thesis_system.model
    data = model.createData()
    pin.forwardKinematics(model, data, q, v)
    n = bodies.n

    def centroid_velocity(j):
        twist = pin.getVelocity(model, data, j, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        lever = data.oMi[j].rotation @ model.inertias[j].lever
        return twist.linear + np.cross(twist.angular, lever), twist.angular

    v_b, w_b = centroid_velocity(bodies.base)
    np.testing.assert_allclose(np.r_[v_b, w_b], theta[:6], atol=1e-12)
    v_t, w_t = centroid_velocity(bodies.target)
    expected_v_t = (theta[:3] + np.cross(theta[3:6], bodies.r_t - bodies.r_b)
                    + bodies.linear_jacobian(bodies.r_t, n) @ theta[6:6 + n]
                    + np.cross(theta[6 + n:9 + n], bodies.r_t - bodies.r_ee) + theta[9 + n:])
    expected_w_t = theta[3:6] + bodies.angular_jacobian(n) @ theta[6:6 + n] + theta[6 + n:9 + n]
    np.testing.assert_allclose(v_t, expected_v_t, atol=1e-11)
    np.testing.assert_allclose(w_t, expected_w_t, atol=1e-12)


def test_printed_block_formulas(thesis_system):
    """Blocks of eq. 2.13 against their printed form: eqs. 2.14-2.18 (sums over the robot's bodies, plus the
    target with J_L at its centroid when attached), 2.19 and 2.21 (target columns). Eqs. 2.20 and 2.22 are
    not checked: as printed they take the target's moment about the end effector and the opposite sign,
    inconsistent with eq. 2.12 (the direct-sum test above checks those columns against the definition)."""
    q = _random_configuration(thesis_system, 5)
    bodies = ThesisBodies(thesis_system, q)
    n = bodies.n
    for with_target in (False, True):
        mats = _matrices(thesis_system, q, with_target)
        others = [(m, r, inertia, bodies.linear_jacobian(r, i + 1), bodies.angular_jacobian(i + 1))
                  for i, (m, r, inertia) in enumerate(bodies.links)]
        if with_target:
            others.append((bodies.m_t, bodies.r_t, bodies.I_t, bodies.linear_jacobian(bodies.r_t, n),
                           bodies.angular_jacobian(n)))
        total_mass = bodies.m_b + sum(o[0] for o in others)
        h_vb = total_mass * np.eye(3)                                                         # eq. 2.14
        h_vbob = -sum(m * _skew(r - bodies.r_b) for m, r, *_ in others)                      # eq. 2.15
        h_vbq = sum(m * jl for m, _, _, jl, _ in others)                                      # eq. 2.16
        h_ob = sum(inertia + m * _skew(r - bodies.r_b).T @ _skew(r - bodies.r_b)
                   for m, r, inertia, *_ in others) + bodies.I_b                               # eq. 2.17, 2.24
        h_obq = sum(inertia @ ja + m * _skew(r - bodies.r_b) @ jl for m, r, inertia, jl, ja in others)  # 2.18
        scale = np.abs(mats.B).max()
        for block, expected in ((("P", "V_b"), h_vb), (("P", "Omega_b"), h_vbob), (("P", "qdot"), h_vbq),
                                (("L", "V_b"), h_vbob.T), (("L", "Omega_b"), h_ob), (("L", "qdot"), h_obq)):
            np.testing.assert_allclose(mats.block(*block), expected, rtol=0, atol=RTOL * scale, err_msg=str(block))
        if with_target:
            np.testing.assert_allclose(mats.block("P", "omega_t"), -bodies.m_t * _skew(bodies.r_t - bodies.r_ee),
                                       rtol=0, atol=RTOL * scale)                               # eq. 2.19
            np.testing.assert_allclose(mats.block("P", "v_t"), bodies.m_t * np.eye(3), rtol=0,
                                       atol=RTOL * scale)                                       # eq. 2.21


def test_mechanical_connection_from_centroidal_map_equals_joint_space_inertia_blocks(thesis_system):
    """K = -A_G,b^-1 A_G,m (centroidal map) equals -H_b^-1 H_bm (CRBA blocks): two Pinocchio algorithms."""
    from space_robot_monitoring.mechanical_connection import Fibre, MechanicalConnection
    from space_robot_monitoring.momentum_matrices import CentroidalMomentum

    model = thesis_system.model
    robot = subtree_partition(thesis_system, "robot")
    connection = MechanicalConnection(model, [CentroidalMomentum(model)], [Fibre(robot.root_joint_id, robot.base_v)],
                                      robot.joint_v)
    q = _random_configuration(thesis_system, 6)
    k, _, _ = connection.connection(q)
    h = pin.crba(model, model.createData(), q)
    h = np.triu(h) + np.triu(h, 1).T
    b, m = robot.base_v, robot.joint_v
    expected = -np.linalg.solve(h[np.ix_(b, b)], h[np.ix_(b, m)])
    np.testing.assert_allclose(k, expected, rtol=0, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("with_target", [False, True])
@pytest.mark.parametrize("seed", [7, 8])
def test_monitor_constraint_matrix_equals_direct_sum_over_bodies(thesis_system, with_target, seed):
    """The monitor's per-cycle B (ThesisMomentumModel.constraint_matrix: A_G with the target folded into the
    robot columns, no velocity map T built) against the bodies of eqs. 2.3-2.12, and equal to compute()'s
    B = H T: the same products in another order, so round-off (measured 3e-16 relative; 1e-14 allowed)."""
    model = thesis_system.model
    q = _random_configuration(thesis_system, seed)
    robot, target = subtree_partition(thesis_system, "robot"), subtree_partition(thesis_system, "target")
    ee = model.getFrameId("end_effector")
    builder = ThesisMomentumModel(thesis_system, robot, target, ee)
    ag = builder.centroidal.matrix(q)                 # leaves the kinematics at q in builder.centroidal.data
    data = model.createData()
    pin.computeJointJacobians(model, data, q)
    position = pin.updateFramePlacement(model, data, ee).translation.copy()
    jacobian = pin.getFrameJacobian(model, data, ee, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    fast = builder.constraint_matrix(with_target, ag, jacobian, position)
    bodies = ThesisBodies(thesis_system, q)
    reference = np.column_stack([bodies.momentum(e, with_target) for e in np.eye(fast.shape[1])])
    np.testing.assert_allclose(fast, reference, rtol=0, atol=RTOL * np.abs(reference).max())
    expected = builder.compute(q, with_target).B
    np.testing.assert_allclose(fast, expected, rtol=0, atol=1e-14 * np.abs(expected).max())
