"""Seed 004 sec. 4.2 (eqs. 4.1-4.16): Table 4.1 reproduced, Y_h's closed form, and what Y_h does not test.

Table 4.1 (thesis robot, all joints at zero): rank(Y_h) = 3 for linear momentum ("holonomic") and 2 for
angular momentum ("nonholonomic"), with and without the target. yh_criterion.py shows that
Y_h = A[:, :m]^T (A A^T)^-1, so these ranks are those of the V_b columns of A: 3 for M E_3, 2 for the skew
matrix [M (r_G - r_b) x]. The tests below check the closed form against the literal algorithm, then the
dependence on ordering and reference point, and give two integrable constraints that Y_h calls
"nonholonomic".
"""
import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_monitoring.frobenius import involutivity_check
from space_robot_monitoring.lie_algebra import skew
from space_robot_monitoring.mechanical_connection import Fibre, MechanicalConnection, curvature_figures
from space_robot_monitoring.momentum_matrices import CentroidalMomentum, ThesisMomentumModel
from space_robot_monitoring.system_partition import subtree_partition
from space_robot_monitoring.yh_criterion import (
    thesis_criteria_closed_form,
    thesis_criterion,
    yh_augmented_svd,
    yh_closed_form,
)

# Y_h's singular values are O(1/sigma_min(A)); round-off leaves the structurally zero ones at ~1e-16 of
# that. A rank threshold of 1e-8 of ||A+|| separates the two by eight orders either way.
RANK_RTOL = 1e-8


@pytest.fixture(scope="module")
def thesis_system():
    return SystemModel(load_model_config("config/models/thesis_6dof.yaml"))


def _builder(system):
    robot = subtree_partition(system, "robot")
    target = subtree_partition(system, "target")
    return ThesisMomentumModel(system, robot, target, system.model.getFrameId("end_effector"))


@pytest.mark.parametrize("with_target", [False, True])
@pytest.mark.parametrize("method", ["augmented_svd", "closed_form"])
def test_table_4_1_ranks(thesis_system, with_target, method):
    """Table 4.1: linear rank 3, angular rank 2, robot alone and robot with target, at the thesis's initial
    configuration (every joint at zero; the target's grapple on the end effector)."""
    mats = _builder(thesis_system).compute(thesis_system.neutral(), with_target)
    linear = thesis_criterion(mats.linear, RANK_RTOL, method)
    angular = thesis_criterion(mats.angular, RANK_RTOL, method)
    assert linear.rank == 3
    assert angular.rank == 2
    # The published structure: the angular Y_h has a zero first row (the arm is stretched along x, so the
    # centre of mass lies on the base's x axis and [M (r_G - r_b) x] has a zero first row); the linear
    # Y_h = M (A A^T)^-1 is symmetric positive definite (diagonal in the table, diag(0.0018) for the robot
    # alone; ours is diag(1/M, 0.00170, 0.00179) with M = 360 kg because our prismatic joint slides along x).
    assert np.abs(angular.Yh[0]).max() <= 1e-12 * np.abs(angular.Yh).max()
    np.testing.assert_allclose(linear.Yh, linear.Yh.T, atol=1e-14 * np.abs(linear.Yh).max())
    assert np.all(np.linalg.eigvalsh(linear.Yh) > 0)


def test_closed_form_equals_thesis_algorithm():
    """A_tilde^-1 = [A+, P_perp], so eqs. 4.8-4.16 give Y_h = A[:, :m]^T (A A^T)^-1 for any full-row-rank A."""
    rng = np.random.default_rng(0)
    for m, n in ((3, 12), (3, 18), (6, 22), (1, 3), (4, 5)):
        a = rng.normal(size=(m, n)) * rng.uniform(0.1, 100.0, size=(m, 1))
        literal, closed = yh_augmented_svd(a), yh_closed_form(a)
        np.testing.assert_allclose(literal, closed, rtol=0, atol=1e-11 * np.abs(closed).max())


def test_batched_closed_form_used_by_the_monitor():
    """The monitor's batched form (linear and angular rows together) equals the one-matrix form."""
    b = np.random.default_rng(1).normal(size=(6, 22)) * np.r_[np.full(3, 300.0), np.full(3, 2000.0)][:, None]
    for batched, single in zip(thesis_criteria_closed_form(b.reshape(2, 3, -1), RANK_RTOL),
                               (thesis_criterion(b[:3], RANK_RTOL), thesis_criterion(b[3:], RANK_RTOL))):
        np.testing.assert_allclose(batched.Yh, single.Yh, rtol=0, atol=1e-13 * np.abs(single.Yh).max())
        np.testing.assert_allclose(batched.singular_values, single.singular_values, rtol=1e-12)
        assert batched.rank == single.rank
        assert single.threshold <= batched.threshold <= np.sqrt(np.sqrt(3.0)) * single.threshold


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_closed_form_on_the_robot_and_what_the_rank_counts(thesis_system, seed):
    """At random configurations: both routes agree, and rank Y_h = rank of the V_b columns of A."""
    q = pin.integrate(thesis_system.model, thesis_system.neutral(),
                      np.random.default_rng(seed).normal(size=thesis_system.model.nv))
    for with_target in (False, True):
        mats = _builder(thesis_system).compute(q, with_target)
        for a in (mats.linear, mats.angular):
            literal = thesis_criterion(a, RANK_RTOL, "augmented_svd")
            closed = thesis_criterion(a, RANK_RTOL, "closed_form")
            np.testing.assert_allclose(literal.Yh, closed.Yh, rtol=0, atol=1e-10 * np.abs(closed.Yh).max())
            block = a[:, :3]
            assert literal.rank == closed.rank == np.linalg.matrix_rank(block, tol=RANK_RTOL * np.abs(block).max())


def test_rank_depends_on_ordering_and_reference_point(thesis_system):
    """Same constraint, same configuration: the angular rank is 2 with the thesis's ordering about the base
    centroid, 3 with Omega_b ordered first, 0 about the system centre of mass. Integrability cannot depend
    on either choice, so Y_h is not measuring it."""
    system = thesis_system
    q = pin.integrate(system.model, system.neutral(), np.random.default_rng(7).normal(size=system.model.nv))
    builder = _builder(system)
    mats = builder.compute(q, False)
    a = mats.angular
    assert thesis_criterion(a, RANK_RTOL).rank == 2
    reordered = np.hstack((a[:, 3:6], a[:, 0:3], a[:, 6:]))       # [Omega_b, V_b, qdot]
    assert thesis_criterion(reordered, RANK_RTOL).rank == 3
    data = system.model.createData()
    pin.centerOfMass(system.model, data, q)                        # subtree CoMs, in each joint's frame
    root = builder.robot.root_joint_id
    r_b = data.oMi[root].act(builder.robot.base_com_local)
    r_g = data.oMi[root].act(data.com[root])                       # the robot's centre of mass, world
    about_com = a - skew(r_g - r_b) @ mats.linear                  # L_G = L_b - (r_G - r_b) x P
    result = thesis_criterion(about_com, RANK_RTOL)
    assert result.rank == 0
    # ... while the momentum constraint [P; L] = 0 itself is unchanged (same null space): the rows of
    # about_com are combinations of those of a and the linear rows.
    stacked = np.vstack((mats.linear, a, about_com))
    assert np.linalg.matrix_rank(stacked, tol=1e-10 * np.abs(stacked).max()) == 6


def test_yh_ignores_velocity_and_force(thesis_system):
    """Y_h is a function of A(q) only: the same q with any velocity (or after any external force has changed
    the momentum) gives the same Y_h, so Table 4.1's "rank 3 with external forces" cannot come out of
    eqs. 4.1-4.16 at the same configuration."""
    from space_robot_monitoring.holonomy_monitor import HolonomyMonitor
    from space_robot_monitoring.monitor_settings import MonitorSettings

    settings = MonitorSettings(robot_subtree="robot", end_effector_frame="end_effector")
    q = pin.integrate(thesis_system.model, thesis_system.neutral(),
                      np.random.default_rng(3).normal(size=thesis_system.model.nv))
    rng = np.random.default_rng(4)
    reports = [HolonomyMonitor(thesis_system, settings).update(0.0, q, rng.normal(size=thesis_system.model.nv))
               for _ in range(3)]
    for report in reports[1:]:
        np.testing.assert_array_equal(report.thesis_yh_angular, reports[0].thesis_yh_angular)
        np.testing.assert_array_equal(report.thesis_yh_linear, reports[0].thesis_yh_linear)


ONE_JOINT_URDF = """<?xml version="1.0"?>
<robot name="one_joint">
  <link name="base_link">
    <inertial><origin xyz="0 0 0"/><mass value="300"/><inertia ixx="100" ixy="0" ixz="0" iyy="100" iyz="0" izz="100"/>
    </inertial>
  </link>
  <joint name="joint_1" type="revolute">
    <parent link="base_link"/><child link="link_1"/><origin xyz="0.7 0 0" rpy="0 0 0"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-3" upper="3" effort="100" velocity="0.5"/>
  </joint>
  <link name="link_1">
    <inertial><origin xyz="0.5 0.1 0"/><mass value="10"/><inertia ixx="3" ixy="0" ixz="0" iyy="3" iyz="0" izz="3"/>
    </inertial>
  </link>
</robot>
"""


def test_yh_calls_an_integrable_momentum_constraint_nonholonomic(tmp_path):
    """A free-floating robot with ONE joint: the allowed motions form a one-dimensional distribution, which is
    always integrable (the base attitude is a function of the joint angle; Frobenius has no pair to bracket).
    Y_h still has angular rank 2, i.e. "nonholonomic"."""
    (tmp_path / "one_joint.urdf").write_text(ONE_JOINT_URDF)
    (tmp_path / "one_joint.yaml").write_text(
        f"name: one_joint\nsubtrees:\n  - name: robot\n    urdf: {tmp_path / 'one_joint.urdf'}\n"
        "    base_joint: free_flyer\n    base_link: base_link\narm_joints: [joint_1]\n")
    system = SystemModel(load_model_config(tmp_path / "one_joint.yaml"))
    model = system.model
    robot = subtree_partition(system, "robot")
    q = pin.integrate(model, system.neutral(), np.r_[np.zeros(6), 0.4])
    builder = ThesisMomentumModel(system, robot, None, model.getFrameId("link_1"))
    mats = builder.compute(q, False)
    assert thesis_criterion(mats.angular, RANK_RTOL).rank == 2
    momentum = CentroidalMomentum(model)
    check = involutivity_check(model, q, momentum.matrix, momentum.derivative, RANK_RTOL)
    assert check.basis.shape[1] == 1 and check.rank == 0


def _translation_space():
    """R^3 as three prismatic joints (x, y, z): coordinates are plain (x, y, z)."""
    model = pin.Model()
    parent = 0
    for joint in (pin.JointModelPX(), pin.JointModelPY(), pin.JointModelPZ()):
        parent = model.addJoint(parent, joint, pin.SE3.Identity(), f"t{parent}")
        model.appendBodyToJoint(parent, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
    return model


def test_same_value_of_a_different_integrability():
    """dz = 0 (integrable) and dz - y dx = 0 (the Heisenberg constraint, not integrable) have the same
    matrix A = [0, 0, 1] at y = 0, hence the same Y_h; only derivatives of A tell them apart."""
    model = _translation_space()
    q = np.array([0.3, 0.0, -0.2])

    def flat(qq):
        return np.array([[0.0, 0.0, 1.0]])

    def heisenberg(qq):
        return np.array([[-qq[1], 0.0, 1.0]])

    np.testing.assert_array_equal(flat(q), heisenberg(q))
    yh_flat = thesis_criterion(flat(q), RANK_RTOL)
    yh_heis = thesis_criterion(heisenberg(q), RANK_RTOL)
    np.testing.assert_array_equal(yh_flat.Yh, yh_heis.Yh)
    assert yh_flat.rank == 0            # Y_h: "nonholonomic" for dz = 0
    assert involutivity_check(model, q, flat).rank == 0
    assert involutivity_check(model, q, heisenberg).rank == 1


def test_curvature_sees_what_yh_cannot(thesis_system):
    """On the thesis robot the curvature test agrees with the thesis's conclusion for the right reason:
    angular momentum nonholonomic (attitude rank 3), linear momentum integrable (residual at round-off)."""
    model = thesis_system.model
    robot = subtree_partition(thesis_system, "robot")
    connection = MechanicalConnection(model, [CentroidalMomentum(model)], [Fibre(robot.root_joint_id, robot.base_v)],
                                      robot.joint_v)
    q = pin.integrate(model, thesis_system.neutral(), np.random.default_rng(11).normal(size=model.nv))
    result = connection.compute(q)
    data = model.createData()
    pin.centerOfMass(model, data, q)
    g = data.oMi[robot.root_joint_id].rotation @ np.hstack((np.eye(3), -skew(data.com[robot.root_joint_id])))
    figures = curvature_figures(result, [g], np.where(robot.prismatic, 6.7, 1.0), 6.7, RANK_RTOL)
    assert figures.nonholonomy_rank == 3
    assert figures.linear_residual < 1e-12
