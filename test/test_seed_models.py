"""The two seed models, checked as physics rather than as transcription.

- Air-bearing test-bed (seed 003, Wojtunik et al. 2023, sec. 3.1, Table 1): mass, CoM and moment of
  inertia about the system CoM from Pinocchio (ccrba, crba) against a planar sum over the published figures
  written out here, with the planar forward kinematics of seed 003 eqs. 21-23 (parallel-axis theorem);
  end-effector position against eq. 21; an RK4 run with joint torques conserving the in-plane linear
  momentum and the angular momentum about z, with gravity (along -z, carried by the table) doing no work.
  A tilted-table run is the negative control: the same checks must fail there.
- Hubble case (seed 004, Al-Shibli 2005, sec. 7.4, Table 7.2): total mass and the 3x3 centroidal inertia
  against sum_i (R_i I_i R_i^T + m_i D(r_i - c)) (seed 004 eqs. 2.17, 2.24), and the servicer's and the
  target's base blocks of the mass matrix (free-flyer velocity in the base frame) against their
  composite spatial inertias.
- A corrupted copy of each URDF (negative mass, non-physical inertia, unknown parent link) is rejected
  with a ConfigError that names the link.

Figures marked "chosen" are not in the seeds; urdf/*.urdf.xacro says why each was chosen.
"""
from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
import yaml
from scipy.spatial.transform import Rotation

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model import urdf_source
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.package_share import resolve
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_dynamics.simulation.system_momentum import body_momenta_scale

TESTBED_CONFIG = "config/models/airbearing_testbed.yaml"
HUBBLE_CONFIG = "config/models/hubble.yaml"

# Mass properties are sums of a few dozen float64 products of O(1e-4..1e4) figures: two summation orders
# agree to ~1e-15 relative. 1e-12 leaves a margin of ~1000 and is ~1e8 below the effect of the smallest
# published figure (Table 1: flipping the sign of link 3's 0.0004 m CoM offset changes the test-bed's Izz about
# the CoM by 3e-4 to 7e-4 relative and its CoM by 5e-5 m), so a misplaced joint origin or inertial origin fails.
REL_TOL = 1e-12

# ---- seed 003 figures, typed from the paper (not read from the URDF) ------------------------------------
SAT_MASS = 58.69                    # kg, sec. 3.1
SAT_IZZ = 2.42                      # kg m^2 about z through the mock-up CoM, sec. 3.1
MOUNT = np.array([0.337, -0.001])   # m, p_m in the satellite frame Pi_0 from its CoM, sec. 3.1
LINK_MASS = np.array([2.81, 2.82, 4.64])            # kg, Table 1
LINK_IZZ = np.array([0.0637, 0.0635, 0.0515])       # kg m^2 about the link CoM, Table 1
LINK_LENGTH = np.array([0.449, 0.449, 0.310])       # m, Table 1
LINK_COM = np.array([[0.1362, -0.0017], [0.1340, -0.0005], [0.1511, 0.0004]])   # m, link frame, Table 1
# Sec. 3.2 initial manipulator configuration (q1 = q_m1: no initial spring offset in a rigid model).
INITIAL_JOINTS = np.deg2rad([7.5, -15.0, -22.5])


def rot2(angle: float) -> np.ndarray:
    """Seed 003 eq. 22: planar rotation matrix."""
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s], [s, c]])


def seed003_bodies(x0: float, y0: float, q0: float, q: np.ndarray):
    """(mass, Izz, CoM position in the table plane) of the mock-up and the three links, and the end-effector
    position: seed 003 eqs. 21-23 (R_i = Rot(q0 + q1 + ... + qi), joint i+1 at R_i [l_i, 0] from joint i)."""
    base = np.array([x0, y0])
    bodies = [(SAT_MASS, SAT_IZZ, base)]
    joint = base + rot2(q0) @ MOUNT
    for i in range(3):
        r_i = rot2(q0 + np.sum(q[:i + 1]))
        bodies.append((LINK_MASS[i], LINK_IZZ[i], joint + r_i @ LINK_COM[i]))
        joint = joint + r_i @ np.array([LINK_LENGTH[i], 0.0])
    return bodies, joint


def planar_composite(bodies):
    """Total mass, CoM and moment of inertia about z through the CoM (parallel-axis theorem)."""
    mass = sum(m for m, _, _ in bodies)
    com = sum(m * r for m, _, r in bodies) / mass
    izz = sum(i + m * float(np.sum((r - com) ** 2)) for m, i, r in bodies)
    return mass, com, izz


def symmetric(upper: np.ndarray) -> np.ndarray:
    """crba fills the upper triangle (Pinocchio 3); make the full matrix."""
    return np.triu(upper) + np.triu(upper, 1).T


@pytest.fixture(scope="module")
def testbed() -> SystemModel:
    return SystemModel(load_model_config(TESTBED_CONFIG))


@pytest.fixture(scope="module")
def hubble() -> SystemModel:
    return SystemModel(load_model_config(HUBBLE_CONFIG))


def planar_configuration(system: SystemModel, x0: float, y0: float, q0: float, joints) -> np.ndarray:
    q = system.neutral()
    q[system.q_slice(system.subtree("servicer").config.root_joint_name)] = [x0, y0, np.cos(q0), np.sin(q0)]
    for name, angle in zip(system.arm_joints, joints, strict=True):
        system.set_joint_angle(q, name, angle)
    return q


# ==================================== air-bearing test-bed ============================================
@pytest.mark.parametrize("pose, joints", [
    ((0.0, 0.0, 0.0), INITIAL_JOINTS),                          # sec. 3.2 start of every experiment
    ((0.31, -0.27, 0.8), np.array([1.1, -0.7, 2.3])),           # arbitrary: every term of eqs. 21-23 active
])
def test_testbed_mass_properties_match_table_1(testbed, pose, joints):
    model, data = testbed.model, testbed.model.createData()
    q = planar_configuration(testbed, *pose, joints)
    bodies, _ = seed003_bodies(*pose, joints)
    mass, com, izz = planar_composite(bodies)

    pin.ccrba(model, data, q, np.zeros(model.nv))      # centroidal inertia (world axes, about the CoM)
    assert data.Ig.mass == pytest.approx(mass, rel=REL_TOL)
    np.testing.assert_allclose(data.com[0][:2], com, rtol=0, atol=REL_TOL)
    assert abs(data.com[0][2]) <= REL_TOL                              # every body in the table plane
    assert data.Ig.inertia[2, 2] == pytest.approx(izz, rel=REL_TOL)

    # Base block of the mass matrix: planar-joint velocity (v_x, v_y, w_z) in the mock-up frame, so
    # M_bb = [[m E2, m S c_b], [., Izz about the mock-up CoM]], c_b the system CoM in the mock-up frame.
    m_bb = symmetric(pin.crba(model, data, q))[:3, :3]
    c_b = rot2(pose[2]).T @ (com - np.array(pose[:2]))
    expected = np.array([[mass, 0.0, -mass * c_b[1]],
                         [0.0, mass, mass * c_b[0]],
                         [-mass * c_b[1], mass * c_b[0], izz + mass * c_b @ c_b]])
    np.testing.assert_allclose(m_bb, expected, rtol=0, atol=REL_TOL * izz)


def test_testbed_end_effector_follows_eq_21(testbed):
    model, data = testbed.model, testbed.model.createData()
    pose, joints = (0.31, -0.27, 0.8), np.array([1.1, -0.7, 2.3])
    pin.framesForwardKinematics(model, data, planar_configuration(testbed, *pose, joints))
    _, tip = seed003_bodies(*pose, joints)
    position = data.oMf[model.getFrameId("end_effector")].translation
    np.testing.assert_allclose(position, [*tip, 0.0], rtol=0, atol=1e-14)


# RK4 run, 3 s: torques (N m) sized to the links' inertias about their joints (0.12-0.16 kg m^2; the whole
# arm about joint 1, stretched, 6.3 kg m^2) so joint rates reach 0.9-1.9 rad/s and the mock-up yaws at up to
# 0.29 rad/s (measured); incommensurate frequencies (rad/s) so no symmetry hides an error.
RUN_DT, RUN_STEPS = 1e-3, 3000
TORQUE_AMPLITUDE = np.array([0.6, 0.3, 0.15])
TORQUE_OMEGA = np.array([2.1, 3.3, 4.7])
TABLE_TILT = 1e-3                                 # rad: the negative control's levelling error


def run_testbed(system: SystemModel):
    """Sampled rows (t, p_x, p_y, L_z, T, T - W_actuators, max |g(q)|) and the run's largest body momenta.

    p (kg m/s) and L_z (kg m^2/s, about the system CoM) in the world frame, T kinetic energy and W the
    actuators' work (J), g(q) the generalized gravity force (N, N m).
    """
    sim = Simulator(system, SimulationSettings(dt=RUN_DT, integrator="rk4"),
                    planar_configuration(system, 0.0, 0.0, 0.0, INITIAL_JOINTS))
    model, data = system.model, system.model.createData()
    rows, p_scale, l_scale = [], 0.0, 0.0
    for k in range(RUN_STEPS + 1):
        if k % 100 == 0:
            s, obs = sim.state, sim.observe()
            gravity_force = pin.computeGeneralizedGravity(model, data, s.q)
            energy = obs.momentum.kinetic_energy
            rows.append((s.t, *obs.momentum.linear[:2], obs.momentum.angular[2], energy,
                         energy - obs.actuator_work, np.max(np.abs(gravity_force))))
            p, l_ = body_momenta_scale(model, data, s.q, s.v)
            p_scale, l_scale = max(p_scale, p), max(l_scale, l_)
        if k < RUN_STEPS:
            sim.step(TORQUE_AMPLITUDE * np.sin(TORQUE_OMEGA * sim.state.t + 0.4))
    return np.array(rows), p_scale, l_scale


@pytest.fixture(scope="module")
def level_run(testbed):
    return run_testbed(testbed)


@pytest.fixture(scope="module")
def tilted_run(testbed):
    g = 9.81
    config = dataclasses.replace(testbed.config, gravity=(g * np.sin(TABLE_TILT), 0.0, -g * np.cos(TABLE_TILT)))
    return run_testbed(SystemModel(config))


# RKMK4 at 1 ms: local error O(dt^5) ~ 1e-15 per unit rate, 3000 steps accumulate ~1e-12 relative; 1e-9
# leaves a margin of ~1000 for round-off growth. The tilted table (1 mrad) must break the in-plane momentum
# and the energy balance by at least 1e3 times that.
CONSERVATION_TOL = 1e-9


def test_testbed_conserves_planar_momentum(level_run):
    rows, p_scale, l_scale = level_run
    assert p_scale > 0.1 and l_scale > 0.01          # the run really moves (kg m/s, kg m^2/s)
    p_drift = np.max(np.abs(rows[:, 1:3])) / p_scale           # starts at rest: p = 0
    l_drift = np.max(np.abs(rows[:, 3] - rows[0, 3])) / l_scale
    assert p_drift < CONSERVATION_TOL, p_drift
    assert l_drift < CONSERVATION_TOL, l_drift


def test_testbed_gravity_does_no_work(testbed, level_run):
    rows = level_run[0]
    weight = 9.81 * sum(testbed.model.inertias[j].mass for j in range(1, testbed.model.njoints))   # N
    # g(q) = 0 at every sample (N, N m; compared with the weight): gravity (-z) is normal to every joint's motion.
    assert np.max(rows[:, 6]) <= REL_TOL * weight
    # Work-energy balance T(t) - T(0) = W_actuators: nothing else (gravity, the table) does work.
    imbalance = np.max(np.abs(rows[:, 5] - rows[0, 5])) / np.max(rows[:, 4])
    assert imbalance < CONSERVATION_TOL, imbalance


def test_tilted_table_breaks_the_checks(tilted_run):
    """Negative control: 1 mrad of tilt gives gravity an in-plane part; the same measurements must see it."""
    rows, p_scale, _ = tilted_run
    assert np.max(np.abs(rows[:, 1:3])) / p_scale > 1e3 * CONSERVATION_TOL
    assert np.max(np.abs(rows[:, 5] - rows[0, 5])) / np.max(rows[:, 4]) > 1e3 * CONSERVATION_TOL
    assert np.max(rows[:, 6]) > 1e-3                  # N: g(q) no longer vanishes


# ======================================== Hubble case =================================================
# Seed 004 Table 7.2 (kg; kg m^2, Ixx = Iyy = Izz about the body CoM).
BASE_MASS, BASE_INERTIA = 3000.0, 1000.0
TARGET_MASS, TARGET_INERTIA = 11000.0, 3000.0
ARM_MASS = np.array([100.0, 100.0, 50.0, 50.0, 20.0, 10.0])
ARM_INERTIA = np.array([30.0, 30.0, 15.0, 15.0, 7.0, 3.0])
ARM_LINK_LENGTH = 1.0                              # m, sec. 7.4
# Chosen (urdf/hubble.urdf.xacro): mount on the +x face of the sqrt(2) m cube whose inertia matches Table 7.2,
# CoM at mid-link, axes z, y, y, x, y, x in link frames parallel to the base at q = 0 (arm along +x).
ARM_MOUNT = np.array([np.sqrt(6.0 * BASE_INERTIA / BASE_MASS) / 2.0, 0.0, 0.0])
ARM_AXES = np.eye(3)[[2, 1, 1, 0, 1, 0]]
# Sec. 7.4 desired arm angles (rad); the bases at arbitrary poses so every rotation and offset matters.
HUBBLE_ARM_ANGLES = np.array([0.3, 0.2, 0.4, 0.45, 0.5, 0.0])
SERVICER_POSE = (np.array([0.4, -1.2, 0.7]), Rotation.from_rotvec([0.3, -0.5, 0.9]))
TARGET_POSE = (np.array([6.5, 1.0, -0.8]), Rotation.from_rotvec([-1.1, 0.4, 0.2]))


def rodrigues(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rotation by `angle` about the unit vector `axis`: E + sin(a) [k x] + (1 - cos(a)) [k x]^2."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * k @ k


def servicer_bodies(angles: np.ndarray):
    """(mass, inertia about the CoM in base axes, CoM in the base frame) of the base and the six links."""
    bodies = [(BASE_MASS, BASE_INERTIA * np.eye(3), np.zeros(3))]
    rotation, joint = np.eye(3), ARM_MOUNT.copy()
    for i in range(6):
        rotation = rotation @ rodrigues(ARM_AXES[i], angles[i])
        com = joint + rotation @ np.array([ARM_LINK_LENGTH / 2.0, 0.0, 0.0])
        bodies.append((ARM_MASS[i], rotation @ (ARM_INERTIA[i] * np.eye(3)) @ rotation.T, com))
        joint = joint + rotation @ np.array([ARM_LINK_LENGTH, 0.0, 0.0])
    return bodies


def d_matrix(r: np.ndarray) -> np.ndarray:
    """Seed 004 eq. 2.24: D(r) = [r x]^T [r x] = |r|^2 E - r r^T."""
    return (r @ r) * np.eye(3) - np.outer(r, r)


def composite(bodies):
    """Total mass, CoM and inertia about the CoM (seed 004 eq. 2.17 with the parallel-axis term m D(r))."""
    mass = sum(m for m, _, _ in bodies)
    com = sum(m * r for m, _, r in bodies) / mass
    inertia = sum(i + m * d_matrix(r - com) for m, i, r in bodies)
    return mass, com, inertia


def hubble_configuration(system: SystemModel) -> np.ndarray:
    q = system.neutral()
    for name, (position, rotation) in (("servicer", SERVICER_POSE), ("target", TARGET_POSE)):
        q[system.q_slice(system.subtree(name).config.root_joint_name)] = [*position, *rotation.as_quat()]
    for name, angle in zip(system.arm_joints, HUBBLE_ARM_ANGLES, strict=True):
        system.set_joint_angle(q, name, angle)
    return q


def test_hubble_centroidal_inertia_matches_table_7_2(hubble):
    model, data = hubble.model, hubble.model.createData()
    (p_s, r_s), (p_t, r_t) = SERVICER_POSE, TARGET_POSE
    world = [(m, r_s.as_matrix() @ i @ r_s.as_matrix().T, p_s + r_s.apply(c))
             for m, i, c in servicer_bodies(HUBBLE_ARM_ANGLES)]
    world.append((TARGET_MASS, r_t.as_matrix() @ (TARGET_INERTIA * np.eye(3)) @ r_t.as_matrix().T, p_t))
    mass, com, inertia = composite(world)
    assert mass == pytest.approx(14330.0, rel=1e-15)   # Table 7.2: 3000 + 11000 + 330 kg

    pin.ccrba(model, data, hubble_configuration(hubble), np.zeros(model.nv))
    assert data.Ig.mass == pytest.approx(mass, rel=REL_TOL)
    np.testing.assert_allclose(data.com[0], com, rtol=0, atol=REL_TOL * np.linalg.norm(com))
    np.testing.assert_allclose(data.Ig.inertia, inertia, rtol=0, atol=REL_TOL * np.max(np.abs(inertia)))


def spatial_inertia(mass: float, com: np.ndarray, inertia_about_origin: np.ndarray) -> np.ndarray:
    """6x6 inertia of a rigid composite at a frame origin, (linear, angular) order: [[m E, -m [c x]],
    [m [c x], I_O]], c the CoM and I_O the rotational inertia about the origin, both in that frame."""
    c = np.array([[0.0, -com[2], com[1]], [com[2], 0.0, -com[0]], [-com[1], com[0], 0.0]])
    return np.block([[mass * np.eye(3), -mass * c], [mass * c, inertia_about_origin]])


def test_hubble_base_blocks_of_the_mass_matrix(hubble):
    """Free-flyer velocity (v, w) of each base link in its own frame: the base-base block of M is the
    composite spatial inertia of that whole subtree at the base-link origin, in base-link axes."""
    model, data = hubble.model, hubble.model.createData()
    mass_matrix = symmetric(pin.crba(model, data, hubble_configuration(hubble)))
    servicer = hubble.v_slice(hubble.subtree("servicer").config.root_joint_name)
    target = hubble.v_slice(hubble.subtree("target").config.root_joint_name)

    bodies = servicer_bodies(HUBBLE_ARM_ANGLES)
    mass, com, inertia_com = composite(bodies)
    expected = spatial_inertia(mass, com, inertia_com + mass * d_matrix(com))
    np.testing.assert_allclose(mass_matrix[servicer, servicer], expected, rtol=0,
                               atol=REL_TOL * np.max(np.abs(expected)))
    expected_target = spatial_inertia(TARGET_MASS, np.zeros(3), TARGET_INERTIA * np.eye(3))
    np.testing.assert_allclose(mass_matrix[target, target], expected_target, rtol=0,
                               atol=REL_TOL * TARGET_MASS)
    assert np.all(mass_matrix[servicer, target] == 0.0)    # two unconnected subtrees: no inertial coupling


# ================================ corrupted URDF copies ===============================================
def corrupt(root: ET.Element, kind: str, name: str) -> None:
    """Negative mass on link `name`; Izz = 3 Ixx = 3 Iyy on link `name` (breaks Izz <= Ixx + Iyy);
    or joint `name`'s parent replaced by a link that does not exist."""
    if kind == "negative_mass":
        mass = root.find(f"link[@name='{name}']/inertial/mass")
        mass.set("value", str(-abs(float(mass.get("value")))))
    elif kind == "non_physical_inertia":
        inertia = root.find(f"link[@name='{name}']/inertial/inertia")
        inertia.set("iyy", inertia.get("ixx"))
        inertia.set("izz", str(3.0 * float(inertia.get("ixx"))))
    else:
        root.find(f"joint[@name='{name}']/parent").set("link", "no_such_link")


@pytest.mark.parametrize("config_path, subtree, kind, name, named", [
    (TESTBED_CONFIG, "servicer", "negative_mass", "link_2", "link[link_2].inertial.mass"),
    (TESTBED_CONFIG, "servicer", "non_physical_inertia", "link_3", "link[link_3].inertial.inertia"),
    (TESTBED_CONFIG, "servicer", "unknown_parent", "joint_2", "joint[joint_2].parent"),
    (HUBBLE_CONFIG, "servicer", "negative_mass", "arm_link_3", "link[arm_link_3].inertial.mass"),
    (HUBBLE_CONFIG, "target", "non_physical_inertia", "base_link", "link[target/base_link].inertial.inertia"),
    (HUBBLE_CONFIG, "servicer", "unknown_parent", "arm_joint_5", "joint[arm_joint_5].parent"),
])
def test_corrupted_copy_is_rejected_naming_the_link(tmp_path, config_path, subtree, kind, name, named):
    document = yaml.safe_load(resolve(config_path).read_text())
    entry = next(s for s in document["subtrees"] if s["name"] == subtree)
    root = ET.fromstring(urdf_source.expand(resolve(entry["urdf"]), entry.get("xacro_args")))
    corrupt(root, kind, name)
    urdf_path = tmp_path / f"{subtree}.urdf"
    urdf_path.write_text(ET.tostring(root, encoding="unicode"))
    entry["urdf"] = str(urdf_path)
    entry.pop("xacro_args", None)
    model_path = tmp_path / "model.yaml"
    model_path.write_text(yaml.safe_dump(document))

    config = load_model_config(model_path)             # the YAML itself is valid
    with pytest.raises(ConfigError) as error:
        SystemModel(config)
    assert error.value.field == named
    if kind == "unknown_parent":
        assert "no_such_link" in str(error.value)
