"""Which velocity entries belong to which free-floating subtree, and which are group (fibre) or joint (shape).

For a free-floating subtree: the base joint's velocity (a twist of the base link, Pinocchio LOCAL frame)
is the "fibre" velocity, the one-degree-of-freedom joints below it are the "shape" velocities qdot
(seed 004 sec. 2.2: base b, links 1..n). Reaction wheels are shape joints like the arm joints.

Flexible models (docs/flexibility.md): modal coordinates and motor angles are shape coordinates too (they carry
momentum); the tip chains of flexible links are not (their coordinates follow the modal ones, eq. 14): each shape
coordinate's velocity field in the model's velocity space is then a column of the constant map T, the partition's
`shape_basis` (the unit column of the joint where there is no flexible link: shape_basis is None).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .lie_algebra import FREE_FLYER, joint_group

_PRISMATIC = re.compile(r"^JointModel(P[XYZ]|PrismaticUnaligned)$")


@dataclass(frozen=True)
class SubtreePartition:
    """Index sets of one free-floating subtree of a SystemModel.

    base_v: v indices of the base joint (6 for a free flyer: linear then angular, base-link frame).
    joint_v: v indices of its one-DOF joints, in v order; joint_names in the same order.
    prismatic: bool per entry of joint_v (m/s rates instead of rad/s).
    body_joint_ids: every Pinocchio joint (body) of the subtree, root first.
    mass: kg. base_com_local: centre of mass of the base body in the base joint frame (m); the base joint
    frame is the URDF root link's frame (the free flyer's velocity is expressed in it).
    dependent_v: v indices of its tip-chain joints (flexible links; empty otherwise); shape_basis: (nv, len(joint_v))
    velocity field of each shape coordinate (columns of T), None without dependent coordinates.
    """

    name: str
    root_joint_id: int
    base_frame_id: int
    base_v: np.ndarray
    joint_v: np.ndarray
    joint_names: tuple
    prismatic: np.ndarray
    body_joint_ids: tuple
    mass: float
    base_com_local: np.ndarray
    dependent_v: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=int))
    shape_basis: np.ndarray | None = None

    @property
    def all_v(self) -> np.ndarray:
        return np.concatenate((self.base_v, self.joint_v))

    @property
    def momentum_v(self) -> np.ndarray:
        """Every v index of the subtree's bodies' motion: base, shape and dependent coordinates."""
        return np.concatenate((self.base_v, self.joint_v, self.dependent_v))


def subtree_partition(system: SystemModel, name: str, field: str = "subtree") -> SubtreePartition:
    """The partition of subtree `name`; ConfigError (naming `field`) unless its base is a free flyer."""
    try:
        subtree = system.subtree(name)
    except ValueError as exc:
        raise ConfigError(field, str(exc)) from exc
    model = system.model
    root = subtree.root_joint_id
    if root == 0 or joint_group(model.joints[root]) != FREE_FLYER:
        raise ConfigError(field, f"subtree {name!r} must have a free_flyer base joint "
                          f"(momentum constraints need a free-floating base)")
    bodies = [j for j in range(1, model.njoints) if _has_ancestor(model, j, root)]
    joints = [j for j in bodies if j != root]
    for j in joints:
        if model.joints[j].nv != 1:
            raise ConfigError(field, f"joint {model.names[j]!r} of subtree {name!r} has {model.joints[j].nv} "
                              "degrees of freedom; only one-DOF joints may sit below the base")
    joints.sort(key=lambda j: model.joints[j].idx_v)
    coordinates = system.coordinates
    dependent_v = np.zeros(0, dtype=int)
    basis = None
    if coordinates is not None and not coordinates.trivial:
        dependent = set(coordinates.dependent_v.tolist())
        dependent_v = np.array([model.joints[j].idx_v for j in joints if model.joints[j].idx_v in dependent], dtype=int)
        joints = [j for j in joints if model.joints[j].idx_v not in dependent]
        reduced_of = {int(v): k for k, v in enumerate(coordinates.independent_v)}
        basis = coordinates.T[:, [reduced_of[model.joints[j].idx_v] for j in joints]]
    root_joint = model.joints[root]
    return SubtreePartition(
        name=name,
        root_joint_id=root,
        base_frame_id=subtree.base_frame_id,
        base_v=np.arange(root_joint.idx_v, root_joint.idx_v + 6),
        joint_v=np.array([model.joints[j].idx_v for j in joints], dtype=int),
        joint_names=tuple(model.names[j] for j in joints),
        prismatic=np.array([bool(_PRISMATIC.match(model.joints[j].shortname())) for j in joints], dtype=bool),
        body_joint_ids=tuple(bodies),
        mass=float(sum(model.inertias[j].mass for j in bodies)),
        base_com_local=np.array(model.inertias[root].lever, dtype=float),
        dependent_v=dependent_v,
        shape_basis=basis,
    )


def index_or_slice(indices: np.ndarray) -> np.ndarray | slice:
    """A slice when `indices` are consecutive (basic indexing: a view, and cheaper than fancy indexing)."""
    indices = np.asarray(indices, dtype=int)
    if len(indices) and np.array_equal(indices, np.arange(indices[0], indices[0] + len(indices))):
        return slice(int(indices[0]), int(indices[0]) + len(indices))
    return indices


def _has_ancestor(model: pin.Model, joint_id: int, ancestor: int) -> bool:
    while joint_id > 0:
        if joint_id == ancestor:
            return True
        joint_id = model.parents[joint_id]
    return False
