"""The expanded model of flexible links and elastic joints (docs/flexibility.md secs. 3-5), checked as physics.

- Mass properties: at zero deflection, total mass, centre of mass and centroidal inertia of the flexible model equal
  the rigid model's (flexible links), and each flexible link's bodies sum to its URDF inertia (eq. 8); an elastic
  joint adds exactly its rotor's inertia about the joint axis.
- Kinetic energy: for random deflections and rates, Pinocchio's kinetic energy of a flexible link's bodies equals
  the floating-frame integral of eq. 5 (line mass and torsion by Gauss quadrature, written out here from the mode
  shapes, plus the rigid rest of the URDF inertia): the modal bodies of eq. 7 reproduce the beam exactly.
- Tip: the frame carried by the tip chain sits at (L, w_y(L), w_z(L)) and turns by Rz(w_y') Ry(-w_z') Rx(theta_x)
  (eq. 4), with w = sum phi_i delta_i from the shapes.
- Bad input: each mistake is a ConfigError naming the field.

Tolerances: sums and quadratures of O(1) figures, exact to round-off (1e-12 relative).
"""
from __future__ import annotations

import copy

import numpy as np
import pinocchio as pin
import pytest
import yaml

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.model_config import read_model_config
from space_robot_dynamics.model.system_model import SystemModel, build_model
from space_robot_dynamics.package_share import resolve

TOL = 1e-12
# seed 000 link_2 (urdf/planar_two_link.urdf, typed here): 1 kg, 1 m, CoM at 0.5 m, inertia about the CoM
LINK_MASS, LINK_LENGTH = 1.0, 1.0
LINK_COM = np.array([0.5, 0.0, 0.0])
LINK_INERTIA = np.diag([0.01, 0.1, 0.1])


def seed000(**flexible) -> dict:
    data = yaml.safe_load(resolve("config/models/planar_two_link.yaml").read_text())
    data.update(copy.deepcopy(flexible))
    return data


def build(data: dict) -> SystemModel:
    return SystemModel(read_model_config(ConfigReader(data, source="test")))


THREE_D = {"flexible_links": [{
    "link": "link_2", "bending_y_axis": [0.0, 0.6, 0.8],
    "bending_y": {"modes": 2, "EI": 40.0, "damping_ratios": [0.02, 0.02]},
    "bending_z": {"modes": 1, "frequencies_hz": [7.0], "damping_ratios": 0.01},
    "torsion": {"modes": 1, "GJ": 3.0, "polar_inertia_per_length": 0.006}}]}


def centroidal(system: SystemModel, q: np.ndarray):
    data = system.model.createData()
    pin.ccrba(system.model, data, q, np.zeros(system.nv))
    return data.Ig.mass, data.com[0].copy(), data.Ig.inertia.copy()


@pytest.mark.parametrize("model", ["planar_two_link_flexible", "three_d"])
def test_flexible_links_keep_the_rigid_mass_properties(model):
    flexible = build_model(model) if model != "three_d" else build(seed000(**THREE_D))
    rigid = build_model("planar_two_link")
    q = rigid.neutral()
    q[rigid.q_slice("arm_joint_1")] = 0.7          # a bent arm, so that every axis counts
    q[rigid.q_slice("arm_joint_2")] = -1.1
    qf = flexible.neutral()
    for name in ("manipulator_base_joint", "arm_joint_1", "arm_joint_2"):
        qf[flexible.q_slice(name)] = q[rigid.q_slice(name)]
    (m0, c0, i0), (m1, c1, i1) = centroidal(rigid, q), centroidal(flexible, qf)
    assert abs(m1 - m0) <= TOL * m0
    assert np.abs(c1 - c0).max() <= TOL
    assert np.abs(i1 - i0).max() <= TOL * np.abs(i0).max()


def link_bodies(system: SystemModel, link: str) -> list[int]:
    """Joints whose bodies belong to the flexible link: its own joint and the modal joints below it."""
    model = system.model
    own = model.frames[model.getFrameId(link)].parentJoint
    return [own] + [j for j in range(1, model.njoints) if model.names[j].startswith(link + "/")
                    and "/tip" not in model.names[j]]


def test_each_flexible_link_sums_to_its_urdf_inertia():
    system = build(seed000(**THREE_D))
    model, data = system.model, system.model.createData()
    pin.forwardKinematics(model, data, system.neutral())
    own = model.frames[model.getFrameId("link_2")].parentJoint
    total = pin.Inertia.Zero()
    for j in link_bodies(system, "link_2"):
        total += data.oMi[own].actInv(data.oMi[j]).act(model.inertias[j])
    urdf = pin.Inertia(LINK_MASS, LINK_COM, LINK_INERTIA)
    assert np.abs(total.matrix() - urdf.matrix()).max() <= TOL


def test_elastic_joint_adds_its_rotor_inertia_only():
    rotor = 2.5e-4
    elastic = build(seed000(elastic_joints=[{"joint": "arm_joint_2", "gear_ratio": 50.0, "motor_inertia": rotor,
                                             "stiffness": 100.0}]))
    rigid = build_model("planar_two_link")
    (m0, c0, i0), (m1, c1, i1) = centroidal(rigid, rigid.neutral()), centroidal(elastic, elastic.neutral())
    assert m1 == m0 and np.abs(c1 - c0).max() <= TOL
    assert np.abs(i1 - i0 - np.diag([0.0, 0.0, rotor])).max() <= TOL      # joint axis z, rotor on the base side
    rotor_joint = elastic.model.getJointId("arm_joint_2/rotor")
    assert elastic.model.parents[rotor_joint] == elastic.model.getJointId("arm_joint_1")   # on the parent link


def beam_kinetic_energy(system, q, v, deflection, rates, twist_rate, torsion):
    """Eq. 5 by quadrature in the link frame (e_x = x, e_y, e_z from the configured bending_y_axis) plus the rigid
    rest of the URDF inertia, from the link frame's twist given by Pinocchio."""
    flexible = system.flexibility.links[0]
    model, data = system.model, system.model.createData()
    pin.forwardKinematics(model, data, q, v)
    own = model.frames[model.getFrameId("link_2")].parentJoint
    twist = data.v[own]                               # link frame, LOCAL
    lin, ang = twist.linear, twist.angular
    e_x = np.array([1.0, 0.0, 0.0])
    e_y = np.array([0.0, 0.6, 0.8])
    e_z = np.cross(e_x, e_y)
    nodes, weights = np.polynomial.legendre.leggauss(80)
    x = 0.5 * (nodes + 1.0) * LINK_LENGTH
    w = 0.5 * weights * LINK_LENGTH
    families = flexible.families
    phi_y = families["bending_y"].modes.shapes(x / LINK_LENGTH)
    phi_z = families["bending_z"].modes.shapes(x / LINK_LENGTH)
    psi = families["torsion"].modes.shapes(x / LINK_LENGTH)
    wy, wz = deflection["y"] @ phi_y, deflection["z"] @ phi_z
    wy_dot, wz_dot = rates["y"] @ phi_y, rates["z"] @ phi_z
    r = np.outer(x, e_x) + np.outer(wy, e_y) + np.outer(wz, e_z)
    r_dot = np.outer(wy_dot, e_y) + np.outer(wz_dot, e_z)
    velocity = lin + np.cross(ang, r) + r_dot
    mu, rho_ip = flexible.mass_per_length, flexible.polar_inertia_per_length
    line = 0.5 * mu * np.sum(w * np.sum(velocity ** 2, axis=1))
    twist_term = 0.5 * rho_ip * np.sum(w * (ang @ e_x + twist_rate @ psi) ** 2)
    # rigid rest: URDF minus the line mass minus the axial inertia rho_Ip L (as quadratic forms)
    rest = pin.Inertia(LINK_MASS, LINK_COM, LINK_INERTIA).matrix()
    line_mass = mu * LINK_LENGTH
    rod = line_mass * LINK_LENGTH ** 2 / 12 * np.diag([0.0, 1.0, 1.0])
    rest -= pin.Inertia(line_mass, 0.5 * LINK_LENGTH * e_x, rod).matrix()
    rest[3:, 3:] -= rho_ip * LINK_LENGTH * np.outer(e_x, e_x)
    v6 = np.concatenate((lin, ang))
    return line + twist_term + 0.5 * v6 @ rest @ v6


def test_modal_bodies_reproduce_the_beam_kinetic_energy():
    system = build(seed000(**THREE_D))
    model, coordinates = system.model, system.coordinates
    rng = np.random.default_rng(7)
    flexibility = system.flexibility
    for _ in range(5):
        q = system.neutral()
        q[:3] = rng.normal(size=3)
        q[3:7] = pin.Quaternion(pin.exp3(rng.normal(size=3))).coeffs()
        q[system.q_slice("arm_joint_1")], q[system.q_slice("arm_joint_2")] = rng.normal(size=2)
        v = rng.normal(size=model.nv)
        deflection = {"y": 0.05 * rng.normal(size=2), "z": 0.05 * rng.normal(size=1)}
        rates = {"y": rng.normal(size=2), "z": rng.normal(size=1)}
        torsion, twist_rate = 0.05 * rng.normal(size=1), rng.normal(size=1)
        for m in flexibility.modal:
            key = {"bending_y": "y", "bending_z": "z"}.get(m.direction)
            index = int(m.name[-1]) - 1
            value, rate = (deflection[key][index], rates[key][index]) if key else (torsion[index], twist_rate[index])
            q[m.q], v[m.v] = m.scale * value, m.scale * rate
        coordinates.project(q, v)
        data = model.createData()
        pin.forwardKinematics(model, data, q, v)
        pinocchio_energy = sum(0.5 * data.v[j].dot(model.inertias[j] * data.v[j])
                               for j in link_bodies(system, "link_2"))
        expected = beam_kinetic_energy(system, q, v, deflection, rates, twist_rate, torsion)
        assert pinocchio_energy == pytest.approx(expected, rel=TOL)


def test_tip_frame_follows_the_deflection():
    system = build(seed000(**THREE_D))
    model, data = system.model, system.model.createData()
    flexible = system.flexibility.links[0]
    q = system.neutral()
    deltas = {"bending_y": np.array([0.03, -0.01]), "bending_z": np.array([0.02]), "torsion": np.array([0.05])}
    for m in system.flexibility.modal:
        q[m.q] = m.scale * deltas[m.direction][int(m.name[-1]) - 1]
    system.coordinates.project(q)
    pin.framesForwardKinematics(model, data, q)
    link = data.oMf[model.getFrameId("link_2")]
    tip = link.actInv(data.oMf[model.getFrameId("end_effector")])
    slope = {d: deltas[d] @ flexible.families[d].modes.shapes(np.array([1.0]), 1)[:, 0] for d in deltas}
    frame = flexible.rotation
    expected_position = frame @ np.array([LINK_LENGTH, deltas["bending_y"].sum(), deltas["bending_z"].sum()])
    expected_rotation = frame @ pin.rpy.rpyToMatrix(deltas["torsion"].sum(), -slope["bending_z"],
                                                    slope["bending_y"]) @ frame.T
    assert np.abs(tip.translation - expected_position).max() <= TOL
    assert np.abs(tip.rotation - expected_rotation).max() <= TOL


BAD = [
    ({"flexible_links": [{"link": "link_9", "bending_y": {"modes": 1, "EI": 1.0}}]}, "flexible_links[0].link"),
    ({"flexible_links": [{"link": "base_link", "bending_y": {"modes": 1, "EI": 1.0}}]}, "flexible_links[0].link"),
    ({"flexible_links": [{"link": "link_2", "tip": "arm_joint_1", "bending_y": {"modes": 1, "EI": 1.0}}]},
     "flexible_links[0].tip"),
    ({"flexible_links": [{"link": "link_2", "bending_y": {"modes": 1, "EI": 1.0, "frequencies_hz": [5.0]}}]},
     "flexible_links[0].bending_y.EI"),
    ({"flexible_links": [{"link": "link_2", "bending_y": {"modes": 2, "frequencies_hz": [5.0]}}]},
     "flexible_links[0].bending_y.frequencies_hz"),
    ({"flexible_links": [{"link": "link_2", "bending_y": {"modes": 1, "EI": 1.0, "damping_ratios": [-0.1]}}]},
     "flexible_links[0].bending_y.damping_ratios[0]"),
    ({"flexible_links": [{"link": "link_2", "boundary_condition": "pinned_free", "bending_y": {"modes": 1, "EI": 1.0},
                          "bending_z": {"modes": 1, "EI": 1.0}}]}, "flexible_links[0].bending_z"),
    ({"flexible_links": [{"link": "link_2", "mass_per_length": 1.5, "bending_y": {"modes": 1, "EI": 1.0}}]},
     "flexible_links[0].mass_per_length"),
    ({"flexible_links": [{"link": "link_2", "bending_y": {"modes": 0, "EI": 1.0}}]}, "flexible_links[0].bending_y"),
    ({"flexible_links": [{"link": "link_2", "bending_y": {"modes": 1, "EI": 1.0}, "colour": "red"}]},
     "flexible_links[0].colour"),
    ({"elastic_joints": [{"joint": "arm_joint_7", "gear_ratio": 1, "motor_inertia": 1, "stiffness": 1}]},
     "elastic_joints[0].joint"),
    ({"elastic_joints": [{"joint": "end_effector_joint", "gear_ratio": 1, "motor_inertia": 1, "stiffness": 1}]},
     "elastic_joints[0].joint"),
    ({"elastic_joints": [{"joint": "arm_joint_1", "gear_ratio": 1, "motor_inertia": 1, "stiffness": -1}]},
     "elastic_joints[0].stiffness"),
    ({"elastic_joints": [{"joint": "arm_joint_1", "gear_ratio": 0, "motor_inertia": 1, "stiffness": 1}]},
     "elastic_joints[0].gear_ratio"),
]


@pytest.mark.parametrize("extra, field", BAD)
def test_bad_flexibility_names_the_field(extra, field):
    with pytest.raises(ConfigError) as raised:
        build(seed000(**extra))
    assert raised.value.field == field, str(raised.value)


def test_mass_per_length_error_says_what_fits():
    with pytest.raises(ConfigError, match="at most 1 kg/m fits"):
        build(seed000(flexible_links=[{"link": "link_2", "mass_per_length": 1.2,
                                       "bending_y": {"modes": 1, "EI": 1.0}}]))


def test_planar_models_bend_in_plane_only():
    data = yaml.safe_load(resolve("config/models/airbearing_testbed.yaml").read_text())
    data["flexible_links"] = [{"link": "link_2", "mass_per_length": 2.0, "bending_z": {"modes": 1, "EI": 5.0}}]
    with pytest.raises(ConfigError) as raised:
        build(data)
    assert raised.value.field == "flexible_links[0].bending_z"
    data["flexible_links"] = [{"link": "link_2", "mass_per_length": 2.0, "bending_y": {"modes": 1, "EI": 5.0},
                               "bending_y_axis": [0, 0.6, 0.8]}]
    with pytest.raises(ConfigError) as raised:
        build(data)
    assert raised.value.field == "flexible_links[0].bending_y_axis"
    data["flexible_links"] = [{"link": "link_2", "mass_per_length": 2.0, "bending_y": {"modes": 2, "EI": 5.0}}]
    assert build(data).flexibility.names == ("link_2/bending_y_1", "link_2/bending_y_2")
