"""The reduced models of seed 004 ch. 5-6 (space_robot_dynamics/contact/reduced_models.py) against the full
constrained model: Pinocchio's constraintDynamics with the grasp's 6D loop on random states (loop pose and velocity
errors not zero, so the drift control acts), the same accelerations and multipliers to round-off (1e-8 of the
largest entry: the condition number of the joined system's matrices is ~1e8, see test_contact_loop.py).

On the flexible servicer the constraint dynamics runs on the expanded model with the tip chains' coupling rows
(explicit_constraints.py eq. 1); it must equal the reduced KKT system in the reduced coordinates, [[T^T M T,
(J T)^T], [J T, 0]], assembled here by hand.
"""
import numpy as np
import pinocchio as pin
import pytest
from grasp_states import STABILIZATION, drifting, fixture_at_hand, loop_at

from space_robot_dynamics import build_model
from space_robot_dynamics.contact.reduced_models import eliminate_base_linear, eliminate_target, orthogonal_projection

RTOL = 1e-8


def constrained_state(system, seed):
    """(loop, q, v, tau, M, h, J, gamma_total, J_dot v, w_dot) with the loop's errors not zero."""
    rng = np.random.default_rng(seed)
    model = system.model
    q = fixture_at_hand(system, offset=rng.normal(0.0, 0.01, 3))
    loop = loop_at(system, q)
    q = pin.integrate(model, q, rng.normal(0.0, 0.002, model.nv))
    v = drifting(system, rng)
    if system.coordinates is not None:
        system.coordinates.project(q, v)
    tau = np.zeros(model.nv)
    tau[system.arm_v] = rng.normal(0.0, 5.0, len(system.arm_v))
    tau[system.wheel_v] = rng.normal(0.0, 0.2, len(system.wheel_v))
    data = model.createData()
    bias = loop.explicit.kinematics(data, q, v)
    jacobian, drift = loop.constraint_rows(data)
    mass = np.triu(data.M) + np.triu(data.M, 1).T
    error_p, error_v = loop.errors(model.createData(), q, v)
    control = STABILIZATION.kd * error_v + STABILIZATION.kp * error_p
    return loop, q, v, tau, mass, bias, jacobian, drift, drift - control, -control


@pytest.mark.parametrize("seed", range(4))
def test_orthogonal_projection_equals_the_full_model(servicer_target, seed):
    loop, q, v, tau, mass, bias, J, drift, _jdv, _wd = constrained_state(servicer_target, seed)
    a_full = loop.acceleration(servicer_target.model.createData(), q, v, tau)
    reduced = orthogonal_projection(mass, bias, tau, J, drift)
    assert np.allclose(reduced.acceleration, a_full, rtol=0, atol=RTOL * np.abs(a_full).max())
    assert np.allclose(reduced.force, loop.force, rtol=0, atol=RTOL * np.abs(loop.force).max())


@pytest.mark.parametrize("seed", range(4))
def test_target_elimination_equals_the_full_model(servicer_target, seed):
    """Eqs. 5.25-5.30: the reduced model in the robot's coordinates; eq. 5.27 itself (with its J~ lambda) holds
    for the full model's accelerations and multipliers."""
    system = servicer_target
    loop, q, v, tau, mass, bias, J, _drift, jdv, w_dot = constrained_state(system, seed)
    a_full = loop.acceleration(system.model.createData(), q, v, tau)
    target_v = np.arange(*system.v_slice(system.base_joint("target")).indices(system.nv))
    model = eliminate_target(mass, bias, J, jdv, target_v)
    solution = model.solve(tau[model.robot_v], w_dot)
    assert np.allclose(solution.acceleration, a_full, rtol=0, atol=RTOL * np.abs(a_full).max())
    assert np.allclose(solution.force, loop.force, rtol=0, atol=RTOL * np.abs(loop.force).max())
    a_r = a_full[model.robot_v]
    lhs = model.reduced_inertia @ a_r + model.reduced_bias
    rhs = tau[model.robot_v] + model.reduced_jacobian_transpose @ loop.force
    assert np.allclose(lhs, rhs, rtol=0, atol=RTOL * np.abs(lhs).max())


@pytest.mark.parametrize("seed", range(3))
def test_base_linear_elimination_equals_the_full_model(servicer_target, seed):
    """Eqs. 5.31-5.32 on the model of eqs. 5.25-5.30: the remaining accelerations (bus rotation, joints, wheels)
    are the full model's; no force on the bus's linear rows (no thrusters)."""
    system = servicer_target
    loop, q, v, tau, mass, bias, J, _drift, jdv, w_dot = constrained_state(system, seed)
    a_full = loop.acceleration(system.model.createData(), q, v, tau)
    model = eliminate_target(mass, bias, J, jdv, np.arange(*system.v_slice(system.base_joint("target")).indices(
        system.nv)))
    base = system.v_slice(system.base_joint("servicer")).start
    rows = [int(np.flatnonzero(model.robot_v == base + k)[0]) for k in range(3)]   # the bus's linear velocity
    inertia, bias_r, tau_r, others = eliminate_base_linear(model.H_rr, model.C_r + model.H_rt @ w_dot,
                                                           tau[model.robot_v], rows)
    a_others = np.linalg.solve(inertia, tau_r - bias_r)
    expected = a_full[model.robot_v][others]
    assert np.allclose(a_others, expected, rtol=0, atol=RTOL * np.abs(expected).max())


@pytest.mark.parametrize("seed", range(3))
def test_flexible_loop_equals_the_reduced_kkt(seed):
    """The coupling rows make the expanded model's KKT the reduced one: a = T a_r, same multipliers."""
    system = build_model("servicer_flexible")
    loop, q, v, tau, mass, bias, J, drift, _jdv, _wd = constrained_state(system, seed)
    a_full = loop.acceleration(system.model.createData(), q, v, tau)
    T = system.coordinates.T
    n_r = T.shape[1]
    kkt = np.block([[T.T @ mass @ T, (J @ T).T], [J @ T, np.zeros((6, 6))]])
    solution = np.linalg.solve(kkt, np.r_[T.T @ (tau - bias), -drift])
    a_ref, force_ref = T @ solution[:n_r], -solution[n_r:]
    assert np.allclose(a_full, a_ref, rtol=0, atol=RTOL * np.abs(a_ref).max())
    assert np.allclose(loop.force, force_ref, rtol=0, atol=RTOL * np.abs(force_ref).max())
