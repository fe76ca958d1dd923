"""Modal frequencies of flexible links against Euler-Bernoulli theory (docs/flexibility.md eqs. 3, 9).

A uniform beam (L = 1.2 m, mu = 2.5 kg/m) clamped to a fixed base, expanded by the product (modal bodies, tip
chain, residual), linearised about rest with Pinocchio's crba (flexible_stability.linearized_matrices: T^T M T and
the modal stiffness); the generalized eigenvalues are the model's frequencies. They are compared with:
- clamped-free bending, four modes in y (EI_y = 30) and two in z (EI_z = 12), and two torsion modes (GJ = 5,
  rho_Ip = 0.01): omega = (b L)^2 sqrt(EI / (mu L^4)) with b L tabulated (Blevins) and (2k - 1) pi / (2L)
  sqrt(GJ / rho_Ip), typed here. The lumped modal bodies must reproduce each mode's generalized mass exactly, so the
  agreement is to the tables' digits (b L to 8 decimals: <= 2.7e-9 relative in b, 5.3e-9 in omega; 1e-8 required);
- pinned-free bending on a free revolute joint: the elastic modes of a beam free to turn about a pin, b L =
  3.9266, 7.0686 (tan bL = tanh bL), uncoupled from the rigid rotation (H_i = 0);
- a clamped beam carrying a 3 kg point mass at its tip: the exact frequency solves
  1 + cos b cosh b + r b (cos b sinh b - sin b cosh b) = 0, r = m_tip / (mu L) (solved here), which the
  assumed-mode model approaches from above (Rayleigh-Ritz) as modes are added. Measured relative errors of the
  first frequency for 1..6 modes: 9.7e-3, 1.5e-3, 4.7e-4, 2.0e-4, 1.1e-4, 6.1e-5; required: every added mode
  lowers it, 1 mode within 1.5 %, 6 modes within 1e-4.
A free-vibration run of the first clamped mode checks the period the simulator produces (RK4 at 1 ms: phase error
(omega dt)^4 / 120 per radian, 1e-9 here; the period is read from zero crossings to 1e-6).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from scipy.optimize import brentq

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.model.model_config import read_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.flexible_stability import linearized_matrices
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

L, MU = 1.2, 2.5                 # m, kg/m
EI_Y, EI_Z, GJ, RHO_IP = 30.0, 12.0, 5.0, 0.01
TIP_MASS = 3.0                   # kg
CLAMPED_FREE = np.array([1.87510407, 4.69409113, 7.85475744, 10.99554073])
PINNED_FREE = np.array([3.92660231, 7.06858275])


def beam_urdf(tmp_path, joint: str, tip_mass: float = 0.0) -> str:
    """A uniform beam (plus 0.01 kg m^2 of rigid rotary inertia and 0.02 about its axis) on a fixed base, its free
    end a massless frame or a point mass."""
    tip = ('<joint name="tip_joint" type="fixed"><parent link="beam"/><child link="beam_end"/>'
           f'<origin xyz="{L} 0 0"/></joint><link name="beam_end"/>') if not tip_mass else (
        f'<joint name="tip_joint" type="fixed"><parent link="beam"/><child link="tip_mass"/>'
        f'<origin xyz="{L} 0 0"/></joint><link name="tip_mass"><inertial><origin xyz="0 0 0"/>'
        f'<mass value="{tip_mass}"/><inertia ixx="1e-9" ixy="0" ixz="0" iyy="1e-9" iyz="0" izz="1e-9"/>'
        '</inertial></link>')
    limit = '<axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/>' if joint == "revolute" else ""
    rod = MU * L ** 3 / 12
    path = tmp_path / f"beam_{joint}_{tip_mass}.urdf"
    path.write_text(
        f'<robot name="beam"><link name="world_base"/>'
        f'<joint name="root" type="{joint}"><parent link="world_base"/><child link="beam"/><origin xyz="0 0 0"/>{limit}'
        f'</joint><link name="beam"><inertial><origin xyz="{L / 2} 0 0"/><mass value="{MU * L}"/>'
        f'<inertia ixx="0.02" ixy="0" ixz="0" iyy="{rod + 0.01}" iyz="0" izz="{rod + 0.01}"/></inertial></link>'
        f'{tip}</robot>')
    return str(path)


def build(urdf: str, flexible: dict) -> SystemModel:
    data = {"name": "beam", "subtrees": [{"name": "beam", "urdf": urdf, "base_joint": "fixed",
                                          "base_link": "world_base"}],
            "flexible_links": [{"link": "beam", "bending_y_axis": [0, 1, 0], "mass_per_length": MU, **flexible}]}
    return SystemModel(read_model_config(ConfigReader(data, source="test")))


def frequencies(system: SystemModel) -> np.ndarray:
    """rad/s, ascending, of the undamped linearisation about rest (zero eigenvalues of a free joint dropped)."""
    mass, stiffness, _, _ = linearized_matrices(system, system.neutral())
    values = sla.eigh(stiffness, mass, eigvals_only=True)
    return np.sqrt(values[values > 1e-9 * values.max()])


def test_clamped_free_bending_and_torsion(tmp_path):
    system = build(beam_urdf(tmp_path, "fixed", 0.0), {
        "bending_y": {"modes": 4, "EI": EI_Y}, "bending_z": {"modes": 2, "EI": EI_Z},
        "torsion": {"modes": 2, "GJ": GJ, "polar_inertia_per_length": RHO_IP}})
    expected = np.sort(np.concatenate((
        CLAMPED_FREE ** 2 * np.sqrt(EI_Y / (MU * L ** 4)), CLAMPED_FREE[:2] ** 2 * np.sqrt(EI_Z / (MU * L ** 4)),
        np.array([1, 3]) * np.pi / (2 * L) * np.sqrt(GJ / RHO_IP))))
    assert np.allclose(frequencies(system), expected, rtol=1e-8, atol=0)


def test_pinned_free_bending(tmp_path):
    system = build(beam_urdf(tmp_path, "revolute", 0.0), {"boundary_condition": "pinned_free",
                                                          "bending_y": {"modes": 2, "EI": EI_Y}})
    assert np.allclose(frequencies(system), PINNED_FREE ** 2 * np.sqrt(EI_Y / (MU * L ** 4)), rtol=1e-8, atol=0)


def tip_mass_frequency() -> float:
    """First root of the clamped beam with a tip point mass (Blevins table 8-8, no rotary inertia), rad/s."""
    r = TIP_MASS / (MU * L)

    def equation(b):
        return 1 + np.cos(b) * np.cosh(b) + r * b * (np.cos(b) * np.sinh(b) - np.sin(b) * np.cosh(b))

    grid = np.linspace(0.05, 3.0, 600)
    values = equation(grid)
    k = int(np.flatnonzero(np.sign(values[:-1]) != np.sign(values[1:]))[0])
    b = brentq(equation, grid[k], grid[k + 1], xtol=1e-15)
    return b ** 2 * np.sqrt(EI_Y / (MU * L ** 4))


def test_tip_mass_frequency_converges_from_above(tmp_path):
    urdf = beam_urdf(tmp_path, "fixed", TIP_MASS)
    exact = tip_mass_frequency()
    errors = np.array([frequencies(build(urdf, {"bending_y": {"modes": n, "EI": EI_Y}}))[0]
                       / exact - 1.0 for n in range(1, 7)])
    print("\nfirst frequency error for 1..6 modes:", errors)
    assert np.all(errors > 0.0) and np.all(np.diff(errors) < 0.0)
    assert errors[0] < 1.5e-2 and errors[-1] < 1e-4


def test_simulated_period_of_the_first_mode(tmp_path):
    system = build(beam_urdf(tmp_path, "fixed", 0.0), {"bending_y": {"modes": 2, "EI": EI_Y}})
    q = system.neutral()
    first = system.flexibility.modal[0]
    q[first.q] = first.scale * 0.01          # 1 cm tip deflection in mode 1 only
    sim = Simulator(system, SimulationSettings(dt=1e-3), q)
    deflection = []
    for _ in range(3000):
        sim.step()
        deflection.append(sim.state.q[first.q])
    deflection = np.array(deflection)
    crossings = np.flatnonzero(np.sign(deflection[:-1]) != np.sign(deflection[1:]))
    # linear interpolation of each crossing, then the mean period over the run
    times = (crossings + deflection[crossings] / (deflection[crossings] - deflection[crossings + 1]) + 1) * 1e-3
    period = 2 * np.mean(np.diff(times))
    expected = 2 * np.pi / (CLAMPED_FREE[0] ** 2 * np.sqrt(EI_Y / (MU * L ** 4)))
    assert period == pytest.approx(expected, rel=1e-6)
