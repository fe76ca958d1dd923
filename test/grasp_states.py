"""States of servicer + target with the grapple fixture at the hand, for the contact tests: the target placed so
that its fixture frame sits at the hand's frame (approach axis into the fixture) up to a chosen offset, both
spacecraft drifting and tumbling slowly, drawn from a numpy Generator in a fixed order (same seed, same state)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics import initial_state_from
from space_robot_dynamics.contact.explicit_constraints import ExplicitConstraintDynamics
from space_robot_dynamics.contact.loop_closure import LoopClosure
from space_robot_dynamics.model.contact_config import Stabilization

# Baumgarte of the model files' grasp sections (Kp = 400 s^-2, Kd = 40 s^-1)
STABILIZATION = Stabilization(natural_frequency=20.0, damping_ratio=1.0)
# the pre-grasp pose of servicer_pregrasp.yaml (rad, right_j0..right_j6): hand 0.15 m in front of the fixture there
ARM_POSE = [0.297419, -0.565761, -0.910255, 1.743777, -0.247794, -1.160595, -0.542281]


def fixture_at_hand(system, arm_pose=ARM_POSE, offset=(0.0, 0.0, 0.0), tilt=0.0):
    """q with the arm at `arm_pose` (springs relaxed on a flexible model) and the target placed so that its
    grapple frame is at the hand's frame shifted by `offset` (m, world) and tilted by `tilt` (rad, about the hand's
    x axis), its x axis against the hand's approach (z) axis."""
    q, _ = initial_state_from(system, {"joint_positions": dict(zip(system.arm_joints, arm_pose))})
    model, data = system.model, system.model.createData()
    pin.framesForwardKinematics(model, data, q)
    hand = data.oMf[model.getFrameId("right_hand")]
    fixture = model.frames[model.getFrameId("target/grapple_frame")]
    rotation = hand.rotation @ pin.rpy.rpyToMatrix(tilt, 0.0, 0.0) @ pin.rpy.rpyToMatrix(0.0, np.pi / 2, 0.0)
    oMg = pin.SE3(rotation, hand.translation + np.asarray(offset, float))
    q[system.q_slice(system.base_joint("target"))] = pin.SE3ToXYZQUAT(oMg * fixture.placement.inverse())
    return q


def drifting(system, rng, arm_rate=0.05, base_rate=(0.01, 0.01), target_rate=(0.005, 0.01)):
    """v: each free base with random linear (m/s) and angular (rad/s) velocities of the given sizes (servicer,
    target), arm joints at ~arm_rate rad/s, wheels still (flexible coordinates at rest)."""
    v = np.zeros(system.nv)
    for name, (linear, angular) in (("servicer", base_rate), ("target", target_rate)):
        v[system.v_slice(system.base_joint(name))] = np.r_[rng.normal(0.0, linear, 3), rng.normal(0.0, angular, 3)]
    v[system.arm_v] = rng.normal(0.0, arm_rate, len(system.arm_v))
    if system.coordinates is not None:
        q = system.neutral()
        system.coordinates.project(q, v)
    return v


def tumbling_together(system, q, omega):
    """v of every subtree turning as one rigid body at `omega` (rad/s, world) about the system's centre of mass,
    the arm and wheels at rest relative to their bases (a stack tumbling after a capture, or before it with the hand
    on the fixture)."""
    model, data = system.model, system.model.createData()
    centre = pin.centerOfMass(model, data, q)
    v = np.zeros(system.nv)
    omega = np.asarray(omega, float)
    for subtree in system.subtrees:
        if subtree.root_joint_id == 0:
            continue
        placement = data.oMi[subtree.root_joint_id]
        linear = np.cross(omega, placement.translation - centre)
        v[system.v_slice(subtree.base_joint)] = np.r_[placement.rotation.T @ linear, placement.rotation.T @ omega]
    return v


def loop_at(system, q):
    """The grasp's loop closed at q: right_hand welded to the target's body where it is (with a flexible model's
    coupling rows)."""
    model = system.model
    hand = model.frames[model.getFrameId("right_hand")]
    target = model.frames[model.getFrameId("target/grapple_frame")].parentJoint
    return LoopClosure.closed_at(model, model.createData(), q, hand.parentJoint, hand.placement, target,
                                 STABILIZATION, ExplicitConstraintDynamics(model, system.coordinates))
