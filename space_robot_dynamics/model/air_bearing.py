"""Torque about the pivot of a spherical air bearing, from Pinocchio's RNEA (seed 001, "Platform dynamics").

Seed 001 (Korczyk et al.) mounts a 7-DOF arm and its control box on a platform floating on a spherical air
bearing and asks for the torque at the bearing with the bearing locked (eqs. 14-21):
    tau_o = sum_i [ dH_o,i/dt + r_i x F_i ]                                           (eq. 21)
with H_o,i the angular momentum of body i about the pivot o (eq. 14), r_i the vector from o to body i's centre
of mass and F_i the force holding body i against gravity. Here the same quantity is the generalized force of
the spherical root joint returned by `pinocchio.rnea`: the torque the bearing must exert on the platform,
about the pivot, for the platform to follow the given motion (for a locked bearing: to stay still) while the
arm follows its joint trajectory, gravity included. Its opposite is the disturbance torque that the arm's
motion and the weights put on the platform, i.e. what attitude actuators must supply to hold it still.

Frames and units: the pivot o is the origin of the subtree's base link (the spherical joint sits at the
subtree's mount, SubtreeConfig.mount_xyz/rpy, world frame). `torque` returns the torque in the platform
(base-link) frame, `locked_torque` in the world frame. N m; joint angles rad, rates rad/s, rad/s^2.

Sign convention: positive along an axis is the torque the bearing applies to the platform about that axis
(right-hand rule). Example: with the platform's centre of mass at +x from the pivot and gravity along -z,
gravity alone tips the platform about +y, so the bearing must supply a torque along -y.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..command_checks import checked_vector
from ..errors import CommandError
from .system_model import SystemModel

_UNIT_QUATERNION_TOLERANCE = 1e-6   # |norm - 1|: looser would hide a wrong convention, tighter rejects float input


class SphericalAirBearing:
    """The spherical base joint of one subtree of a SystemModel (seed 001 air-bearing test-bed).

    subtree: the name of a subtree whose base_joint is `spherical`; None picks the only one.
    """

    def __init__(self, system: SystemModel, subtree: str | None = None):
        spherical = [s for s in system.subtrees if s.config.base_joint == "spherical"]
        if subtree is None:
            if len(spherical) != 1:
                raise CommandError("subtree", f"give the subtree name: the model has {len(spherical)} spherical "
                                   f"base joints ({[s.name for s in spherical]})")
            chosen = spherical[0]
        else:
            chosen = system.subtree(subtree)
            if chosen.config.base_joint != "spherical":
                raise CommandError("subtree", f"subtree {subtree!r} has base_joint "
                                   f"{chosen.config.base_joint!r}, not 'spherical'")
        self.system = system
        self.subtree = chosen
        self._joint_name = chosen.config.root_joint_name
        self._q = system.q_slice(self._joint_name)
        self._v = system.v_slice(self._joint_name)
        # Rotation of the bearing's fixed part (the mount) in the world frame.
        self._mount_rotation = system.model.jointPlacements[chosen.root_joint_id].rotation.copy()
        self._data = system.model.createData()

    def torque(self, q, v, a) -> np.ndarray:
        """Torque (N m, platform frame, about the pivot) the bearing exerts on the platform.

        q, v, a: the full configuration, velocity and acceleration of the system (sizes nq, nv, nv; the
        bearing's entries are the platform attitude quaternion (x, y, z, w) and its angular velocity and
        acceleration in the platform frame). Seed 001 eq. 21 when the bearing's v and a are zero.
        """
        model = self.system.model
        q = checked_vector(q, model.nq, "q")
        v = checked_vector(v, model.nv, "v")
        a = checked_vector(a, model.nv, "a")
        quaternion = q[self._q]
        if abs(np.linalg.norm(quaternion) - 1.0) > _UNIT_QUATERNION_TOLERANCE:
            raise CommandError("q", f"the bearing attitude {quaternion.tolist()} (x, y, z, w) is not a unit "
                               "quaternion")
        return pin.rnea(model, self._data, q, v, a)[self._v].copy()

    def locked_torque(self, arm_positions, arm_velocities, arm_accelerations, attitude_xyzw=(0.0, 0.0, 0.0, 1.0)):
        """Seed 001 eqs. 14-21: torque (N m, world frame, about the pivot) the locked bearing exerts on the platform.

        The platform is held at `attitude_xyzw` (unit quaternion (x, y, z, w) of the platform relative to the
        bearing mount; identity = level) with zero angular velocity and acceleration; the arm joints (order of
        SystemModel.arm_joints) follow the given angles (rad), rates (rad/s) and accelerations (rad/s^2);
        every other joint rests at its neutral position.
        """
        system = self.system
        n = len(system.arm_joints)
        positions = checked_vector(arm_positions, n, "arm_positions")
        velocities = checked_vector(arm_velocities, n, "arm_velocities")
        accelerations = checked_vector(arm_accelerations, n, "arm_accelerations")
        attitude = checked_vector(attitude_xyzw, 4, "attitude_xyzw")
        norm = np.linalg.norm(attitude)
        if abs(norm - 1.0) > _UNIT_QUATERNION_TOLERANCE:
            raise CommandError("attitude_xyzw", f"must be a unit quaternion (x, y, z, w), norm is {norm}")
        attitude = attitude / norm
        q = system.neutral()
        q[self._q] = attitude
        for name, angle in zip(system.arm_joints, positions):
            system.set_joint_angle(q, name, angle)
        v = np.zeros(system.nv)
        a = np.zeros(system.nv)
        v[system.arm_v] = velocities
        a[system.arm_v] = accelerations
        x, y, z, w = attitude
        rotation = self._mount_rotation @ pin.Quaternion(w, x, y, z).toRotationMatrix()
        return rotation @ self.torque(q, v, a)
