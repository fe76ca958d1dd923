"""Mechanical connection, curvature and the Frobenius check: analytic derivatives against finite differences,
and the quasi-velocity bracket on constraints whose integrability is known by hand.

Finite differences: central, step h = 1e-6 along pin.integrate; truncation O(h^2) ~ 1e-12 and round-off
~ eps / h ~ 1e-10 relative to the differentiated matrix, so agreement is asserted at 1e-7 relative (the
derivatives themselves are O(1) relative: a wrong term shows at 1e-2 or more).
"""
import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_monitoring.contact_constraint import MomentumAndWeld, WeldConstraint
from space_robot_monitoring.frobenius import finite_difference_derivative, involutivity_check
from space_robot_monitoring.lie_algebra import VelocityBracket, se3_bracket, skew
from space_robot_monitoring.mechanical_connection import (
    CurvatureFigureMaker,
    CurvatureParts,
    Fibre,
    MechanicalConnection,
    curvature_figures,
)
from space_robot_monitoring.momentum_matrices import CentroidalMomentum
from space_robot_monitoring.system_partition import subtree_partition

FD_STEP = 1e-6
FD_RTOL = 1e-7
RANK_RTOL = 1e-6      # above the finite-difference error (1e-10 relative) for checks run with FD derivatives


@pytest.fixture(scope="module")
def thesis_system():
    return SystemModel(load_model_config("config/models/thesis_6dof.yaml"))


@pytest.fixture(scope="module")
def servicer_system(servicer_target):
    return servicer_target


def _grasp_configuration(system, ee_name, grapple_name, seed, spread=0.6):
    """Random robot configuration with the target placed so that its grapple frame is on the end effector."""
    model = system.model
    rng = np.random.default_rng(seed)
    robot = subtree_partition(system, system.subtrees[0].name)
    dv = np.zeros(model.nv)
    dv[robot.all_v] = rng.normal(scale=spread, size=len(robot.all_v))
    q = pin.integrate(model, system.neutral(), dv)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    grapple = model.frames[model.getFrameId(grapple_name)]
    target_joint = grapple.parentJoint
    world_pose = data.oMf[model.getFrameId(ee_name)] * grapple.placement.inverse()
    idx = model.joints[target_joint].idx_q
    q[idx:idx + 7] = pin.SE3ToXYZQUAT(model.jointPlacements[target_joint].inverse() * world_pose)
    return q


def _connections(system, ee_name, grapple_name):
    model = system.model
    robot = subtree_partition(system, system.subtrees[0].name)
    target = subtree_partition(system, system.subtrees[1].name)
    momentum = CentroidalMomentum(model)
    weld = WeldConstraint(model, model.getFrameId(ee_name), model.getFrameId(grapple_name))
    free = MechanicalConnection(model, [momentum], [Fibre(robot.root_joint_id, robot.base_v)], robot.joint_v)
    attached = MechanicalConnection(model, [momentum, weld], [Fibre(robot.root_joint_id, robot.base_v),
                                                               Fibre(target.root_joint_id, target.base_v)],
                                    robot.joint_v)
    return robot, target, momentum, weld, free, attached


CASES = [("thesis", "end_effector", "target/grapple_frame"), ("servicer", "right_hand", "target/grapple_frame")]


def _system(name, thesis_system, servicer_system):
    return thesis_system if name == "thesis" else servicer_system


@pytest.mark.parametrize("name,ee,grapple", CASES)
def test_constraint_derivatives_match_finite_differences(name, ee, grapple, thesis_system, servicer_system):
    """X_u(A_G) (Pinocchio's dA_G plus the centre-of-mass term) and X_u(C_weld) against central differences."""
    system = _system(name, thesis_system, servicer_system)
    model = system.model
    q = _grasp_configuration(system, ee, grapple, 1)
    u = np.random.default_rng(2).normal(size=model.nv)
    _, _, momentum, weld, _, _ = _connections(system, ee, grapple)
    for source in (momentum, weld):
        analytic = source.derivative(q, u)
        numeric = finite_difference_derivative(model, source.matrix, q, u, FD_STEP)
        np.testing.assert_allclose(analytic, numeric, rtol=0, atol=FD_RTOL * np.abs(numeric).max())
    # Pinocchio's dA_G alone is not the derivative of A_G (it is exact only on dA_G v): if this ever
    # fails, Pinocchio changed and CentroidalMomentum.derivative would count the term twice.
    raw = pin.computeCentroidalMapTimeVariation(model, model.createData(), q, u)
    numeric = finite_difference_derivative(model, momentum.matrix, q, u, FD_STEP)
    assert np.abs(raw - numeric).max() > 1e-3 * np.abs(numeric).max()


@pytest.mark.parametrize("name,ee,grapple", CASES)
@pytest.mark.parametrize("attached", [False, True])
def test_connection_derivatives_match_finite_differences(name, ee, grapple, attached, thesis_system,
                                                         servicer_system):
    """X_i(K_j) from Pinocchio's analytic derivatives equals the central difference of K along X_i."""
    system = _system(name, thesis_system, servicer_system)
    model = system.model
    q = _grasp_configuration(system, ee, grapple, 3)
    _, _, _, _, free, with_target = _connections(system, ee, grapple)
    connection = with_target if attached else free
    result = connection.compute(q)
    ns = len(connection.shape_v)
    fields = np.zeros((model.nv, ns))
    fields[connection.fibre_v] = result.K
    fields[connection.shape_v, np.arange(ns)] = 1.0
    scale = np.abs(result.dK).max()      # round-off of the difference scales with K, not with one X_i(K)
    for i in range(ns):
        numeric = (connection.connection(pin.integrate(model, q, FD_STEP * fields[:, i]))[0]
                   - connection.connection(pin.integrate(model, q, -FD_STEP * fields[:, i]))[0]) / (2 * FD_STEP)
        np.testing.assert_allclose(result.dK[i].T, numeric, rtol=0, atol=FD_RTOL * scale)
    # F is antisymmetric
    np.testing.assert_allclose(result.F, -result.F.transpose(1, 0, 2), atol=1e-14 * np.abs(result.F).max())
    if attached:
        # the monitor's one-call-per-direction source gives the same connection and derivatives
        robot = subtree_partition(system, system.subtrees[0].name)
        fast = MechanicalConnection(model, [MomentumAndWeld(model, model.getFrameId(ee), model.getFrameId(grapple))],
                                    connection.fibres, robot.joint_v).compute(q)
        for name_ in ("K", "dK", "F"):
            expected = getattr(result, name_)
            np.testing.assert_allclose(getattr(fast, name_), expected, rtol=0, atol=1e-12 * np.abs(expected).max())


@pytest.mark.parametrize("name,ee,grapple", CASES)
def test_linear_momentum_integrable_angular_not(name, ee, grapple, thesis_system, servicer_system):
    """Curvature figures: attitude nonholonomy rank 3 (spatial arms), centre-of-mass residual at round-off,
    for the robot alone and holding the target (combined momentum + grasp constraints, eq. 2.34)."""
    system = _system(name, thesis_system, servicer_system)
    model = system.model
    q = _grasp_configuration(system, ee, grapple, 4)
    robot, target, _, _, free, with_target = _connections(system, ee, grapple)
    data = model.createData()
    pin.centerOfMass(model, data, q)
    shape_scale = np.ones(len(robot.joint_v))
    for connection, fibres in ((free, [robot]), (with_target, [robot, target])):
        mass = sum(f.mass for f in fibres)
        g = [f.mass / mass * data.oMi[f.root_joint_id].rotation
             @ np.hstack((np.eye(3), -skew(data.com[f.root_joint_id]))) for f in fibres]
        figures = curvature_figures(connection.compute(q), g, shape_scale, 1.0, 1e-8)
        assert figures.nonholonomy_rank == 3
        assert figures.linear_residual < 1e-12
        # the test can fail: the base frame's own linear curvature is not zero, only its CoM part is
        g_wrong = [np.hstack((gg[:, :3], np.zeros((3, 3)))) for gg in g]
        assert curvature_figures(connection.compute(q), g_wrong, shape_scale, 1.0, 1e-8).linear_residual > 1e-3


def _free_flyer_model():
    model = pin.Model()
    joint = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "base")
    model.appendBodyToJoint(joint, pin.Inertia.FromBox(10.0, 1.0, 2.0, 3.0), pin.SE3.Identity())
    return model


def _naive_obstruction(model, q, matrix, basis):
    """The Frobenius expression without the quasi-velocity bracket (treating v as coordinate rates)."""
    derivatives = [finite_difference_derivative(model, matrix, q, basis[:, k]) for k in range(basis.shape[1])]
    out = []
    for a in range(basis.shape[1]):
        for b in range(a + 1, basis.shape[1]):
            out.append(derivatives[a] @ basis[:, b] - derivatives[b] @ basis[:, a])
    return np.array(out)


def test_body_angular_velocity_is_not_a_coordinate_rate():
    """omega_z (body) = 0: rotations about body x then y then back change the yaw, so it is NOT integrable;
    zdot = 0 (world vertical velocity of the origin, (R v)_z = 0) IS integrable (the height is fixed). With A
    treated as coefficients of coordinate rates (no bracket term) both answers flip."""
    model = _free_flyer_model()
    q = pin.integrate(model, pin.neutral(model), np.array([0.3, -0.2, 0.5, 0.4, -0.7, 0.2]))

    def body_yaw_rate(qq):
        return np.array([[0, 0, 0, 0, 0, 1.0]])

    def vertical_velocity(qq):
        data = model.createData()
        pin.forwardKinematics(model, data, qq)
        rotation = data.oMi[1].rotation
        return np.hstack((rotation[2:3], np.zeros((1, 3))))  # (R v_body)_z = world vertical velocity

    yaw = involutivity_check(model, q, body_yaw_rate, rank_rtol=RANK_RTOL)
    assert yaw.rank == 1
    assert np.abs(_naive_obstruction(model, q, body_yaw_rate, yaw.basis)).max() == 0.0
    height = involutivity_check(model, q, vertical_velocity, rank_rtol=RANK_RTOL)
    assert height.rank == 0
    assert height.relative_residual < 1e-8
    naive = _naive_obstruction(model, q, vertical_velocity, height.basis)
    assert np.abs(naive).max() > 0.1


def test_velocity_bracket_matches_pinocchio_motion_cross():
    """[u, w] of a free flyer's body twists is Pinocchio's Motion.cross (ad_u w)."""
    model = _free_flyer_model()
    rng = np.random.default_rng(0)
    u, w = rng.normal(size=6), rng.normal(size=6)
    expected = pin.Motion(u).cross(pin.Motion(w)).vector
    np.testing.assert_allclose(VelocityBracket(model)(u, w), expected, atol=1e-15)
    np.testing.assert_allclose(se3_bracket(u, w), expected, atol=1e-15)


@pytest.mark.parametrize("name,ee,grapple", CASES[:1])
def test_general_check_agrees_with_curvature(name, ee, grapple, thesis_system, servicer_system):
    """The Frobenius check on an orthonormal basis of ker A and the curvature in the basis X_i = (K_i, e_i)
    find the same bracket rank: for momentum alone, for the combined momentum + grasp constraints (eq. 2.34),
    and 0 for linear momentum alone (holonomic: the centre of mass stays put)."""
    system = _system(name, thesis_system, servicer_system)
    model = system.model
    q = _grasp_configuration(system, ee, grapple, 5)
    robot, target, momentum, weld, free, with_target = _connections(system, ee, grapple)
    # restrict the general check to the bodies the constraint concerns by fixing the rest (identity rows)
    others_free = np.setdiff1d(np.arange(model.nv), robot.all_v)

    def with_rows(matrix, fixed):
        def stacked(qq):
            pins = np.zeros((len(fixed), model.nv))
            pins[np.arange(len(fixed)), fixed] = 1.0
            return np.vstack((matrix(qq), pins))
        return stacked

    def stacked_derivative(derivative, fixed):
        def d(qq, u):
            return np.vstack((derivative(qq, u), np.zeros((len(fixed), model.nv))))
        return d

    length = 6.7
    weights = np.ones(model.nv)
    for f in (robot, target):
        weights[f.base_v[:3]] = 1.0 / length
    weights[robot.joint_v[robot.prismatic]] = 1.0 / length
    for connection, matrix, derivative, fixed in (
            (free, momentum.matrix, momentum.derivative, others_free),
            (with_target, lambda qq: np.vstack((momentum.matrix(qq), weld.matrix(qq))),
             lambda qq, u: np.vstack((momentum.derivative(qq, u), weld.derivative(qq, u))), np.array([], int))):
        general = involutivity_check(model, q, with_rows(matrix, fixed), stacked_derivative(derivative, fixed),
                                     rank_rtol=1e-8, velocity_weights=weights)
        result = connection.compute(q)
        iu, ju = np.triu_indices(len(robot.joint_v), 1)
        f = result.F[iu, ju]
        curvature_rank = np.linalg.matrix_rank(f, tol=1e-8 * np.abs(result.term_size()).max())
        assert general.rank == curvature_rank > 0
        # and with finite-difference derivatives (the default) the same rank
        assert involutivity_check(model, q, with_rows(matrix, fixed), rank_rtol=RANK_RTOL,
                                  velocity_weights=weights).rank == general.rank

    def linear_only(qq):
        return momentum.matrix(qq)[:3]

    linear = involutivity_check(model, q, with_rows(linear_only, others_free), rank_rtol=RANK_RTOL,
                                velocity_weights=weights)
    assert linear.rank == 0


@pytest.mark.parametrize("joint,constraint,expected", [
    (pin.JointModelPlanar(), [0.0, 1.0, 0.0], 1),       # knife edge: no sideways body velocity (unicycle)
    (pin.JointModelPlanar(), [0.0, 0.0, 1.0], 0),       # no rotation: the heading is fixed
    (pin.JointModelSpherical(), [0.0, 0.0, 1.0], 1),    # no body yaw rate: x-y rotation loops still yaw
])
def test_planar_and_spherical_brackets(joint, constraint, expected):
    """The se(2) and so(3) brackets: the knife edge (v_y body = 0) is the classic nonholonomic constraint;
    omega = 0 in the plane is integrable; a body-yaw-rate constraint on SO(3) is not."""
    model = pin.Model()
    j = model.addJoint(0, joint, pin.SE3.Identity(), "j")
    model.appendBodyToJoint(j, pin.Inertia.FromSphere(1.0, 0.1), pin.SE3.Identity())
    q = pin.integrate(model, pin.neutral(model), np.array([0.3, -0.4, 0.7]))
    row = np.array([constraint])
    check = involutivity_check(model, q, lambda qq: row, rank_rtol=RANK_RTOL)
    assert check.rank == expected


@pytest.mark.parametrize("name,ee,grapple", CASES)
def test_monitor_pair_path_equals_the_full_curvature(name, ee, grapple, thesis_system, servicer_system):
    """The monitor's per-cycle path (MechanicalConnection.pair_curvature with the one-call-per-direction source,
    CurvatureFigureMaker.parts then figures_from) gives the pairs i < j of the full ConnectionCurvature built
    from separate momentum and weld sources, and the same figures. Same Pinocchio derivatives, products in
    another order: round-off (1e-13 of the largest term), ranks equal."""
    system = _system(name, thesis_system, servicer_system)
    model = system.model
    q = _grasp_configuration(system, ee, grapple, 6)
    robot, target, _, _, free, with_target = _connections(system, ee, grapple)
    fast_with_target = MechanicalConnection(
        model, [MomentumAndWeld(model, model.getFrameId(ee), model.getFrameId(grapple))], with_target.fibres,
        robot.joint_v)
    data = model.createData()
    pin.centerOfMass(model, data, q)
    shape_scale = np.where(robot.prismatic, 2.0, 1.0)
    for slow, fast, fibres in ((free, free, [robot]), (with_target, fast_with_target, [robot, target])):
        full = slow.compute(q)
        pairs = fast.pair_curvature(q, fast.matrix(q))
        iu, ju = np.triu_indices(len(robot.joint_v), 1)
        scale = np.abs(full.term_size()).max()
        np.testing.assert_allclose(pairs.K, full.K, rtol=0, atol=1e-13 * np.abs(full.K).max())
        np.testing.assert_allclose(pairs.F, full.F[iu, ju].T, rtol=0, atol=1e-13 * scale)
        np.testing.assert_allclose(pairs.term_size, full.term_size()[iu, ju].T, rtol=0, atol=1e-13 * scale)
        mass = sum(f.mass for f in fibres)
        g = [f.mass / mass * data.oMi[f.root_joint_id].rotation
             @ np.hstack((np.eye(3), -skew(data.com[f.root_joint_id]))) for f in fibres]
        reference = curvature_figures(full, g, shape_scale, 2.0, 1e-8)
        maker = CurvatureFigureMaker(shape_scale, len(fibres), 2.0, 1e-8)
        parts = maker.parts(pairs.F, pairs.term_size, np.hstack(g))
        figures = maker.figures_from(parts, np.linalg.svd(parts.attitude, compute_uv=False))
        assert figures.nonholonomy_rank == reference.nonholonomy_rank == 3
        np.testing.assert_allclose(figures.attitude_singular_values, reference.attitude_singular_values, rtol=1e-12)
        assert figures.linear_residual < 1e-12 and reference.linear_residual < 1e-12


def test_attitude_singular_values_from_the_gram_matrix():
    """The monitor takes the attitude singular values from its Gram matrix A^T A (batched with its other SVDs):
    to 1e-13 when s_max / s_min <= GRAM_CONDITION_LIMIT, and from the SVD of A itself beyond it. There the
    Gram route would turn a zero singular value into ~1e-8 s_max (sqrt(eps)), right at the 1e-8 rank
    threshold (a planar arm's attitude curvature has rank 1): the rank count below must come out exact."""
    rng = np.random.default_rng(3)
    u, _ = np.linalg.qr(rng.normal(size=(45, 3)))
    v, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    for singular_values, exact in (((2.0, 0.7, 0.1), False), ((1.0, 0.5, 1e-3), True), ((1.0, 0.0, 0.0), True)):
        attitude = u @ np.diag(singular_values) @ v
        parts = CurvatureParts(attitude, attitude.T @ attitude, 1e-8, 0.0)
        gram_values = np.linalg.svd(np.pad(parts.attitude_gram, ((0, 3), (0, 13))), compute_uv=False)
        values = CurvatureFigureMaker.attitude_singular_values(parts, gram_values)
        reference = np.linalg.svd(attitude, compute_uv=False)
        if exact:
            np.testing.assert_array_equal(values, reference)
        else:
            np.testing.assert_allclose(values, singular_values, rtol=1e-13)
        assert np.count_nonzero(values > 1e-8) == np.count_nonzero(np.array(singular_values) > 0)
