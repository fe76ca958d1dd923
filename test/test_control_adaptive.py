"""Seed 004 ch. 7: adaptive inverse dynamics (space_robot_control/adaptive_inverse_dynamics.py) on the Hubble study
(thesis_studies/adaptive_study.py), shortened here; the full 60 s run is `space-robot-sim hubble_adaptive`.

Independent references: the regressor against Pinocchio's rnea (crba and the bias forces of the true model); the
Lyapunov function of eq. 7.12 evaluated at every control step (V' = -x^T Q x <= 0 in continuous time, so V may
rise between steps only by the integration error of the sampled loop).
"""
import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from space_robot_control.adaptive_inverse_dynamics import EstimatedModel, lyapunov_blocks, null_space_basis
from space_robot_control.thesis_studies.adaptive_study import AdaptiveStudy, read_adaptive_settings
from space_robot_dynamics.config_reader import ConfigReader, load_config_file
from space_robot_dynamics.errors import ConfigError

STUDY = "config/studies/hubble_adaptive.yaml"


@pytest.fixture(scope="module")
def settings():
    return read_adaptive_settings(load_config_file(STUDY))


@pytest.fixture(scope="module")
def short_run(settings):
    study = AdaptiveStudy(settings)
    return study, study.run(duration=3.0)


def test_regressor_reproduces_the_inverse_dynamics(settings):
    """Y(q, v, a) pi = rnea(q, v, a) on the estimated bodies' share: with pi the true parameters of those bodies
    and every other body's contribution subtracted (rnea of a copy with the estimated bodies massless)."""
    study = AdaptiveStudy(settings)
    model = study.system.model
    rng = np.random.default_rng(11)
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    estimated = EstimatedModel(model, study.estimated.joints)
    without = pin.Model(model)
    for j in estimated.joints:
        without.inertias[j] = pin.Inertia.Zero()
    share = pin.rnea(model, model.createData(), q, v, a) - pin.rnea(without, without.createData(), q, v, a)
    assert np.allclose(estimated.regressor(q, v, a).dot(estimated.true_parameters), share, atol=1e-8, rtol=0)


def test_lyapunov_blocks_and_null_space():
    P = lyapunov_blocks(np.array([30.0, 50.0]), np.array([40.0, 50.0]), 2.0)
    for p, (kp, kd) in zip(P, [(30.0, 40.0), (50.0, 50.0)]):
        A = np.array([[0.0, 1.0], [-kp, -kd]])
        assert np.allclose(A.T.dot(p) + p.dot(A), -2.0 * np.eye(2))
        assert np.all(np.linalg.eigvalsh(p) > 0)
    J = np.random.default_rng(2).normal(size=(6, 18))
    S = null_space_basis(J, np.arange(12))
    assert np.allclose(J.dot(S), 0.0, atol=1e-12) and np.allclose(S[:12], np.eye(12))


def test_lyapunov_function_does_not_increase(short_run, settings):
    """V (eq. 7.12) at every control step: its largest rise between two steps is below 1e-6 V(0) (integration
    error of the 2 ms sampled loop; measured ~1e-9), while V falls by more than half over the 3 s."""
    _, result = short_run
    assert result.summary["max_lyapunov_increase"] < 1e-6
    assert result.summary["lyapunov_final"] < 0.5 * result.summary["lyapunov_initial"]
    assert np.all(np.diff(result.series["lyapunov"]) <= 1e-6 * result.summary["lyapunov_initial"])


def test_estimates_stay_bounded_and_move(short_run):
    """|pi_hat - pi| <= sqrt(V(0) max Gamma^-1) (V >= |pi_tilde|^2 / max Gamma^-1 and V non-increasing); and the
    estimates do move from their initial values (the adaptation acts)."""
    study, result = short_run
    assert result.summary["max_parameter_error"] <= result.summary["max_parameter_error_bound"]
    moved = np.abs(result.series["estimates"][-1] - study.initial_estimate).max()
    assert moved > 10.0                        # kg m^2 on the inertia entries


def test_tracking_converges_with_wrong_parameters(short_run):
    """Joint errors shrink from 0.5 rad to below 0.055 rad in 3 s: with exact parameters joint 5 (K_P 30, K_D 40:
    poles -0.765 and -39.2 1/s) would be at 0.5 * 39.2 / 38.47 * exp(-0.765 * 3) = 0.0514 rad; the law starts from
    half the Hubble's mass and inertia, whose error (Y_1 pi_tilde, eq. 7.8) may add a few per cent (measured
    0.0517). The force error stays inside the 1 N band after the first second (eq. 7.17: e_F = sigma / (1 + K_F))."""
    _, result = short_run
    s = result.series
    assert np.abs(s["joint_error"][-1]).max() < 0.055
    assert np.abs(s["force_error"][s["t"] > 1.0]).max() < 1.0


def test_without_adaptation_the_estimates_stay(settings):
    frozen = dataclasses.replace(settings, gamma_inverse={"mass": 0.0, "first_moment": 0.0, "inertia": 0.0})
    study = AdaptiveStudy(frozen)
    result = study.run(duration=0.2)
    assert np.array_equal(result.series["estimates"][-1], study.initial_estimate)


def test_bad_adaptation_settings_name_the_field():
    data = load_config_file(STUDY).data
    broken = {**data, "adaptation": {**data["adaptation"], "estimated_joints": ["no_joint"]}}
    with pytest.raises(ConfigError, match="adaptation.estimated_joints"):
        AdaptiveStudy(read_adaptive_settings(ConfigReader(broken, source="test")))
    broken = {**data, "adaptation": {**data["adaptation"], "initial_scale": -1.0}}
    with pytest.raises(ConfigError, match="adaptation.initial_scale"):
        read_adaptive_settings(ConfigReader(broken, source="test"))
    broken = {**data, "gains": {**data["gains"], "kp": [1.0, 2.0]}}
    with pytest.raises(ConfigError, match="gains.kp"):
        AdaptiveStudy(read_adaptive_settings(ConfigReader(broken, source="test")))


def test_a_wrong_adaptation_sign_makes_the_lyapunov_function_rise(settings, monkeypatch):
    """The check above can fail: with the sign of eq. 7.11 reversed, V' = -x^T Q x + 2 pi_tilde^T Y_1^T s > 0
    somewhere, and the step-to-step rise is far above the 1e-6 V(0) tolerance (Gamma^-1 / 100 here: with the
    shipped gains the reversed law drives the estimated model singular within the first second)."""
    from space_robot_control.adaptive_inverse_dynamics import AdaptationLaw

    rate = AdaptationLaw.rate
    monkeypatch.setattr(AdaptationLaw, "rate", lambda self, *args: -rate(self, *args))
    slow = dataclasses.replace(settings, gamma_inverse={k: v / 100 for k, v in settings.gamma_inverse.items()})
    result = AdaptiveStudy(slow).run(duration=1.0)
    assert result.summary["max_lyapunov_increase"] > 1e-4


@pytest.mark.slow
def test_hubble_case_settles_as_its_error_dynamics_predict(settings):
    """10 s of the study (~10 s of computing): settling into the bands (1e-3 rad, 1 N) is set by joint 5 (K_P 30,
    K_D 40, the 0.5 rad step): its scalar error dynamics alone enter the band at t_0 = 8.15 s; the adaptive loop's
    perturbation Y_1 pi_tilde (eq. 7.8) shifts that by a few per cent (measured 2 % earlier; bound 10 %). The
    thesis reports about 40 s."""
    kp, kd, dt = 30.0, 40.0, settings.base.dt
    e, rate, t, last_outside = 0.5, 0.0, 0.0, 0.0
    while t < 10.0:
        h = dt / 20
        rate += h * (-kd * rate - kp * e)
        e += h * rate
        t += h
        if abs(e) > settings.base.joint_band:
            last_outside = t
    result = AdaptiveStudy(settings).run(duration=10.0)
    settling = result.summary["settling_time_s"]
    assert abs(settling - last_outside) <= 0.1 * last_outside
    assert settling < 40.0
