"""Momentum about a chosen point (system_momentum.momentum_about_point, MomentumState.angular_about,
Simulator.momentum_about) against a direct sum over the bodies.

Reference, written out by hand from each body's mass m, centre of mass c_i and inertia about it (joint frame)
and its joint's velocity (Pinocchio LOCAL): world angular velocity w_i = R_i w_local, centre-of-mass velocity
v_ci = R_i (v_local + w_local x c_local), and
    p = sum m_i v_ci,    L_P = sum R_i I_ci R_i^T w_i + (c_i - P) x m_i v_ci     (seed 004 eqs. 2.9-2.12).
The two differ by round-off only: sums of a dozen terms no larger than the largest single-body term (|m_i v_ci|
for p; |m_i v_ci| |c_i - P| or |I_ci w_i| for L_P), so the bound is 1e-12 of that term (~1e4 eps).
"""
import numpy as np
import pinocchio as pin
import pytest
from model_states import random_state

from space_robot_dynamics.errors import CommandError
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_dynamics.simulation.system_momentum import momentum_about_point, momentum_state


def direct_sum(model, q, v, point):
    data = model.createData()
    pin.forwardKinematics(model, data, q, v)
    p, angular, p_scale, l_scale = np.zeros(3), np.zeros(3), 0.0, 0.0
    for j in range(1, model.njoints):
        inertia, placement, twist = model.inertias[j], data.oMi[j], data.v[j]
        rotation = placement.rotation
        com = placement.act(inertia.lever)
        omega = rotation @ twist.angular
        com_velocity = rotation @ (twist.linear + np.cross(twist.angular, inertia.lever))
        inertia_world = rotation @ inertia.inertia @ rotation.T      # about the body's centre of mass
        body_p = inertia.mass * com_velocity
        p += body_p
        angular += inertia_world @ omega + np.cross(com - point, body_p)
        p_scale = max(p_scale, np.linalg.norm(body_p))
        l_scale = max(l_scale, np.linalg.norm(body_p) * np.linalg.norm(com - point),
                      np.linalg.norm(inertia_world @ omega))
    return p, angular, (p_scale, l_scale)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_momentum_about_a_point_is_the_sum_over_bodies(servicer_target, seed):
    system, model = servicer_target, servicer_target.model
    rng = np.random.default_rng(seed)
    q, v = random_state(system, rng)
    data = model.createData()
    centroidal = momentum_state(model, data, q, v)
    for point in (np.zeros(3), rng.uniform(-5.0, 5.0, 3), centroidal.com):
        p_ref, l_ref, (p_scale, l_scale) = direct_sum(model, q, v, point)
        p, angular = momentum_about_point(model, data, q, v, point)
        assert np.abs(p - p_ref).max() < 1e-12 * p_scale
        assert np.abs(angular - l_ref).max() < 1e-12 * l_scale
        assert np.abs(centroidal.angular_about(point) - l_ref).max() < 1e-12 * l_scale
    sim = Simulator(system, SimulationSettings(), q, v)
    point = [1.0, -2.0, 0.5]
    p_ref, l_ref, (p_scale, l_scale) = direct_sum(model, q, v, np.array(point))
    p, angular = sim.momentum_about(point)
    assert np.abs(p - p_ref).max() < 1e-12 * p_scale and np.abs(angular - l_ref).max() < 1e-12 * l_scale
    # the point matters: about the origin and about the CoM differ by c x p, which is not small here
    assert np.abs(direct_sum(model, q, v, np.zeros(3))[1] - centroidal.angular).max() > 1e-3 * l_scale


@pytest.mark.parametrize("point, message", [([1.0, 2.0], "point: expected 3 values"),
                                            ([0.0, np.nan, 0.0], "point: non-finite values")])
def test_bad_point_is_rejected(servicer_target, point, message):
    sim = Simulator(servicer_target, SimulationSettings())
    with pytest.raises(CommandError, match=message):
        sim.momentum_about(point)
    with pytest.raises(CommandError, match=message):
        sim.observe().momentum.angular_about(point)
