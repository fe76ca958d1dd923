"""The servicer + target model as built from URDF: masses, wheel axes, arm mount, frames and ordering."""
import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.package_share import resolve

SAWYER_MASSES = [2.0687, 5.3213, 1.5795, 4.505, 1.745, 2.5097, 1.1136, 1.5625, 0.3292]   # sawyer_parameters.md


def wheel_axes(system: SystemModel) -> np.ndarray:
    """Spin axes of the wheels in the base_link frame at the neutral configuration (rows)."""
    data = system.model.createData()
    pin.forwardKinematics(system.model, data, system.neutral())
    base = data.oMi[system.subtree("servicer").root_joint_id]
    return np.array([(base.inverse() * data.oMi[system.joint_id(n)]).rotation[:, 2] for n in system.wheel_joints])


def test_masses_add_up(servicer_target):
    data = servicer_target.model.createData()
    total = pin.computeTotalMass(servicer_target.model, data)
    assert total == pytest.approx(500.0 + 3 * 5.0 + sum(SAWYER_MASSES) + 1500.0, rel=1e-12)


def test_orthogonal_wheels_span_the_body_axes(servicer_target):
    np.testing.assert_allclose(np.abs(wheel_axes(servicer_target)), np.eye(3), atol=1e-12)


def test_pyramid_layout_has_four_wheels_at_equal_tilt(tmp_path):
    text = resolve("config/models/servicer_target.yaml").read_text()
    text = text.replace("wheel_layout: orthogonal", "wheel_layout: pyramid")
    text = text.replace("joints: [rw_x_joint, rw_y_joint, rw_z_joint]",
                        "joints: [rw_1_joint, rw_2_joint, rw_3_joint, rw_4_joint]")
    text = text.replace("urdf/", f"{resolve('urdf')}/")
    (tmp_path / "pyramid.yaml").write_text(text)
    system = SystemModel(load_model_config(tmp_path / "pyramid.yaml"))
    axes = wheel_axes(system)
    assert axes.shape == (4, 3)
    # Each spin axis makes acos(1/sqrt(3)) = 54.74 deg with z: every body axis gets an equal share.
    np.testing.assert_allclose(axes[:, 2], np.full(4, 1 / np.sqrt(3)), atol=1e-6)
    assert np.linalg.matrix_rank(axes) == 3
    np.testing.assert_allclose(axes.T @ axes, np.diag([4 / 3, 4 / 3, 4 / 3]), atol=1e-6)


def test_arm_mount_and_shoulder_axis(servicer_target):
    """Joint right_j1's axis passes 0.317 m above the arm base and 0.081 m forward (sawyer_parameters.md,
    cross-check with seed 001's S2); the arm base sits on the bus's +z face at x = 0.3 m."""
    system = servicer_target
    data = system.model.createData()
    pin.forwardKinematics(system.model, data, system.neutral())
    pin.updateFramePlacements(system.model, data)
    arm_base = data.oMf[system.model.getFrameId("right_arm_base_link")]
    np.testing.assert_allclose(arm_base.translation, [0.3, 0.0, 0.5], atol=1e-12)
    j1 = arm_base.inverse() * data.oMi[system.joint_id("right_j1")]
    axis, point = j1.rotation[:, 2], j1.translation
    np.testing.assert_allclose(np.abs(axis), [0, 1, 0], atol=1e-6)
    np.testing.assert_allclose([point[0], point[2]], [0.081, 0.317], atol=1e-9)


def test_target_frames_carry_the_prefix(servicer_target):
    model = servicer_target.model
    assert model.existFrame("target/base_link") and model.existFrame("target/grapple_frame")
    assert servicer_target.subtree("target").base_link == "target/base_link"


def test_ordering_covers_q_and_v_exactly_once(servicer_target):
    ordering = servicer_target.ordering()
    q_cover = np.zeros(servicer_target.nq, int)
    v_cover = np.zeros(servicer_target.nv, int)
    for _name, qs, vs in ordering:
        q_cover[qs] += 1
        v_cover[vs] += 1
    assert (q_cover == 1).all() and (v_cover == 1).all()
    assert [n for n, *_ in ordering if n.startswith("right_j")] == list(servicer_target.arm_joints)
