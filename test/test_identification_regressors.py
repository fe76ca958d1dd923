"""The identification's physics: a body's momentum and joint torques, linear in its inertial parameters.

Against independent formulations of the same model (space_robot_identification/body_regressors.py):
- momentum: known part + regressor * pi against Pinocchio's centroidal momentum of the whole model moved to the
  world origin (system_momentum.momentum_about_point), and against a direct sum over the bodies,
  sum_i X*_i (I_i v_i), written out here;
- torques: against Pinocchio's RNEA of the whole model, gravity included (Sawyer on its air bearing with a
  payload in the hand);
- linearity: the regressor of a sum of two inertias is the sum of the regressions (what makes least squares
  exact);
- the physical <-> dynamic parameter map against the parallel-axis theorem written out, its Jacobian against
  central differences.
Tolerances: momenta of O(1e3..1e4) kg m/s and torques of O(1e4) N m from float64 sums over ~20 bodies: 1e-9
absolute (round-off ~1e-12, margin 1000); a wrong frame, sign or parameter order gives errors of O(1..1e3).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics import build_model
from space_robot_dynamics.simulation.system_momentum import momentum_about_point
from space_robot_identification import body_inertia
from space_robot_identification.body_regressors import BodyRegressors

TOL = 1e-9


@pytest.fixture(scope="module")
def attached():
    return build_model("servicer_target_attached")


def _state(system, seed):
    rng = np.random.default_rng(seed)
    q = pin.normalize(system.model, pin.randomConfiguration(system.model, -np.ones(system.nq), np.ones(system.nq)))
    return q, rng.normal(size=system.nv), rng.normal(size=system.nv)


def _direct_momentum(model, q, v):
    """[p; L_O]: sum over the joints' bodies of their momenta about the world origin, world axes."""
    data = model.createData()
    pin.forwardKinematics(model, data, q, v)
    total = np.zeros(6)
    for j in range(1, model.njoints):
        total += data.oMi[j].act(model.inertias[j] * data.v[j]).vector
    return total


def test_momentum_regression_equals_the_whole_model(attached):
    regressors = BodyRegressors(attached, "target/base_link")
    pi = body_inertia.dynamic_parameters(regressors.prior_parameters())
    for seed in range(4):
        q, v, _ = _state(attached, seed)
        known, y = regressors.momentum(q, v)
        p, l_o = momentum_about_point(attached.model, attached.model.createData(), q, v, np.zeros(3))
        assert np.allclose(known + y @ pi, np.concatenate((p, l_o)), rtol=0, atol=TOL)
        assert np.allclose(known + y @ pi, _direct_momentum(attached.model, q, v), rtol=0, atol=TOL)
        # the known part is the servicer alone: without the target the momentum differs by O(target momentum)
        assert np.abs(y @ pi).max() > 10.0


def test_regressors_are_linear_in_the_body(attached):
    """A second body added at the same frame (an inertia I2 merged in the model) is regressed by the same Y."""
    regressors = BodyRegressors(attached, "target/base_link")
    extra = pin.Inertia(50.0, np.array([0.1, -0.2, 0.3]), np.diag([4.0, 5.0, 6.0]) + 0.5)
    model = attached.model.copy()
    frame = model.frames[regressors.frame_id]
    model.inertias[frame.parentJoint] += frame.placement.act(extra)
    pi = body_inertia.dynamic_parameters(regressors.prior_parameters()) + extra.toDynamicParameters()
    q, v, a = _state(attached, 7)
    known, y = regressors.momentum(q, v)
    p, l_o = momentum_about_point(model, model.createData(), q, v, np.zeros(3))
    assert np.allclose(known + y @ pi, np.concatenate((p, l_o)), rtol=0, atol=TOL)
    known_tau, y_tau = regressors.torques(q, v, a)
    assert np.allclose(known_tau + y_tau @ pi, pin.rnea(model, model.createData(), q, v, a), rtol=0, atol=TOL)


def test_torque_regression_equals_rnea_with_gravity():
    """A 2.3 kg payload in Sawyer's hand on the air bearing (gravity -9.81 m/s^2 along z): the payload's frame
    carries no inertia in the model (the prior is zero), so the known part is the model and RNEA of the model
    with the payload merged in is the reference."""
    system = build_model("sawyer_airbearing")
    assert np.any(system.model.gravity.linear != 0.0)
    regressors = BodyRegressors(system, "right_hand")
    assert regressors.prior.mass == 0.0
    payload = pin.Inertia(2.3, np.array([0.02, 0.0, 0.08]), np.diag([0.01, 0.012, 0.008]))
    model = system.model.copy()
    frame = model.frames[regressors.frame_id]
    model.inertias[frame.parentJoint] += frame.placement.act(payload)
    for seed in range(3):
        q, v, a = _state(system, seed)
        known, y = regressors.torques(q, v, a)
        reference = pin.rnea(model, model.createData(), q, v, a)
        assert np.allclose(known + y @ payload.toDynamicParameters(), reference, rtol=0, atol=TOL)
        assert np.abs(y @ payload.toDynamicParameters()).max() > 1.0


def test_dynamic_parameters_follow_the_parallel_axis_theorem():
    theta = np.array([12.0, 0.1, -0.2, 0.3, 2.0, 0.1, -0.05, 3.0, 0.2, 4.0])   # kg, m, kg m^2
    m, c = theta[0], theta[1:4]
    inertia_com = body_inertia.inertia_matrix(theta)
    inertia_origin = inertia_com + m * (c @ c * np.eye(3) - np.outer(c, c))
    expected = [m, *(m * c), inertia_origin[0, 0], inertia_origin[0, 1], inertia_origin[1, 1], inertia_origin[0, 2],
                inertia_origin[1, 2], inertia_origin[2, 2]]
    assert np.allclose(body_inertia.dynamic_parameters(theta), expected, rtol=1e-14, atol=1e-14)
    assert np.allclose(body_inertia.physical_parameters(pin.Inertia.FromDynamicParameters(np.array(expected))),
                       theta, rtol=0, atol=1e-13)


def test_dynamic_parameter_jacobian_against_central_differences():
    theta = np.array([12.0, 0.1, -0.2, 0.3, 2.0, 0.1, -0.05, 3.0, 0.2, 4.0])
    jac = body_inertia.dynamic_parameter_jacobian(theta)
    for k in range(10):
        step = np.zeros(10)
        step[k] = 1e-4
        fd = (body_inertia.dynamic_parameters(theta + step) - body_inertia.dynamic_parameters(theta - step)) / 2e-4
        assert np.allclose(jac[:, k], fd, rtol=0, atol=1e-8)    # pi is at most cubic: O(h^2) = 1e-8 x O(1)


def test_errors_and_physical_consistency():
    truth = np.array([1500.0, 0.0, 0.0, 0.0, 300.0, 0.0, 0.0, 300.0, 0.0, 300.0])
    estimate = truth.copy()
    estimate[0], estimate[4], estimate[5] = 1515.0, 303.0, 3.0
    assert body_inertia.mass_relative_error(estimate, truth) == pytest.approx(0.01)
    expected = np.sqrt(3.0 ** 2 + 2 * 3.0 ** 2) / np.sqrt(3 * 300.0 ** 2)   # |diag(3, 0, 0) + 3 (e_xy + e_yx)|_F
    assert body_inertia.inertia_relative_error(estimate, truth) == pytest.approx(expected)
    assert body_inertia.physically_consistent(truth)
    broken = truth.copy()
    broken[9] = 700.0        # izz > ixx + iyy: no rigid body has it
    assert not body_inertia.physically_consistent(broken)
