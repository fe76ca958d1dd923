"""Fitting named parameters (space_robot_identification.fitting) on seed 003's joint (the stand-in model).

- The stand-in's exact discretisation against SciPy's DOP853 on the same equations written out here.
- Noise-free data: both methods recover I_m, k, b and lambda to their stopping rules (tolerances below).
- Noisy data: the truth lies within 3 Cramer-Rao sigma for each of 8 seeds, and the sigma predicts the spread
  of the estimates over the seeds.
- Zero spring offset: only the joint's frequency and damping ratio are seen (docs/identification.md), so the
  Jacobian loses a rank and I_m, k, b get no sigma; an offset restores it.
- The covariance against ordinary least squares' textbook formula on a linear problem; determinism.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_identification.fitting import fit, linearised_covariance, start_points
from space_robot_identification.free_parameters import FreeParameter, ParameterSpace
from space_robot_identification.identification_config import read_identification_config
from space_robot_identification.recorded_signals import RecordedSignals

TRUTH = {"joint_1.motor_inertia": 5.6, "joint_1.stiffness": 8.1, "joint_1.damping": 0.5,
         "joint_1.spring_offset": 0.0488692}        # seed 003 Table 2 averages; 2.8 deg (Test #2)
NOISE = 1.0e-3                                        # rad on the link angle
RATE, DURATION = 25.0, 6.0                            # Hz, s: short and coarse to keep the tests fast
CONFIG = {
    "name": "stand_in_test",
    "problem": {"kind": "flexible_joint_stand_in", "joint": "joint_1", "link_inertia": 1.15,
                "nominal": {"motor_inertia": 5.6, "stiffness": 8.1, "damping": 0.5, "spring_offset": 0.0},
                "trajectory": {"start": 0.1309, "acceleration": 0.01, "duration": 10.0},
                "signals": {"joint_1.link_angle": {"data": "joint_states.position.joint_1", "weight": 1.0 / NOISE}}},
    "parameters": {"joint_1.motor_inertia": {"start": 1.0, "lower": 0.001, "upper": 100.0},
                   "joint_1.stiffness": {"start": 5.47, "lower": 0.01, "upper": 100.0},
                   "joint_1.damping": {"start": 1.0, "lower": 0.0, "upper": 10.0},
                   "joint_1.spring_offset": {"start": 0.0, "lower": -0.1, "upper": 0.1}},
    "window": {"start": 0.0, "end": DURATION},
    "methods": ["least_squares", "nelder_mead"],
    "fit": {"nelder_mead": {"xatol": 1.0e-10, "fatol_relative": 1.0e-16, "max_evaluations": 6000}},
}


def config(**changes):
    data = copy.deepcopy(CONFIG)
    for key, value in changes.items():
        data[key] = value
    return read_identification_config(ConfigReader(data, "<test config>"))


def data(cfg, truth=TRUTH, seed=None) -> RecordedSignals:
    times = np.arange(int(DURATION * RATE) + 1) / RATE
    angle = cfg.problem.simulation.simulate(truth, times)["joint_1.link_angle"]
    if seed is not None:
        angle = angle + np.random.default_rng(seed).normal(0.0, NOISE, angle.shape)
    signals = RecordedSignals(source="<test data>")
    signals.with_series("joint_states.position.joint_1", times, angle)
    return signals


def bound(cfg, signals):
    return cfg.problem.bind(signals, cfg.space, *cfg.window)


def test_stand_in_matches_an_independent_integration():
    """Seed 003 eqs. 7-9 for one joint, integrated by DOP853 (rtol 1e-12): the exact discretisation agrees to
    1e-9 rad (DOP853's own error is ~1e-11 here), through the switch from accelerating to coasting at 10 s."""
    cfg = config()
    sim = cfg.problem.simulation
    i_l, i_m, k, b, lam, alpha = 1.15, 5.6, 8.1, 0.5, 0.0488692, 0.01

    def rhs(t, x):
        q, qm, dq, dqm = x
        tau = (i_l + i_m) * alpha if t < 10.0 else 0.0
        spring = k * (qm - q) + b * (dqm - dq)
        return [dq, dqm, spring / i_l, (tau - spring) / i_m]

    times = np.linspace(0.0, 14.0, 141)
    first = solve_ivp(rhs, (0.0, 10.0), [0.1309 + lam, 0.1309, 0.0, 0.0], method="DOP853", rtol=1e-12, atol=1e-14,
                      t_eval=times[times <= 10.0], dense_output=True)
    second = solve_ivp(rhs, (10.0, 14.0), first.sol(10.0), method="DOP853", rtol=1e-12, atol=1e-14,
                       t_eval=times[times > 10.0])
    reference = np.concatenate((first.y, second.y), axis=1)
    out = sim.simulate(TRUTH | {"joint_1.spring_offset": lam}, times)
    assert np.abs(out["joint_1.link_angle"] - reference[0]).max() < 1e-9
    assert np.abs(out["joint_1.motor_angle"] - reference[1]).max() < 1e-9


@pytest.mark.parametrize(("method", "tolerance"), [
    # least squares stops when the relative step is below 1e-12: the estimates are exact to ~1e-10
    ("least_squares", 1e-8),
    # Nelder-Mead stops when the simplex is 1e-10 wide in u = theta / bound width (100 kg m^2 for I_m: 1e-8
    # kg m^2, 2e-9 relative); the cost's flatness along the I_m-k valley leaves a few times more
    ("nelder_mead", 1e-6),
])
def test_noise_free_recovery(method, tolerance):
    cfg = config()
    result = fit(bound(cfg, data(cfg)), cfg.space, method, cfg.fit_options)
    assert result.success, result.message
    for name, value in zip(cfg.space.names, result.theta):
        assert abs(value - TRUTH[name]) <= tolerance * abs(TRUTH[name]), (name, value)
    assert result.cost < 1e-10 * result.cost_start


def test_noisy_recovery_within_the_predicted_uncertainty():
    cfg = config()
    estimates, sigmas = [], []
    for seed in range(1, 9):
        result = fit(bound(cfg, data(cfg, seed=seed)), cfg.space, "least_squares", cfg.fit_options)
        assert result.success
        truth = np.array([TRUTH[n] for n in cfg.space.names])
        assert np.all(np.abs(result.theta - truth) <= 3.0 * result.sigma), (seed, result.theta, result.sigma)
        estimates.append(result.theta)
        sigmas.append(result.sigma)
    # the spread over 8 seeds estimates sigma to ~25 % (chi distribution with 7 degrees of freedom): the
    # predicted sigma must match it within a factor of 2
    ratio = np.std(estimates, axis=0, ddof=1) / np.mean(sigmas, axis=0)
    assert np.all((ratio > 0.5) & (ratio < 2.0)), ratio


def test_zero_spring_offset_hides_the_motor_inertia():
    """With lambda = 0 and the motor torque of the rigid model with the motor, q - q_d obeys
    d'' + 2 zeta w d' + w^2 d = alpha, w^2 = k / mu, 2 zeta w = b / mu, mu = I_m I_l / (I_m + I_l): only two
    combinations of (I_m, k, b) are seen. Noise-free data at the truth: rank 3 of 4 and no sigma for them."""
    cfg = config()
    truth = TRUTH | {"joint_1.spring_offset": 0.0}
    problem = bound(cfg, data(cfg, truth))
    from space_robot_identification.fitting import jacobian_at
    theta = np.array([truth[n] for n in cfg.space.names])
    jacobian = jacobian_at(problem, cfg.space, theta, 1e-6)
    singular = np.linalg.svd(jacobian, compute_uv=False)
    assert singular[-1] < 1e-6 * singular[0]            # finite differences leave ~1e-8: not exactly zero
    with_offset = np.linalg.svd(jacobian_at(bound(cfg, data(cfg)), cfg.space,
                                            np.array([TRUTH[n] for n in cfg.space.names]), 1e-6), compute_uv=False)
    assert with_offset[-1] > 1e-3 * with_offset[0]
    # (k, b) moved along the unseen direction: I_m x s, k x s * (I_m + I_l) / (s I_m + I_l) keeps w and zeta
    i_l, scale = 1.15, 1.5
    mu = truth["joint_1.motor_inertia"] * i_l / (truth["joint_1.motor_inertia"] + i_l)
    i_m2 = truth["joint_1.motor_inertia"] * scale
    mu2 = i_m2 * i_l / (i_m2 + i_l)
    moved = truth | {"joint_1.motor_inertia": i_m2, "joint_1.stiffness": truth["joint_1.stiffness"] * mu2 / mu,
                     "joint_1.damping": truth["joint_1.damping"] * mu2 / mu}
    times = np.arange(151) / RATE
    a = cfg.problem.simulation.simulate(truth, times)["joint_1.link_angle"]
    b = cfg.problem.simulation.simulate(moved, times)["joint_1.link_angle"]
    assert np.abs(a - b).max() < 1e-12


def test_covariance_is_ordinary_least_squares_on_a_linear_problem():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(200, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + rng.normal(0.0, 0.1, 200)
    beta = np.linalg.lstsq(x, y, rcond=None)[0]
    residuals = x @ beta - y
    sigma, covariance, correlation, rank = linearised_covariance(x, residuals)
    expected = residuals @ residuals / (200 - 3) * np.linalg.inv(x.T @ x)
    assert rank == 3
    assert np.allclose(covariance, expected, rtol=1e-12, atol=0)
    assert np.allclose(sigma, np.sqrt(np.diag(expected)), rtol=1e-12)
    assert np.allclose(np.diag(correlation), 1.0)
    x[:, 2] = x[:, 0]                                   # a parameter the data cannot tell from another
    sigma, _, _, rank = linearised_covariance(x, residuals)
    assert rank == 2 and np.isnan(sigma[0]) and np.isnan(sigma[2]) and np.isfinite(sigma[1])


def test_fits_are_deterministic_bit_for_bit():
    cfg = config(fit={"nelder_mead": {"max_evaluations": 60}})
    signals = data(cfg, seed=3)
    for method in ("least_squares", "nelder_mead"):
        first = fit(bound(cfg, signals), cfg.space, method, cfg.fit_options)
        second = fit(bound(cfg, signals.copy()), cfg.space, method, cfg.fit_options)
        assert np.array_equal(first.theta, second.theta) and np.array_equal(first.sigma, second.sigma)


def test_start_points_are_seeded_and_inside_the_bounds():
    space = ParameterSpace((FreeParameter("a", 1.0, 0.0, 10.0, "m"), FreeParameter("b", -0.1, -0.1, 0.1, "rad")))
    first, second = start_points(space, 5, 7, 0.5), start_points(space, 5, 7, 0.5)
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert np.array_equal(first[0], space.start)
    assert all(np.all(p >= space.lower) and np.all(p <= space.upper) for p in first)
    assert len({tuple(p) for p in first}) == 5
