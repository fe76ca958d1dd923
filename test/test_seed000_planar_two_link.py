"""Seed 000 planar two-link study, rigid case: the product core against an independent constrained-body reference.

Kłak & Jarzębowska 2020 (seed 000), "Numerical Study of the Rigid-Flexible Space Manipulator Model": a
4 kg square base and two 1 m, 1 kg links, arm stretched, at rest; 0.5 N m sinusoid of period 1 s about z
on both joints for 5 s; zero gravity.

- Product: `Simulator` (Pinocchio ABA in reduced coordinates, free-flyer base, Runge-Kutta-Munthe-Kaas RK4).
- Reference: test/reference/seed000_constrained_bodies.py, the paper's own formulation (three 13-state
  quaternion bodies, revolute joints as constraints eqs. 5-6, Lagrange multipliers with Baumgarte terms,
  eq. 10) integrated by DOP853 at rtol = atol = 1e-12, numpy/scipy only.

The paper publishes the rigid case only as plots (Figs. 3-5; its only numbers, "over 1.7 mm" and "within
fraction of degree", are flexible-minus-rigid differences), so there is no printed figure to compare with.

Why the two cannot agree to round-off, and the tolerance: the simulator holds each command over a step
(zero-order hold; we sample the sine at mid-step), the reference sees the continuous sine. The midpoint
hold perturbs the input by a zero-mean ripple whose net effect is that of a relative input error of about
(omega dt)^2 / 24, omega = 2 pi rad/s (the midpoint-rule coefficient). At dt = 0.25 ms that is 1.0e-7;
times the largest angle reached (1.83 rad, joint 2) about 1.9e-7 rad. RK4 truncation at that step is
below 1e-11 rad and the reference's own error about 1e-12 rad (rtol 1e-11 and 1e-12 differ by 5e-13 rad),
so the agreement is limited by the input sampling alone: tolerance 5e-7 rad (sub-microradian), and a
second test checks that the disagreement falls as dt^2 (ratio 4 per halving), the signature of the input
hold; a modelling difference would not shrink with dt, and RK4 truncation would shrink 16-fold.
Measured (pin 4.1 and 3.4 alike), largest over the run, base attitude / joints: 6.7e-8 / 1.1e-7 rad at
dt = 0.25 ms, 2.7e-7 / 4.5e-7 rad at 0.5 ms (1.1e-6 / 1.8e-6 at 1 ms, 1.7e-8 / 2.8e-8 at 0.125 ms).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from reference.seed000_constrained_bodies import (
    BASE_INERTIA_Z,
    BASE_MASS,
    DURATION,
    END_EFFECTOR_OFFSET,
    LINK_INERTIA_Z,
    LINK_MASS,
    TORQUE_PERIOD,
    seed000_joint_torque,
    seed000_two_link,
)
from scipy.spatial.transform import Rotation

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_dynamics.simulation.system_momentum import body_momenta_scale

DT_FINE = 2.5e-4          # s: the agreement run (see module docstring)
DT_COARSE = 5.0e-4        # s: twice DT_FINE, for the convergence order
SAMPLE_PERIOD = 0.01      # s: comparison instants (exact multiples of both steps)
# Baumgarte gains of eq. 9, critically damped (alpha = beta): a 0.1 s time constant, ten times faster than
# the 1 s excitation, and far slower than the integrator's steps, so the stabilisation adds no stiffness.
BAUMGARTE = 10.0          # 1/s
REF_TOL = 1e-12           # DOP853 rtol and atol
ANGLE_TOL = 5e-7          # rad, at DT_FINE (input-hold estimate 1.9e-7 rad, module docstring)
# Positions: the same angular error over the longest lever arm, the 2.5 m from the system CoM to the tip.
POSITION_TOL = 2.5 * ANGLE_TOL   # m
CONSTRAINT_TOL = 1e-9     # m and rad: the reference's joint drift (measured 4e-11 at rtol 1e-12)
MOMENTUM_TOL = 1e-9       # relative to the largest single-body momentum (both measured below 1e-12)
TIP_FRAME = "end_effector"


@pytest.fixture(scope="module")
def system() -> SystemModel:
    return SystemModel(load_model_config("config/models/planar_two_link.yaml"))


def sample_times(duration: float) -> np.ndarray:
    return np.linspace(0.0, duration, int(round(duration / SAMPLE_PERIOD)) + 1)


def run_product(system: SystemModel, dt: float, duration: float, v0: np.ndarray | None = None) -> dict:
    """Simulate with the product core; the torque is the paper's sine sampled at mid-step, held over the step."""
    sim = Simulator(system, SimulationSettings(dt=dt, integrator="rk4"), system.neutral(), v0)
    model, data = system.model, system.model.createData()
    tip = model.getFrameId(TIP_FRAME)
    stride = int(round(SAMPLE_PERIOD / dt))
    steps = int(round(duration / dt))
    out = {k: [] for k in ("t", "base_quat", "base_pos", "joints", "tip", "p_rel", "l_rel", "saturated")}

    def record():
        obs = sim.observe()
        pin.framesForwardKinematics(model, data, obs.q)
        p_scale, l_scale = body_momenta_scale(model, data, obs.q, obs.v)
        out["t"].append(obs.t)
        out["base_quat"].append(obs.bases["manipulator"].orientation_xyzw)
        out["base_pos"].append(obs.bases["manipulator"].position)
        out["joints"].append([system.joint_angle(obs.q, n) for n in system.arm_joints])
        out["tip"].append(data.oMf[tip].translation.copy())
        out["p_rel"].append(np.linalg.norm(obs.momentum.linear - p0) / max(p_scale, 1e-300))
        out["l_rel"].append(np.linalg.norm(obs.momentum.angular - l0) / max(l_scale, 1e-300))
        out["saturated"].append(bool(obs.saturated.any()))

    first = sim.observe()
    p0, l0 = first.momentum.linear.copy(), first.momentum.angular.copy()
    record()
    for k in range(steps):
        sim.step(seed000_joint_torque((k + 0.5) * dt))
        if (k + 1) % stride == 0:
            record()
    return {k: np.asarray(v) for k, v in out.items()}


def run_reference(duration: float, x0_velocities=None, momentum_constraints: bool = False):
    """Integrate the constrained-body reference; returns (bodies, solve_ivp result, sampled outputs)."""
    bodies, x0 = seed000_two_link(BAUMGARTE, BAUMGARTE, momentum_constraints)
    if x0_velocities is not None:
        x0 = x0_velocities(bodies, x0)
    result = bodies.simulate(x0, sample_times(duration), seed000_joint_torque, rtol=REF_TOL, atol=REF_TOL)
    states = result.y.T
    p0, l0 = bodies.momentum(states[0])
    out = {"t": result.t, "base_quat": [], "base_pos": [], "joints": [], "tip": [], "p_rel": [], "l_rel": [],
           "residuals": []}
    for x in states:
        r, _, q, _, _ = bodies.body_state(x, 0)
        out["base_quat"].append(q / np.linalg.norm(q))
        out["base_pos"].append(r)
        out["joints"].append([bodies.joint_angle(x, k) for k in range(len(bodies.joints))])
        out["tip"].append(bodies.point_position(x, 2, END_EFFECTOR_OFFSET))
        p, L = bodies.momentum(x)
        p_scale, l_scale = bodies.body_momenta_scale(x)
        out["p_rel"].append(np.linalg.norm(p - p0) / max(p_scale, 1e-300))
        out["l_rel"].append(np.linalg.norm(L - l0) / max(l_scale, 1e-300))
        out["residuals"].append(bodies.constraint_residuals(x))
    out = {k: np.asarray(v) for k, v in out.items()}
    out["joints"] = np.unwrap(out["joints"], axis=0)   # reference angles come from quaternions, in (-pi, pi]
    return bodies, result, out


def disagreement(product: dict, reference: dict) -> dict:
    """Largest differences over the sampled run: base attitude (geodesic angle, rad), joints (rad), m."""
    assert np.allclose(product["t"], reference["t"], atol=1e-9)
    attitude = (Rotation.from_quat(reference["base_quat"]).inv() * Rotation.from_quat(product["base_quat"]))
    return {
        "attitude": float(attitude.magnitude().max()),
        "joints": float(np.abs(product["joints"] - reference["joints"]).max()),
        "base_position": float(np.linalg.norm(product["base_pos"] - reference["base_pos"], axis=1).max()),
        "tip": float(np.linalg.norm(product["tip"] - reference["tip"], axis=1).max()),
    }


@pytest.fixture(scope="module")
def reference_run():
    return run_reference(DURATION)


@pytest.fixture(scope="module")
def product_fine(system):
    return run_product(system, DT_FINE, DURATION)


@pytest.fixture(scope="module")
def product_coarse(system):
    return run_product(system, DT_COARSE, DURATION)


# ---- the model file ------------------------------------------------------------------------------
def test_model_carries_the_paper_figures(system):
    """Masses and in-plane inertias about each body's CoM are the paper's; the arm is 2 m from joint 1."""
    model = system.model
    bodies = [model.inertias[system.joint_id(n)] for n in ("manipulator_base_joint", *system.arm_joints)]
    assert [b.mass for b in bodies] == pytest.approx([BASE_MASS, LINK_MASS, LINK_MASS], rel=1e-12)
    izz = [b.inertia[2, 2] for b in bodies]            # about z through the body CoM
    assert izz == pytest.approx([BASE_INERTIA_Z, LINK_INERTIA_Z, LINK_INERTIA_Z], rel=1e-12)
    assert list(system.arm_effort_limit) == pytest.approx([5.0, 5.0])   # never clips the 0.5 N m input
    data = model.createData()
    pin.framesForwardKinematics(model, data, system.neutral())
    joint_1 = data.oMi[system.joint_id("arm_joint_1")].translation
    tip = data.oMf[model.getFrameId(TIP_FRAME)].translation
    assert joint_1 == pytest.approx([0.5, 0.0, 0.0], abs=1e-12)
    assert tip - joint_1 == pytest.approx([2.0, 0.0, 0.0], abs=1e-12)


# ---- rigid case of the study -------------------------------------------------------------------------
@pytest.mark.slow
def test_product_matches_constrained_body_reference(product_fine, reference_run):
    """Base attitude, both joint angles, base and tip positions agree over the 5 s study."""
    _, _, reference = reference_run
    assert not product_fine["saturated"].any(), "the 0.5 N m input must not be clipped by the effort limit"
    # The motion is not trivial: the base turns by about 0.8 rad and joint 2 by about 1.8 rad.
    assert np.abs(reference["joints"]).max() > 1.0
    err = disagreement(product_fine, reference)
    assert err["attitude"] < ANGLE_TOL, err
    assert err["joints"] < ANGLE_TOL, err
    assert err["base_position"] < POSITION_TOL, err
    assert err["tip"] < POSITION_TOL, err


@pytest.mark.slow
def test_disagreement_shrinks_as_dt_squared(product_fine, product_coarse, reference_run):
    """Halving dt divides the disagreement by about 4: it is the zero-order hold of the input, not the model.

    Second order is the midpoint-hold signature; RK4 truncation would fall 16-fold and a modelling
    mismatch not at all. The window [3, 5.3] leaves room for the small RK4 and reference contributions.
    """
    _, _, reference = reference_run
    fine = disagreement(product_fine, reference)
    coarse = disagreement(product_coarse, reference)
    for key in ("attitude", "joints"):
        assert 3.0 < coarse[key] / fine[key] < 5.3, (key, coarse, fine)


@pytest.mark.slow
def test_reference_keeps_its_joint_constraints(reference_run):
    """Eqs. 5-6 and their rates stay satisfied: Baumgarte (eq. 10) keeps the drift at the integration error."""
    _, result, reference = reference_run
    position, axis, rate = reference["residuals"].max(axis=0)
    assert position < CONSTRAINT_TOL and axis < CONSTRAINT_TOL and rate < 10 * CONSTRAINT_TOL, (position, axis, rate)
    # The quaternions are integrated freely (eq. 1); their norm drifts only by the integration error.
    norms = [np.linalg.norm(result.y[6 + 13 * i:10 + 13 * i], axis=0) for i in range(3)]
    assert np.abs(np.asarray(norms) - 1.0).max() < 1e-9


@pytest.mark.slow
def test_both_conserve_momentum(product_fine, reference_run):
    """Zero external force and torque: p and L about the CoM (eqs. 7-8) keep their initial (zero) values."""
    _, _, reference = reference_run
    for run in (product_fine, reference):
        assert run["p_rel"].max() < MOMENTUM_TOL
        assert run["l_rel"].max() < MOMENTUM_TOL


@pytest.mark.slow
def test_motion_stays_planar(product_fine, reference_run):
    """Joint axes along z and a start at rest: nothing leaves the XY plane in either formulation."""
    _, _, reference = reference_run
    for run in (product_fine, reference):
        assert np.abs(run["base_pos"][:, 2]).max() < 1e-12
        assert np.abs(run["tip"][:, 2]).max() < 1e-12
        assert np.abs(run["base_quat"][:, :2]).max() < 1e-12   # rotation about z only


@pytest.mark.slow
def test_momentum_constraints_carry_no_force(reference_run):
    """With eqs. 7-8 appended as constraints the trajectory is unchanged and their multipliers vanish.

    The joint-constrained equations already conserve momentum, so the paper's momentum rows are a
    stabiliser only; a mismatch would reveal a momentum error in the joint constraints or the torques.
    """
    _, _, plain = reference_run
    bodies, result, constrained = run_reference(DURATION, momentum_constraints=True)
    assert np.abs(constrained["joints"] - plain["joints"]).max() < 1e-9
    joint_rows = bodies.n_joint_rows
    worst = 0.0
    for x, t in zip(result.y.T[10::10], result.t[10::10], strict=True):   # t = 0 is at rest: no forces
        bodies.rhs(t, x, seed000_joint_torque)
        lam = bodies.last_multipliers
        worst = max(worst, np.abs(lam[joint_rows:]).max() / np.abs(lam[:joint_rows]).max())
    assert worst < 1e-6


# ---- the same system tumbling in 3-D ----------------------------------------------------------------------
TUMBLE_DURATION = 2.0 * TORQUE_PERIOD
TUMBLE_RATE = np.array([0.3, -0.2, 0.1])   # rad/s, initial angular velocity of the whole system, base frame


@pytest.mark.slow
def test_tumbling_three_dimensional_case_agrees(system):
    """The planar study exercises only yaw; a tumble checks the full quaternion/gyroscopic path of both.

    Initial state: the stretched arm spinning rigidly at TUMBLE_RATE about the base CoM (zero joint rates,
    so the constraints hold at t = 0), then the same joint torques. Same tolerance reasoning as the planar
    case; the out-of-plane inertias now matter and come from the URDF and the reference independently.
    """
    v0 = np.zeros(system.nv)
    v0[system.v_slice("manipulator_base_joint")] = np.concatenate([np.zeros(3), TUMBLE_RATE])

    def spinning(bodies, x0):
        x = x0.copy()
        for i in range(bodies.nb):   # all frames equal the world frame at t = 0
            r = x[13 * i:13 * i + 3]
            x[13 * i + 3:13 * i + 6] = np.cross(TUMBLE_RATE, r)
            x[13 * i + 10:13 * i + 13] = TUMBLE_RATE
        return x

    product = run_product(system, DT_FINE, TUMBLE_DURATION, v0)
    _, _, reference = run_reference(TUMBLE_DURATION, spinning)
    assert np.abs(reference["base_quat"][:, :2]).max() > 0.1    # genuinely out of plane
    err = disagreement(product, reference)
    assert err["attitude"] < ANGLE_TOL and err["joints"] < ANGLE_TOL, err
    assert err["base_position"] < POSITION_TOL and err["tip"] < POSITION_TOL, err
    for run in (product, reference):
        assert run["p_rel"].max() < MOMENTUM_TOL and run["l_rel"].max() < MOMENTUM_TOL
    assert reference["residuals"][:, :2].max() < CONSTRAINT_TOL
