"""Seed 001 (Korczyk et al., Sawyer on a spherical air-bearing test-bed): kinematics, inverse dynamics, bearing torque.

(a) Forward kinematics of the end frame `right_hand`: product of exponentials (seed eq. 8, screw axes eqs. 9-11)
    against Pinocchio's frame placement on config/models/sawyer_fixed.yaml.
(b) Joint torques along the seed's Table 1 trajectory under gravity: the recursive Lie-group algorithm (seed
    eqs. 1-7, Park-Bobrow-Ploen, in the Modern Robotics form; test/reference/sawyer_poe.py, numpy only) against
    `pinocchio.rnea` on the model SystemModel builds.
(c) Torque at the spherical air bearing with the bearing locked (seed eqs. 14-21), written here from the paper,
    against SphericalAirBearing (Pinocchio RNEA) on config/models/sawyer_airbearing.yaml.

Tolerance 1e-9 (m, N m) for every reference-vs-Pinocchio comparison: the two sides compute the same physics in
different coordinates (Pinocchio: joint frames, featherstone spatial algebra, (linear, angular) ordering; the
reference: CoM frames with space-frame axes, matrix exponentials, (angular, linear) ordering), so they differ by
round-off only. Torques are ~1e1-1e2 N m (Table 1: joints up to 40 N m, bearing up to 53 N m) and pass through
~1e2 floating-point operations: round-off ~1e2 * 1e2 * 1.1e-16 ~ 1e-12 N m (measured: 4e-14 N m joints,
1e-13 N m bearing, 9e-16 m FK). Modelling errors sit far above 1e-9: 1 g added to link 3 moves the torques by
3e-3 N m, a 0.1 mm joint-origin shift by 6e-4 N m (both tried: the tests fail).

Conventions for (c), stated because the seed mixes frames and leaves signs implicit:
- N frame: the platform frame. With the bearing locked level (identity attitude, mount rpy 0) it is the world
  frame: origin at the pivot o, z up, x towards the arm mount. Every vector of eqs. 14-21 is in N coordinates.
- r_i: from the pivot o to body i's centre of mass (eq. 15: arm mount offset plus the CoM in the arm frame).
- F_i in eq. 20-21 is the force that holds body i against gravity, F_i = -m_i g (g = (0, 0, -9.81) m/s^2), so
  tau_o = sum dH_o,i/dt - r_i x m_i g is the torque the bearing exerts on the platform: Euler's law about the
  fixed point o, sum of external torques = dH_o/dt. That is Pinocchio's generalized force of the spherical joint.
  Reading F_i as the weight m_i g would make eq. 21 add the inertial and gravity torques with opposite signs:
  neither the bearing torque nor its opposite.
- Bodies summed: the seven moving links, the head (fixed on link 1), the arm's base link, the control box (the
  seed's eighth body) and the platform plate (the seed does not list it; at rest it contributes only its weight,
  zero if centred over the pivot; the plate here sits 0.086 m above o, on the vertical through it).
- Eq. 14 writes H_o,i with the parallel-axis inertia, (I_c + m [r x][r x]^T) w: that is the momentum about o of
  a body turning about o (CoM velocity w x r, the one-link case of the seed's Fig. 19). A link of a moving arm has
  CoM velocity dr/dt != w x r, and its momentum about o is H_o,i = I_c w + m r x dr/dt (Schaub & Junkins, seed
  ref. [13]), whose rate is I_c dw + w x I_c w + m r x d2r/dt2. Eqs. 16-18 differentiate eq. 14's H in the body's
  rotating frame (the w x (...) term of eq. 17 is the transport term); in N components that is d/dt of
  (I_c + m [r x][r x]^T) w with I_c rotating with the body. `seed_bearing_torque(..., "parallel_axis")` is that
  literal form, `"general"` uses the exact momentum. Tests below show: both agree with Pinocchio for a rigid
  rotation about o and for the arm at rest; with the arm moving (Table 1) only the general form does.
"""
from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
import xacro
from reference.sawyer_poe import (
    ARM_JOINTS,
    END_FRAME,
    SEED_SCREW_AXES,
    LieGroupInverseDynamics,
    end_home,
    poe_forward_kinematics,
    rpy_matrix,
    skew,
    space_screw_axes,
)

from space_robot_dynamics.errors import CommandError
from space_robot_dynamics.model.air_bearing import SphericalAirBearing
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.package_share import resolve

TOLERANCE = 1e-9          # m and N m: round-off of ~1e2 N m torques, see the module docstring
# Table 1 is 2 pi periodic: one full period, 0.025 s apart (252 samples, 63 per quarter period).
TIMES = np.arange(0.0, 2.0 * np.pi, 0.025)


def table1(t: float):
    """Seed 001 Table 1: joints 1, 3, 5, 7 follow sin(t), joints 2, 4, 6 cos(t) (rad, rad/s, rad/s^2)."""
    odd = np.arange(7) % 2 == 0          # joints 1, 3, 5, 7 (index 0, 2, 4, 6)
    position = np.where(odd, np.sin(t), np.cos(t))
    velocity = np.where(odd, np.cos(t), -np.sin(t))
    acceleration = np.where(odd, -np.sin(t), -np.cos(t))
    return position, velocity, acceleration


@pytest.fixture(scope="module")
def fixed_arm() -> SystemModel:
    return SystemModel(load_model_config("config/models/sawyer_fixed.yaml"))


@pytest.fixture(scope="module")
def testbed() -> SystemModel:
    return SystemModel(load_model_config("config/models/sawyer_airbearing.yaml"))


@pytest.fixture(scope="module")
def reference() -> LieGroupInverseDynamics:
    return LieGroupInverseDynamics(gravity=(0.0, 0.0, -9.81))


def arm_state(system: SystemModel, position, velocity, acceleration):
    q, v, a = system.neutral(), np.zeros(system.nv), np.zeros(system.nv)
    for name, angle in zip(ARM_JOINTS, position):
        system.set_joint_angle(q, name, angle)
    v[system.arm_v], a[system.arm_v] = velocity, acceleration
    return q, v, a


# ---- (a) screw axes and forward kinematics -------------------------------------------------------------------
def test_seed_screw_axes_agree_with_urdf_origins():
    """Eqs. 10-11 against the axes built from the URDF joint origins (S2 = (0,1,0,-0.317,0,0.081): 0.08 + 0.237).

    The seed prints 3-4 decimals (0.1 mm). Measured largest difference 7.3e-6: joint 7's axis is tilted by that
    much in the URDF because upstream rounds rpy to 3.1416 and 1.5707963; everything else agrees to 3e-8.
    """
    difference = np.abs(space_screw_axes() - SEED_SCREW_AXES)
    assert difference.max() < 1e-5, difference
    np.testing.assert_allclose(space_screw_axes()[1], [0, 1, 0, -0.317, 0, 0.081], atol=1e-7)


def test_poe_forward_kinematics_matches_pinocchio_along_table1(fixed_arm):
    model, data = fixed_arm.model, fixed_arm.model.createData()
    frame = model.getFrameId(END_FRAME)
    screw_axes, home = space_screw_axes(), end_home()
    worst_urdf_axes = worst_seed_axes = 0.0
    for t in TIMES:
        theta = table1(t)[0]
        q = arm_state(fixed_arm, theta, np.zeros(7), np.zeros(7))[0]
        pin.framesForwardKinematics(model, data, q)
        pinocchio_pose = data.oMf[frame].homogeneous
        worst_urdf_axes = max(worst_urdf_axes,
                              np.abs(poe_forward_kinematics(theta, screw_axes, home) - pinocchio_pose).max())
        worst_seed_axes = max(worst_seed_axes,
                              np.abs(poe_forward_kinematics(theta, SEED_SCREW_AXES, home) - pinocchio_pose).max())
    print(f"\nFK, max |T_poe - T_pinocchio| (rotation entries and m): URDF axes {worst_urdf_axes:.2e}, "
          f"seed eqs. 10-11 axes {worst_seed_axes:.2e}")
    assert worst_urdf_axes < TOLERANCE
    # The printed axes are exact to their last digit apart from joint 7's 7.3e-6 tilt: ~1e-5 at the end frame.
    assert worst_seed_axes < 1e-4


# ---- (b) inverse dynamics -----------------------------------------------------------------------------------
def test_lie_group_inverse_dynamics_matches_pinocchio_rnea_along_table1(fixed_arm, reference):
    model, data = fixed_arm.model, fixed_arm.model.createData()
    worst, largest = 0.0, 0.0
    start = time.perf_counter()
    for t in TIMES:
        position, velocity, acceleration = table1(t)
        q, v, a = arm_state(fixed_arm, position, velocity, acceleration)
        tau_pinocchio = pin.rnea(model, data, q, v, a)[fixed_arm.arm_v]
        tau_reference = reference.inverse_dynamics(position, velocity, acceleration)
        worst = max(worst, np.abs(tau_reference - tau_pinocchio).max())
        largest = max(largest, np.abs(tau_pinocchio).max())
    print(f"\nTable 1 torques: max |tau| {largest:.1f} N m, max |tau_lie - tau_rnea| {worst:.2e} N m "
          f"({len(TIMES)} samples, {time.perf_counter() - start:.2f} s)")
    assert largest > 10.0          # gravity on joint 2 alone is ~5e1 N m: the comparison is not vacuous
    assert worst < TOLERANCE


def test_lie_group_inverse_dynamics_matches_pinocchio_rnea_at_random_states(fixed_arm, reference):
    """Away from Table 1's coupled sin/cos pattern: independent angles, fast rates (velocity-product terms)."""
    model, data = fixed_arm.model, fixed_arm.model.createData()
    rng = np.random.default_rng(1)
    for _ in range(40):
        position, velocity, acceleration = rng.uniform(-3, 3, 7), rng.uniform(-4, 4, 7), rng.uniform(-10, 10, 7)
        q, v, a = arm_state(fixed_arm, position, velocity, acceleration)
        np.testing.assert_allclose(reference.inverse_dynamics(position, velocity, acceleration),
                                   pin.rnea(model, data, q, v, a)[fixed_arm.arm_v], rtol=0, atol=TOLERANCE)


# ---- (c) spherical air bearing -------------------------------------------------------------------------------
def platform_figures():
    """Platform bodies and the arm mount, read from the expanded URDF (the figures are project choices there)."""
    root = ET.fromstring(xacro.process_file(str(resolve("urdf/sawyer_airbearing.urdf.xacro"))).toprettyxml())
    joints = {j.get("name"): j for j in root.findall("joint")}

    def origin(element):
        o = element.find("origin")
        return (np.array([float(x) for x in o.get("xyz").split()]),
                rpy_matrix([float(x) for x in o.get("rpy").split()]))

    def inertial(link_name, placement):
        link = next(link for link in root.findall("link") if link.get("name") == link_name)
        el = link.find("inertial")
        com, rotation = origin(el)
        i = {k: float(el.find("inertia").get(k)) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
        tensor = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]],
                           [i["ixz"], i["iyz"], i["izz"]]])
        p, r = placement
        r_c = r @ rotation
        return dict(name=link_name, mass=float(el.find("mass").get("value")), r=p + r @ com,
                    inertia=r_c @ tensor @ r_c.T)

    box = inertial("control_box", origin(joints["control_box_joint"]))
    plate = inertial("base_link", (np.zeros(3), np.eye(3)))
    return [plate, box], origin(joints["right_arm_mount"])


def bodies_on_locked_platform(reference, mount, position, velocity, acceleration, static):
    """Every body's motion in the N (platform) frame, the bearing locked: arm bodies moved by the arm mount."""
    p, r = mount
    bodies = []
    for b in reference.body_motion(position, velocity, acceleration):
        bodies.append(dict(name=b["name"], mass=b["mass"], inertia=r @ b["inertia"] @ r.T, r=p + r @ b["r"],
                           dr=r @ b["dr"], ddr=r @ b["ddr"], w=r @ b["w"], dw=r @ b["dw"]))
    for b in static:
        bodies.append(dict(b, dr=np.zeros(3), ddr=np.zeros(3), w=np.zeros(3), dw=np.zeros(3)))
    return bodies


def seed_bearing_torque(bodies, gravity, momentum: str) -> np.ndarray:
    """Seed 001 eq. 21, tau_o = sum_i dH_o,i/dt + r_i x F_i with F_i = -m_i g, N frame, N m (module docstring).

    momentum "parallel_axis": dH_o,i/dt of eqs. 14 and 16-18, d/dt[(I_c + m [r x][r x]^T) w] in N components,
        dI_c/dt = [w x] I_c - I_c [w x] (the body-frame inertia is constant, eq. 17's note) and
        d/dt [r x][r x]^T = [dr x][r x]^T + [r x][dr x]^T.
    momentum "general": H_o,i = I_c w + m r x dr, dH_o,i/dt = I_c dw + w x I_c w + m r x d2r.
    """
    gravity = np.asarray(gravity, float)
    total = np.zeros(3)
    for b in bodies:
        m, inertia, r, dr, ddr, w, dw = (b[k] for k in ("mass", "inertia", "r", "dr", "ddr", "w", "dw"))
        if momentum == "parallel_axis":
            inertia_o = inertia + m * skew(r) @ skew(r).T                                    # eq. 14
            d_inertia_o = (skew(w) @ inertia - inertia @ skew(w)
                           + m * (skew(dr) @ skew(r).T + skew(r) @ skew(dr).T))              # eqs. 16-17
            dh = d_inertia_o @ w + inertia_o @ dw                                            # eq. 18
        elif momentum == "general":
            dh = inertia @ dw + np.cross(w, inertia @ w) + m * np.cross(r, ddr)
        else:
            raise ValueError(momentum)
        total += dh + np.cross(r, -m * gravity)                                              # eqs. 19-21
    return total


def test_platform_is_balanced_over_the_pivot_at_the_rest_pose(testbed):
    """The control-box position in the URDF claims to put the CoM over the pivot with the arm at zero angles."""
    model, data = testbed.model, testbed.model.createData()
    com = pin.centerOfMass(model, data, testbed.neutral())
    pivot = model.jointPlacements[testbed.subtree("servicer").root_joint_id].translation
    assert np.hypot(*(com - pivot)[:2]) < 1e-3        # m; the box position is rounded to 0.1 mm


@pytest.mark.slow
def test_locked_bearing_torque_matches_seed_eq21_along_table1(testbed, reference):
    bearing = SphericalAirBearing(testbed)
    static, mount = platform_figures()
    gravity = testbed.config.gravity
    worst = worst_literal = largest = 0.0
    for t in TIMES:
        position, velocity, acceleration = table1(t)
        tau_pinocchio = bearing.locked_torque(position, velocity, acceleration)
        bodies = bodies_on_locked_platform(reference, mount, position, velocity, acceleration, static)
        worst = max(worst, np.abs(seed_bearing_torque(bodies, gravity, "general") - tau_pinocchio).max())
        worst_literal = max(worst_literal,
                            np.abs(seed_bearing_torque(bodies, gravity, "parallel_axis") - tau_pinocchio).max())
        largest = max(largest, np.abs(tau_pinocchio).max())
    print(f"\nbearing torque along Table 1: max |tau_o| {largest:.1f} N m; eq. 21 with exact momentum vs Pinocchio "
          f"{worst:.2e} N m; literal eq. 14 (parallel-axis) vs Pinocchio {worst_literal:.2e} N m")
    assert largest > 10.0
    assert worst < TOLERANCE
    # Eq. 14's parallel-axis momentum drops m r x (dr - w x r): with the arm moving it is not the bearing torque.
    assert worst_literal > 1e-2


def test_seed_eq21_literal_form_at_rest_is_the_gravity_torque(testbed, reference):
    """Arm still (eq. 20 alone): the literal eqs. 14-21 and Pinocchio agree, and the sign is the bearing's.

    Also a sign check by hand: at the Table 1 pose of t = 0 the platform's CoM is off the pivot, and the bearing
    torque must be the opposite of the gravity torque r_com x M g about o.
    """
    bearing = SphericalAirBearing(testbed)
    static, mount = platform_figures()
    gravity = np.asarray(testbed.config.gravity)
    model, data = testbed.model, testbed.model.createData()
    pivot = model.jointPlacements[testbed.subtree("servicer").root_joint_id].translation
    zero = np.zeros(7)
    for t in TIMES[::12]:
        position = table1(t)[0]
        tau_pinocchio = bearing.locked_torque(position, zero, zero)
        bodies = bodies_on_locked_platform(reference, mount, position, zero, zero, static)
        np.testing.assert_allclose(seed_bearing_torque(bodies, gravity, "parallel_axis"), tau_pinocchio,
                                   rtol=0, atol=TOLERANCE)
    position = table1(0.0)[0]
    q = arm_state(testbed, position, zero, zero)[0]
    com = pin.centerOfMass(model, data, q) - pivot
    mass = sum(inertia.mass for inertia in model.inertias)
    gravity_torque = np.cross(com, mass * gravity)
    assert np.linalg.norm(gravity_torque) > 1.0
    np.testing.assert_allclose(bearing.locked_torque(position, zero, zero), -gravity_torque, rtol=0, atol=1e-9)


def test_seed_eq14_is_exact_for_a_rigid_rotation_about_the_pivot(testbed, reference):
    """Seed Fig. 19's case: the arm frozen, the whole platform turning about o (every CoM moves at w x r).

    Pinocchio side: the spherical joint's generalized force with platform angular velocity w and acceleration
    dw (platform frame = N frame at the identity attitude used here).
    """
    bearing = SphericalAirBearing(testbed)
    static, mount = platform_figures()
    gravity = testbed.config.gravity
    rng = np.random.default_rng(7)
    zero = np.zeros(7)
    for t in TIMES[::25]:
        position = table1(t)[0]
        w, dw = rng.uniform(-1.0, 1.0, 3), rng.uniform(-2.0, 2.0, 3)
        q, v, a = arm_state(testbed, position, zero, zero)
        v[testbed.v_slice("servicer_base_joint")] = w
        a[testbed.v_slice("servicer_base_joint")] = dw
        bodies = []
        for b in bodies_on_locked_platform(reference, mount, position, zero, zero, static):
            r = b["r"]
            bodies.append(dict(b, w=w, dw=dw, dr=np.cross(w, r), ddr=np.cross(dw, r) + np.cross(w, np.cross(w, r))))
        tau_pinocchio = bearing.torque(q, v, a)
        for momentum in ("parallel_axis", "general"):
            np.testing.assert_allclose(seed_bearing_torque(bodies, gravity, momentum), tau_pinocchio,
                                       rtol=0, atol=TOLERANCE)


def test_locked_torque_is_expressed_in_the_world_frame(testbed):
    """A tilted locked platform: locked_torque = R(attitude) x torque in the platform frame; gravity stays world."""
    bearing = SphericalAirBearing(testbed)
    position, velocity, acceleration = table1(0.7)
    attitude = np.array([np.sin(0.2), 0.0, 0.0, np.cos(0.2)])      # 0.4 rad about x
    q, v, a = arm_state(testbed, position, velocity, acceleration)
    q[testbed.q_slice("servicer_base_joint")] = attitude
    rotation = pin.Quaternion(attitude[3], *attitude[:3]).toRotationMatrix()
    np.testing.assert_allclose(bearing.locked_torque(position, velocity, acceleration, attitude),
                               rotation @ bearing.torque(q, v, a), rtol=0, atol=1e-12)
    # Tilting changes the gravity torque: the result is not the level one rotated.
    level = bearing.locked_torque(position, velocity, acceleration)
    assert np.abs(bearing.locked_torque(position, velocity, acceleration, attitude) - level).max() > 1.0


def test_air_bearing_rejects_bad_input(testbed, fixed_arm):
    bearing = SphericalAirBearing(testbed)
    zero = np.zeros(7)
    with pytest.raises(CommandError, match="arm_positions"):
        bearing.locked_torque(np.zeros(6), zero, zero)
    with pytest.raises(CommandError, match="arm_velocities"):
        bearing.locked_torque(zero, np.r_[np.zeros(6), np.nan], zero)
    with pytest.raises(CommandError, match="attitude_xyzw"):
        bearing.locked_torque(zero, zero, zero, attitude_xyzw=(0.0, 0.0, 0.0, 2.0))
    with pytest.raises(CommandError, match="^q:"):
        bearing.torque(np.zeros(testbed.nq), np.zeros(testbed.nv), np.zeros(testbed.nv))
    with pytest.raises(CommandError, match="^a:"):
        bearing.torque(testbed.neutral(), np.zeros(testbed.nv), np.zeros(testbed.nv + 1))
    with pytest.raises(CommandError, match="subtree"):
        SphericalAirBearing(fixed_arm)
    with pytest.raises(CommandError, match="subtree"):
        SphericalAirBearing(testbed, "nonexistent")
