"""External wrenches on named bodies (thrusters, disturbance torques, docking loads) as Pinocchio's `fext`.

A wrench is a force f (N) acting at a point P fixed on a body, plus a couple tau (N m, a free vector: it does
not depend on P). It is held constant over a simulation step in the frame it is expressed in:
- expressed_in="local": f and tau in the axes of the named frame; they turn with the body (a thruster);
- expressed_in="world": f and tau in world axes; they keep their direction while the body turns (a
  disturbance, a docking load, a uniform field).
P is given in the named frame's coordinates (m), default its origin: a material point of the body, which
moves with it in both cases. The named frame may be any Pinocchio frame (link, joint or fixed frame such as
`grapple_frame`); the wrench acts on the body that frame is attached to (its parent joint).

Pinocchio's `aba(model, data, q, v, tau, fext)` takes one spatial force per joint, expressed in that joint's
LOCAL frame and about the joint's origin (Featherstone 2008, ch. 7). The wrench at P, written in axes
with rotation R_jw relative to the joint frame, becomes fext_j = X.act(Force(f, tau)) with X = SE3(R_jw, r_P)
and r_P = jMb.act(P) the point in joint coordinates (jMb the named frame's placement on its joint); i.e.
f_j = R_jw f, n_j = R_jw tau + r_P x R_jw f (the moment moved from P to the joint origin). R_jw is:
- local: the named frame's rotation jRb, constant: fext_j is computed once when the wrench is set;
- world: oR_j^T, the transpose of the joint's attitude: evaluated at every right-hand-side call (each
  integrator stage) from the forward kinematics of that stage's configuration.
The generalized force is J_j(q)^T fext_j (J_j the LOCAL joint Jacobian) and the power of the wrench is
fext_j . v_j with v_j the joint's spatial velocity in its LOCAL frame (the scalar product of a force and a motion
vector, Featherstone 2008, ch. 2).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..command_checks import checked_vector
from ..errors import CommandError

EXPRESSED_IN = ("world", "local")
_FIELD = "external_wrench"


@dataclass(frozen=True)
class ExternalWrench:
    """One wrench as set: force (N) at `point` (m, named frame coordinates) and couple torque (N m), both in
    the axes `expressed_in` says ("world" or "local", i.e. the named frame's). `joint_id` is the joint of the
    body it acts on."""

    frame: str
    force: np.ndarray
    torque: np.ndarray
    expressed_in: str
    point: np.ndarray
    joint_id: int


class ExternalWrenches:
    """The wrenches set on one model, by label, and the per-joint `fext` list Pinocchio's aba takes.

    joint_forces(q) -> fext (LOCAL joint frames, about the joint origins) at configuration q;
    power(data) -> total power (W) of the wrenches, from the joint velocities aba leaves in data.v.
    """

    def __init__(self, model: pin.Model):
        self.model = model
        self._data = model.createData()       # forward kinematics of world-frame wrenches only
        self._wrenches: dict[str, ExternalWrench] = {}
        self._forces = pin.StdVec_Force()     # what aba gets; entries of loaded joints are rewritten in place
        for _ in range(model.njoints):
            self._forces.append(pin.Force.Zero())
        self._constant: dict[int, pin.Force] = {}      # per loaded joint: the sum of its local-frame wrenches
        self._world: list[tuple[int, np.ndarray, pin.Force]] = []   # (joint, r_P in joint frame, (f, tau) world)
        self._world_joints: list[int] = []
        self._joints: list[int] = []          # joints that carry any wrench
        self._geometry: dict[str, tuple[pin.SE3, np.ndarray]] = {}   # label -> (named frame's rotation at P, P), joint
        self.version = 0                      # counts the changes (the compiled step copies the forces on one)

    def __len__(self) -> int:
        return len(self._wrenches)

    def __contains__(self, label: str) -> bool:
        return label in self._wrenches

    @property
    def wrenches(self) -> dict[str, ExternalWrench]:
        """label -> ExternalWrench, in the order they were set (a copy)."""
        return dict(self._wrenches)

    def set(self, frame: str, force=None, torque=None, expressed_in: str = "world", point=None,
            label: str | None = None) -> ExternalWrench:
        """Validate and store a wrench under `label` (default: the frame name), replacing one with that label.

        force (N), torque (N m), point (m): 3-vectors, None = zero. Raises CommandError naming the field
        (external_wrench.frame / .force / .torque / .point / .expressed_in / .label); nothing changes then.
        """
        model = self.model
        if not isinstance(frame, str) or not model.existFrame(frame):
            raise CommandError(f"{_FIELD}.frame", f"no link or frame named {frame!r} in the model")
        frame_id = model.getFrameId(frame)
        joint = model.frames[frame_id].parentJoint
        if joint == 0:
            raise CommandError(f"{_FIELD}.frame", f"frame {frame!r} is fixed to the world (no joint moves it): "
                               "a wrench on it does nothing")
        if expressed_in not in EXPRESSED_IN:
            raise CommandError(f"{_FIELD}.expressed_in", f"must be one of {list(EXPRESSED_IN)}, got {expressed_in!r}")
        if label is not None and not isinstance(label, str):
            raise CommandError(f"{_FIELD}.label", f"must be a string, got {label!r}")
        zero = np.zeros(3)
        vectors = [zero.copy() if x is None else checked_vector(x, 3, f"{_FIELD}.{name}").copy()
                   for x, name in ((force, "force"), (torque, "torque"), (point, "point"))]
        wrench = ExternalWrench(frame, vectors[0], vectors[1], expressed_in, vectors[2], joint)
        for x in vectors:
            x.flags.writeable = False        # the stored wrench cannot be changed behind the forces built from it
        label = frame if label is None else label
        placement = model.frames[frame_id].placement
        r_point = placement.act(wrench.point)              # P in the joint frame
        self._geometry[label] = (pin.SE3(placement.rotation, r_point), r_point)
        self._wrenches[label] = wrench
        self._rebuild()
        return wrench

    def replace(self, label: str, force: np.ndarray, torque: np.ndarray) -> ExternalWrench:
        """The wrench under `label` (set before) with a new force and couple (N, N m; 3-vectors, finite: checked by
        the caller, e.g. the thrusters' limits), frame, axes and point kept: set() without its checks and look-ups
        (a thruster command at the control rate)."""
        old = self._wrenches[label]
        force, torque = np.array(force, dtype=float), np.array(torque, dtype=float)
        force.flags.writeable = torque.flags.writeable = False
        self._wrenches[label] = wrench = ExternalWrench(old.frame, force, torque, old.expressed_in, old.point,
                                                        old.joint_id)
        self._rebuild()
        return wrench

    def clear(self, label: str | None = None) -> None:
        """Remove the wrench with that label, or every wrench (None). An unknown label is a CommandError."""
        if label is None:
            self._wrenches.clear()
            self._geometry.clear()
        elif label in self._wrenches:
            del self._wrenches[label]
            del self._geometry[label]
        else:
            raise CommandError(f"{_FIELD}.label", f"no wrench labelled {label!r} (have {list(self._wrenches)})")
        self._rebuild()

    def _rebuild(self) -> None:
        """Constant parts per joint and the list of world-frame wrenches, from the stored wrenches."""
        for j in self._joints:                # joints no longer loaded must read zero again
            self._forces[j] = pin.Force.Zero()
        constant: dict[int, pin.Force] = {}
        world = []
        for label, w in self._wrenches.items():
            at_point, r_point = self._geometry[label]
            part = pin.Force.Zero()
            if w.expressed_in == "local":
                part = at_point.act(pin.Force(w.force, w.torque))
            else:
                world.append((w.joint_id, r_point, pin.Force(w.force, w.torque)))
            constant[w.joint_id] = constant.get(w.joint_id, pin.Force.Zero()) + part
        self._constant = constant
        self._world = world
        self._world_joints = sorted({j for j, _, _ in world})
        self._joints = sorted(constant)
        for j, force in constant.items():
            self._forces[j] = force
        self.version += 1

    @property
    def constant(self) -> bool:
        """No world-frame wrench: joint_forces() does not depend on q."""
        return not self._world

    def loaded_joint_forces(self, q: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """[(joint, fext_j as [f; n])] of the joints that carry a wrench, at q (joint_forces' nonzero entries)."""
        forces = self.joint_forces(q)
        return [(j, forces[j].vector) for j in sorted(set(self._joints) | set(self._world_joints))]

    def joint_forces(self, q: np.ndarray) -> pin.StdVec_Force:
        """fext for aba at configuration q (see the module docstring). The returned vector is owned by this
        object and rewritten by the next call."""
        forces = self._forces
        if self._world:
            data = self._data
            pin.forwardKinematics(self.model, data, q)
            totals = {j: self._constant[j] for j in self._world_joints}
            for joint, r_point, wrench in self._world:
                totals[joint] = totals[joint] + pin.SE3(data.oMi[joint].rotation.T, r_point).act(wrench)
            for j, force in totals.items():
                forces[j] = force
        return forces

    def resultant(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(force N, moment N m about the world origin), world axes, of the wrenches last returned by joint_forces
        at configuration q (its own forward kinematics: a forward-dynamics pass in Pinocchio's LOCAL convention
        leaves data.oMi as it was)."""
        data = self._data
        if not self._world:                  # joint_forces made the placements at q already for world wrenches
            pin.forwardKinematics(self.model, data, q)
        total = pin.Force.Zero()
        for j in self._joints:
            total += data.oMi[j].act(self._forces[j])
        return total.linear, total.angular

    def power(self, data: pin.Data) -> float:
        """Total power (W) of the wrenches last returned by joint_forces: sum_j fext_j . v_j, with v_j the joint
        velocities (LOCAL) that pin.aba left in `data` at the same (q, v)."""
        forces, velocities = self._forces, data.v
        return float(sum(forces[j].dot(velocities[j]) for j in self._joints))
