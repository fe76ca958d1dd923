"""Assumed modes against an independent second formulation: N rigid segments with torsional springs
(docs/flexibility.md sec. 11).

Seed 000's study (0.5 N m sinusoids of period 1 s on both joints, from rest, arm stretched) with link 2 flexible in
its plane, first clamped frequency 5 Hz (EI = mu L^4 (omega_1 / (b_1 L)^2)^2 = 79.84 N m^2 for 1 kg/m over 1 m),
damping ratio 0.03 on mode 1:
- product: the Simulator on the expanded model (modal bodies, tip chain, reduced dynamics; free-flying 3-D base,
  RKMK4 at 0.25 ms), n in-plane modes with the stiffness-proportional damping ratios 0.03 omega_n / omega_1;
- reference (test/reference/segmented_beam.py): a plain Pinocchio chain, link 2 as N hinged rods (Hencky bar
  chain) with stiffness-proportional hinge dampers, planar base, scipy's Radau at rtol 1e-9.
Compared over 2 s (the start-up transient and two excitation periods) at 10 ms: the tip deflection in link 2's
frame (y) and the end-effector difference flexible minus rigid (the rigid arm run by each formulation itself).

Why these bounds: the bar chain converges to the Euler-Bernoulli beam as 1/N^2 (a factor 4 per doubling; 3 is
required), and the three-mode model's truncation is below what N = 32 resolves, so the difference at N = 32 must be
small against the signal: 0.2 % of the largest tip deflection (measured 0.09 %) and 1 % of the largest end-effector
difference (measured 0.5 %). With one mode (the seed 000 scenario's model) the difference stops falling at the
truncation of modes 2 and up: bounded by 2 % of the tip deflection (measured 1.2 %). The input hold of the product
(torque sampled at mid-step, 0.25 ms) perturbs by ~(omega dt)^2 / 24 ~ 1e-7 relative (test_seed000_planar_two_link):
negligible here. Measured figures (pin 4.1), tip deflection difference (m) with three modes for N = 2, 4, 8, 16, 32:
2.95e-4, 7.25e-5, 1.84e-5, 4.95e-6, 1.61e-6; largest tip deflection 1.72e-3 m, end-effector difference 3.4e-4 m.
"""
from __future__ import annotations

import copy

import numpy as np
import pinocchio as pin
import pytest
import yaml
from reference.segmented_beam import segmented_arm, simulate

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.model.beam_modes import wavenumbers
from space_robot_dynamics.model.model_config import read_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.package_share import resolve
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

MASS_PER_LENGTH = 1.0           # kg/m: the 1 kg, 1 m link (docs/flexibility.md sec. 3)
FIRST_FREQUENCY = 5.0           # Hz, seed 000
ZETA = 0.03                     # seed 000
DURATION = 2.0                  # s
SAMPLE = 0.01                   # s
DT = 2.5e-4                     # s, product
SEGMENTS = (2, 4, 8, 16, 32)
BL = wavenumbers("clamped_free", 3)
OMEGA_1 = 2 * np.pi * FIRST_FREQUENCY
EI = MASS_PER_LENGTH * (OMEGA_1 / BL[0] ** 2) ** 2


def torque(t: float) -> tuple[float, float]:
    """Seed 000: 0.5 N m sinusoid of period 1 s on both joints."""
    value = 0.5 * np.sin(2 * np.pi * t)
    return value, value


def product(modes: int) -> dict:
    data = yaml.safe_load(resolve("config/models/planar_two_link.yaml").read_text())
    if modes:
        ratios = ZETA * (BL[:modes] / BL[0]) ** 2
        data["flexible_links"] = [{"link": "link_2", "bending_y": {"modes": modes, "EI": float(EI),
                                                                   "damping_ratios": ratios.tolist()}}]
    system = SystemModel(read_model_config(ConfigReader(copy.deepcopy(data), source="test")))
    sim = Simulator(system, SimulationSettings(dt=DT))
    model, frames = system.model, system.model.createData()
    tip, root = model.getFrameId("end_effector"), model.getFrameId("link_2")
    stride = round(SAMPLE / DT)
    out = {"tip_local": [], "tip_world": []}

    def record():
        pin.framesForwardKinematics(model, frames, sim.state.q)
        out["tip_local"].append(frames.oMf[root].actInv(frames.oMf[tip].translation))
        out["tip_world"].append(frames.oMf[tip].translation.copy())

    record()
    for k in range(round(DURATION / DT)):
        sim.step(torque((k + 0.5) * DT))
        if (k + 1) % stride == 0:
            record()
    return {k: np.asarray(v) for k, v in out.items()}


@pytest.fixture(scope="module")
def runs():
    times = np.linspace(0.0, DURATION, round(DURATION / SAMPLE) + 1)
    reference = {n: simulate(segmented_arm(n, EI, MASS_PER_LENGTH, ZETA, OMEGA_1), torque, times)
                 for n in (0, *SEGMENTS)}
    modal = {n: product(n) for n in (0, 1, 3)}
    return reference, modal


def table(reference: dict, modal: dict, modes: int) -> tuple[np.ndarray, np.ndarray]:
    """Largest |tip deflection difference| and |end-effector-difference difference| (m) per N."""
    tip, ee = [], []
    product_difference = modal[modes]["tip_world"][:, :2] - modal[0]["tip_world"][:, :2]
    for n in SEGMENTS:
        tip.append(np.abs(reference[n]["tip_local"][:, 1] - modal[modes]["tip_local"][:, 1]).max())
        reference_difference = reference[n]["tip_world"][:, :2] - reference[0]["tip_world"][:, :2]
        ee.append(np.linalg.norm(reference_difference - product_difference, axis=1).max())
    return np.array(tip), np.array(ee)


@pytest.mark.slow
def test_rigid_arms_agree(runs):
    """The two formulations on the rigid arm (planar base chain vs free flyer): only the input hold differs."""
    reference, modal = runs
    assert np.abs(reference[0]["tip_world"][:, :2] - modal[0]["tip_world"][:, :2]).max() < 1e-6   # m (meas. 5e-8)
    assert np.abs(modal[0]["tip_world"][:, 2]).max() < 1e-12          # the product's 3-D model stays in the plane


@pytest.mark.slow
def test_segments_converge_to_the_modal_model(runs):
    reference, modal = runs
    tip, ee = table(reference, modal, 3)
    print("\nN", SEGMENTS, "\ntip deflection difference (m)", tip, "\nend-effector difference difference (m)", ee)
    largest_tip = np.abs(modal[3]["tip_local"][:, 1]).max()
    largest_ee = np.linalg.norm(modal[3]["tip_world"][:, :2] - modal[0]["tip_world"][:, :2], axis=1).max()
    assert largest_tip > 1e-3                                     # m: the link bends
    assert np.all(tip[:-1] / tip[1:] > 3.0), tip                  # 1/N^2
    assert np.all(ee[:3] / ee[1:4] > 3.0), ee
    assert tip[-1] < 2e-3 * largest_tip
    assert ee[-1] < 1e-2 * largest_ee


@pytest.mark.slow
def test_one_mode_stops_at_its_truncation(runs):
    reference, modal = runs
    tip, _ = table(reference, modal, 1)
    largest_tip = np.abs(modal[1]["tip_local"][:, 1]).max()
    assert tip[-1] < 2e-2 * largest_tip
    assert tip[-1] > 0.5 * tip[-2]          # no longer falls with N: the missing modes, not the chain


def test_bar_chain_frequency_converges_to_euler_bernoulli():
    """The reference's own check: with the base and joints held, the chain's first frequency -> 5 Hz as 1/N^2."""
    errors = []
    for n in (8, 16, 32):
        arm = segmented_arm(n, EI, MASS_PER_LENGTH, 0.0, OMEGA_1)
        mass = pin.crba(arm.model, arm.model.createData(), pin.neutral(arm.model))[np.ix_(arm.hinge_v, arm.hinge_v)]
        first = np.sqrt(np.linalg.eigvals(np.linalg.solve(mass, np.diag(arm.stiffness))).real.min()) / (2 * np.pi)
        errors.append(abs(first / FIRST_FREQUENCY - 1.0))
    assert errors[-1] < 2e-3 and errors[0] / errors[1] > 3.0 and errors[1] / errors[2] > 3.0, errors
