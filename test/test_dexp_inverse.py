"""dexp^-1 of the RKMK4 integrator against its series, on every joint kind the models use.

Independent reference: the Bernoulli series of dexp^-1 (Munthe-Kaas 1998), in the right trivialization
Pinocchio's integrate uses (q (+) xi = q exp(xi)): J_r(xi)^-1 = sum_n B_n / n! (-ad_xi)^n, with the
adjoint matrices of se(3) (Pinocchio's twist order [v, w]), so(3) and se(2) ([vx, vy, w]) written out
here; one-DOF joints commute (identity block). Truncated after B_14, the series is exact in double
precision for |xi| <= 0.3 (next term below 1e-17).

Tolerances: planar blocks 1e-11 (solved from Pinocchio's dIntegrate, measured 4e-13); free-flyer and
spherical blocks 1e-8, because Pinocchio's Jlog3 itself is accurate only to ~3e-9 absolute for angles
between 1e-4 and 1e-3 rad (measured, Pinocchio 3.4 and 4.1). Leaving out the correction (identity) errs
by |xi| |w| / 2 >= 5e-7 at the smallest |xi| tested, the left instead of the right Jacobian by |xi| |w|.
"""
from fractions import Fraction
from math import factorial

import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.simulation.integrators import ManifoldRK4

BERNOULLI = {0: Fraction(1), 1: Fraction(-1, 2), 2: Fraction(1, 6), 4: Fraction(-1, 30), 6: Fraction(1, 42),
             8: Fraction(-1, 30), 10: Fraction(5, 66), 12: Fraction(-691, 2730), 14: Fraction(7, 6)}


def hat(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def ad_se3(xi):
    v, w = xi[:3], xi[3:]
    return np.block([[hat(w), hat(v)], [np.zeros((3, 3)), hat(w)]])


def ad_se2(xi):
    rot = np.array([[0.0, -1.0], [1.0, 0.0]])
    ad = np.zeros((3, 3))
    ad[:2, :2] = xi[2] * rot
    ad[:2, 2] = -rot @ xi[:2]
    return ad


def dexp_inv_series(ad):
    minus_ad = -ad
    return sum(float(b) / factorial(n) * np.linalg.matrix_power(minus_ad, n) for n, b in BERNOULLI.items())


def chain_model():
    """Free flyer -> spherical -> planar -> revolute (bounded) -> continuous: every block kind once."""
    model = pin.Model()
    parent = 0
    for name, joint in (("flyer", pin.JointModelFreeFlyer()), ("ball", pin.JointModelSpherical()),
                        ("planar", pin.JointModelPlanar()), ("hinge", pin.JointModelRZ()),
                        ("wheel", pin.JointModelRUBZ())):
        parent = model.addJoint(parent, joint, pin.SE3(np.eye(3), np.array([0.1, 0.0, 0.0])), name)
        model.appendBodyToJoint(parent, pin.Inertia.FromBox(1.0, 0.1, 0.2, 0.3), pin.SE3.Identity())
    return model


def reference(model, xi, w):
    out = w.copy()
    for joint in model.joints[1:]:
        b = slice(joint.idx_v, joint.idx_v + joint.nv)
        kind = joint.shortname()
        if kind == "JointModelFreeFlyer":
            out[b] = dexp_inv_series(ad_se3(xi[b])) @ w[b]
        elif kind == "JointModelSpherical":
            out[b] = dexp_inv_series(hat(xi[b])) @ w[b]
        elif kind == "JointModelPlanar":
            out[b] = dexp_inv_series(ad_se2(xi[b])) @ w[b]
    return out


@pytest.mark.parametrize("size", [1e-6, 1e-4, 3e-4, 1e-3, 0.03, 0.3])
def test_dexp_inverse_matches_bernoulli_series(size):
    model = chain_model()
    integrator = ManifoldRK4(model)
    rng = np.random.default_rng(7)
    planar = slice(model.joints[3].idx_v, model.joints[3].idx_v + 3)
    for _ in range(20):
        q0 = pin.integrate(model, pin.neutral(model), rng.normal(size=model.nv))
        xi = rng.normal(size=model.nv)
        xi *= size / np.linalg.norm(xi)
        w = rng.normal(size=model.nv)
        got = integrator.dexp_inv(q0, pin.integrate(model, q0, xi), xi, w, np.empty(model.nv))
        expected = reference(model, xi, w)
        assert np.abs(got[planar] - expected[planar]).max() < 1e-11
        assert np.abs(got - expected).max() < 1e-8, f"|xi| = {size}"
