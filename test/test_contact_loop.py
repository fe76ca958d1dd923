"""The grasp's 6D loop (space_robot_dynamics/contact/loop_closure.py) against an independent KKT system.

Reference: M from CRBA, h from RNEA, the constraint rows from Pinocchio's frame Jacobians in LOCAL (J = J_c1 -
c1Xc2 J_c2, the definition of the relative twist), their drift from the joint-Jacobian time variation
(d/dt J v = c1X0 (dJ_1^W - dJ_2^W) v + v_c1 x c1Xc2 v_c2: the derivative of that definition), the drift control
-Kd e_v - Kp e_p on e_p = -log6(c1Mc2), and numpy's solve of [[M, J^T], [J, 0]] [a; -lambda] = [tau - h; -gamma].
Random states: random arm poses with the fixture near the hand, the loop closed at a perturbed configuration so
that its pose and velocity errors are not zero, random generalized forces on the robot.
Tolerance: the KKT matrix has a condition number of ~1e8 here (wheel inertias 1e-2 kg m^2 against the 1500 kg
target), so both solutions carry round-off of ~1e-8 relative: 1e-8 of the largest entry.
"""
import numpy as np
import pinocchio as pin
import pytest
from grasp_states import STABILIZATION, drifting, fixture_at_hand, loop_at

LOCAL, WORLD = pin.ReferenceFrame.LOCAL, pin.ReferenceFrame.WORLD
RTOL = 1e-8


def reference_kkt(model, loop, q, v, tau):
    """(a, lambda) of the KKT system of the module docstring."""
    data = model.createData()
    mass = pin.crba(model, data, q)
    mass = np.triu(mass) + np.triu(mass, 1).T
    bias = pin.rnea(model, model.createData(), q, v, np.zeros(model.nv))
    pin.computeJointJacobiansTimeVariation(model, data, q, v)
    pin.forwardKinematics(model, data, q, v)
    j1, p1, j2, p2 = loop.joint1, loop.placement1, loop.joint2, loop.placement2
    oMc1, oMc2 = data.oMi[j1] * p1, data.oMi[j2] * p2
    c1Mc2 = oMc1.actInv(oMc2)
    jacobian = pin.getFrameJacobian(model, data, j1, p1, LOCAL) - c1Mc2.toActionMatrix() @ pin.getFrameJacobian(
        model, data, j2, p2, LOCAL)
    vc1, vc2_in_1 = p1.actInv(data.v[j1]).vector, c1Mc2.act(p2.actInv(data.v[j2])).vector
    error_v = jacobian @ v
    drift = oMc1.toActionMatrixInverse() @ (pin.getJointJacobianTimeVariation(model, data, j1, WORLD)
                                            - pin.getJointJacobianTimeVariation(model, data, j2, WORLD)) @ v
    drift += (pin.Motion(vc1).cross(pin.Motion(vc2_in_1))).vector
    drift += STABILIZATION.kd * error_v + STABILIZATION.kp * (-pin.log6(c1Mc2).vector)
    kkt = np.block([[mass, jacobian.T], [jacobian, np.zeros((6, 6))]])
    solution = np.linalg.solve(kkt, np.r_[tau - bias, -drift])
    return solution[:model.nv], -solution[model.nv:]


def random_loop(system, rng):
    """A loop closed near the hand, the state moved off it: (loop, q, v, tau)."""
    model = system.model
    offset = rng.normal(0.0, 0.01, 3)
    q = fixture_at_hand(system, offset=offset, tilt=rng.normal(0.0, 0.02))
    loop = loop_at(system, q)
    q = pin.integrate(model, q, rng.normal(0.0, 0.003, model.nv))
    v = drifting(system, rng)
    tau = np.zeros(model.nv)
    tau[system.arm_v] = rng.normal(0.0, 5.0, len(system.arm_v))
    tau[system.wheel_v] = rng.normal(0.0, 0.2, len(system.wheel_v))
    return loop, q, v, tau


@pytest.mark.parametrize("seed", range(5))
def test_both_routes_match_an_independent_kkt_on_random_states(servicer_target, seed):
    """Pinocchio's constraintDynamics (fast path) and the explicit-Jacobian route against the reference."""
    rng = np.random.default_rng(seed)
    model = servicer_target.model
    loop, q, v, tau = random_loop(servicer_target, rng)
    a_ref, force_ref = reference_kkt(model, loop, q, v, tau)
    for fast in (True, False):
        loop.fast = fast
        a = loop.acceleration(model.createData(), q, v, tau)
        assert np.allclose(a, a_ref, rtol=0, atol=RTOL * np.abs(a_ref).max())
        assert np.allclose(loop.force, force_ref, rtol=0, atol=RTOL * np.abs(force_ref).max())


@pytest.mark.parametrize("seed", range(3))
def test_with_external_wrenches_both_routes_agree(servicer_target, seed):
    """External wrenches on the bus (a thruster, local) and on the target: the fast route (constraintDynamics under
    tau + sum J^T f) against the explicit one (rnea's f_ext in the bias), accelerations and lambda to RTOL; the fast
    route leaves the joint velocities at (q, v) in data (the wrenches' power reads them) and the wrench moves the
    result (the check is not empty)."""
    rng = np.random.default_rng(seed)
    model = servicer_target.model
    loop, q, v, tau = random_loop(servicer_target, rng)
    fext = pin.StdVec_Force()
    for _ in range(model.njoints):
        fext.append(pin.Force.Zero())
    for name in ("base_link", "target/grapple_frame"):
        joint = model.frames[model.getFrameId(name)].parentJoint
        fext[joint] = pin.Force(rng.normal(0.0, 20.0, 3), rng.normal(0.0, 5.0, 3))
    results = {}
    for fast in (True, False):
        loop.fast = fast
        data = model.createData()
        a = loop.acceleration(data, q, v, tau, fext)
        results[fast] = (a, loop.force.copy(), [data.v[j].vector.copy() for j in range(1, model.njoints)])
    loop.fast = True
    a_free = loop.acceleration(model.createData(), q, v, tau)
    (a_fast, f_fast, v_fast), (a_ref, f_ref, v_ref) = results[True], results[False]
    assert np.allclose(a_fast, a_ref, rtol=0, atol=RTOL * np.abs(a_ref).max())
    assert np.allclose(f_fast, f_ref, rtol=0, atol=RTOL * np.abs(f_ref).max())
    assert np.allclose(np.concatenate(v_fast), np.concatenate(v_ref), rtol=0, atol=1e-14 * np.abs(v).max())
    assert np.abs(a_free - a_ref).max() > 1e-3 * np.abs(a_ref).max()


def test_the_multiplier_is_the_wrench_of_the_target_on_the_hand(servicer_target):
    """From rest, a force pushes the target's centre of mass: the servicer's only outside force is the target's
    wrench on the hand, so its linear momentum changes at the rate lambda's force (in world axes), and its angular
    momentum about the hand's origin at the rate lambda's torque (momentum balance of the servicer alone, from
    Pinocchio's centroidal map)."""
    model = servicer_target.model
    q = fixture_at_hand(servicer_target)
    target = model.frames[model.getFrameId("target/grapple_frame")].parentJoint
    loop = loop_at(servicer_target, q)
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    push = np.array([3.0, -2.0, 1.0])                          # N, world axes, at the target's centre of mass
    target_com = data.oMi[target].act(model.inertias[target].lever)
    fext = pin.StdVec_Force()
    for _ in range(model.njoints):
        fext.append(pin.Force.Zero())
    fext[target] = data.oMi[target].actInv(pin.Force(push, np.cross(target_com, push)))
    tau = np.zeros(model.nv)
    tau[servicer_target.arm_v] = [1.0, -2.0, 0.5, 1.0, 0.2, -0.1, 0.05]      # any internal torques
    a = loop.acceleration(model.createData(), q, np.zeros(model.nv), tau, fext)
    servicer = [v for name in servicer_target.subtree("servicer").joint_names
                for v in range(*servicer_target.v_slice(name).indices(model.nv))]
    oMc1 = data.oMi[loop.joint1] * loop.placement1
    rates = pin.computeCentroidalMap(model, model.createData(), q)[:, servicer] @ a[servicer]   # at v = 0: A_G a
    centre = pin.centerOfMass(model, model.createData(), q)
    wrench = oMc1.act(pin.Force(loop.force))                     # about the world origin, world axes
    about_com = wrench.angular - np.cross(centre, wrench.linear)
    assert np.allclose(rates[:3], wrench.linear, rtol=0, atol=1e-9 * np.abs(rates).max())
    assert np.allclose(rates[3:], about_com, rtol=0, atol=1e-9 * np.abs(rates).max())
    assert np.abs(wrench.linear).max() > 0.1                   # the check is not empty
