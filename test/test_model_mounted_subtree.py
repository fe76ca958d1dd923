"""A fixed-base subtree mounted on a frame of another subtree (a captured target held on the hand).

config/models/servicer_target_attached.yaml mounts the seed-004 target by its grapple fixture on right_hand.
Checked against quantities written out here, not read back from the code under test:
- the target's frames sit at right_hand * mount (forward kinematics) and the grapple fixture at the hand;
- the wrist joint's inertia is Sawyer's wrist link plus the target placed by that transform (parallel-axis
  theorem in closed form), also on Pinocchio 3.4 where appendModel placed it twice
  (pinocchio_compat.append_model_at_frame);
- the joined system's total mass and momentum: a sum over the servicer's bodies and the target moving with the
  hand (frame velocity), so the target is rigid with the hand in the dynamics, not only in the kinematics;
- bad configurations name the field.
Tolerances: mass properties are sums of a few float64 products of O(1e-3..1e3) figures, 1e-12 relative; the
momentum, a sum of ~15 bodies' momenta of O(1e3) kg m/s, 1e-9 absolute (round-off ~1e-12).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics import build_model
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.simulation.system_momentum import momentum_about_point

ATTACHED = "servicer_target_attached"
TARGET_MASS, TARGET_INERTIA = 1500.0, 300.0           # kg, kg m^2: urdf/target.urdf.xacro (seed 004)
MOUNT_XYZ = np.array([0.0, 0.0, 0.65])                # m, the model config's mount
MOUNT_RPY = np.array([0.0, -np.pi / 2, 0.0])


@pytest.fixture(scope="module")
def attached():
    return build_model(ATTACHED)


@pytest.fixture(scope="module")
def servicer():
    return build_model({"name": "servicer", "subtrees": [{"name": "servicer", "urdf": "urdf/servicer.urdf.xacro",
                                                          "base_joint": "free_flyer", "base_link": "base_link"}],
                        "arm_joints": [f"right_j{i}" for i in range(7)]})


def _state(system, seed):
    rng = np.random.default_rng(seed)
    q = pin.randomConfiguration(system.model, -np.ones(system.nq), np.ones(system.nq))
    return pin.normalize(system.model, q), rng.normal(size=system.nv)


def test_the_target_rides_on_the_hand(attached, servicer):
    assert attached.nv == servicer.nv and attached.nq == servicer.nq          # no degree of freedom added
    assert attached.subtree("target").base_joint is None
    q, _ = _state(attached, 1)
    data = attached.model.createData()
    pin.framesForwardKinematics(attached.model, data, q)
    hand = data.oMf[attached.frame_id("right_hand")]
    mount = pin.SE3(pin.rpy.rpyToMatrix(MOUNT_RPY), MOUNT_XYZ)
    target = data.oMf[attached.frame_id("target/base_link")]
    assert np.allclose((hand * mount).homogeneous, target.homogeneous, rtol=0, atol=1e-12)
    grapple = data.oMf[attached.frame_id("target/grapple_frame")]
    assert np.linalg.norm(grapple.translation - hand.translation) < 1e-12      # held by its fixture
    assert np.allclose(grapple.rotation[:, 0], -hand.rotation[:, 2], atol=1e-12)   # fixture faces the hand


def test_wrist_inertia_is_the_wrist_link_plus_the_placed_target(attached, servicer):
    frame = attached.model.frames[attached.frame_id("right_hand")]
    joint = frame.parentJoint
    assert attached.model.names[joint] == "right_j6"
    # the target's CoM (its centre) in the wrist joint frame: hand placement * mount, applied to the origin
    placement = frame.placement * pin.SE3(pin.rpy.rpyToMatrix(MOUNT_RPY), MOUNT_XYZ)
    c_t = placement.translation
    wrist = servicer.model.inertias[joint]
    mass = wrist.mass + TARGET_MASS
    com = (wrist.mass * wrist.lever + TARGET_MASS * c_t) / mass
    def shifted(m, c, about):       # inertia about `about` of a point-mass term: m (|d|^2 E - d d^T), d = c - about
        d = c - about
        return m * (d @ d * np.eye(3) - np.outer(d, d))
    rotation = placement.rotation
    inertia_com = (wrist.inertia + shifted(wrist.mass, wrist.lever, com)
                   + rotation @ (TARGET_INERTIA * np.eye(3)) @ rotation.T + shifted(TARGET_MASS, c_t, com))
    got = attached.model.inertias[joint]
    assert abs(got.mass - mass) <= 1e-12 * mass
    assert np.allclose(got.lever, com, rtol=0, atol=1e-12)
    assert np.allclose(got.inertia, inertia_com, rtol=0, atol=1e-12 * TARGET_INERTIA * 10)
    assert pin.computeTotalMass(attached.model) == pytest.approx(pin.computeTotalMass(servicer.model) + TARGET_MASS,
                                                                 rel=1e-12)


def test_momentum_of_the_joined_system_is_servicer_plus_target(attached, servicer):
    """p and L about the world origin: Pinocchio's centroidal momentum of the joined model against the servicer
    model's plus the target's own, m v_c and I w + c x m v_c, from the hand frame's velocity."""
    for seed in range(3):
        q, v = _state(attached, seed)
        p, l_o = momentum_about_point(attached.model, attached.model.createData(), q, v, np.zeros(3))
        p_s, l_s = momentum_about_point(servicer.model, servicer.model.createData(), q, v, np.zeros(3))
        data = attached.model.createData()
        pin.forwardKinematics(attached.model, data, q, v)
        fid = attached.frame_id("target/base_link")
        placement = pin.updateFramePlacement(attached.model, data, fid)
        twist = pin.getFrameVelocity(attached.model, data, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        centre, omega, velocity = placement.translation, twist.angular, twist.linear
        p_t = TARGET_MASS * velocity
        rotation = placement.rotation
        l_t = rotation @ (TARGET_INERTIA * np.eye(3)) @ rotation.T @ omega + np.cross(centre, p_t)
        assert np.allclose(p, p_s + p_t, rtol=0, atol=1e-9)
        assert np.allclose(l_o, l_s + l_t, rtol=0, atol=1e-9)


def _attached_mapping(**mount):
    return {"name": "bad", "subtrees": [
        {"name": "servicer", "urdf": "urdf/servicer.urdf.xacro", "base_joint": "free_flyer", "base_link": "base_link"},
        {"name": "target", "urdf": "urdf/target.urdf.xacro", "base_joint": mount.pop("base_joint", "fixed"),
         "base_link": "base_link", "frame_prefix": "target/", "mount": mount}]}


@pytest.mark.parametrize(("mount", "field", "words"), [
    ({"frame": "right_hand", "base_joint": "free_flyer"}, "subtrees[1].mount.frame", "base_joint: fixed"),
    ({"frame": "right_hnad"}, "subtrees[target].mount.frame", "no frame 'right_hnad'"),
    ({"frame": 3}, "subtrees[1].mount.frame", "must be a string"),
])
def test_bad_mount_frames_name_the_field(mount, field, words):
    with pytest.raises(ConfigError) as caught:
        build_model(_attached_mapping(**mount))
    assert caught.value.field == field
    assert words in caught.value.problem
