"""Which components of a system's total momentum no external force changes, so that their drift checks a run.

Total linear momentum p and angular momentum L about the system's CoM, both in the world frame (what the dynamics
node publishes). The actuators (joint torques, reaction wheels) are internal. From outside act:
- gravity g, uniform: dp/dt = M g, and no moment about the CoM (sum m_i (r_i - r_G) x g = 0): p across g and all of
  L are conserved;
- a planar joint to the world (an air-bearing table), whose constraint wrench is a force along the plane normal n
  and moments about the in-plane axes: p in the plane and L along n are conserved (a force along n has no moment
  about an axis along n), provided gravity, if any, is along n too (else it pushes in the plane);
- a fixed base, a spherical pivot, base thrusters: nothing is conserved in general;
- an orbit (docs/orbit.md): gravity and its gradient act on every body: nothing is conserved; the momentum balance
  (momentum/balance, the summary's momentum_balance_residual) checks those runs instead.
"""
from __future__ import annotations

import numpy as np

from space_robot_dynamics.model.model_config import mount_rotation
from space_robot_dynamics.model.system_model import SystemModel

# |sin| of the angle between two directions taken as parallel (a plane normal and gravity): far above round-off of
# rpy angles, far below any tilt a user would mean
PARALLEL_TOLERANCE = 1e-9


def conserved_momentum(system: SystemModel, in_orbit: bool = False) -> dict | None:
    """{"linear": rows, "angular": rows, "components": text}: orthonormal rows (world frame) spanning the conserved
    components of p and of L about the CoM (module docstring); None when no component is conserved."""
    if system.base_thrusters is not None or in_orbit:
        return None
    normals = []
    for sub in system.subtrees:
        if sub.config.base_joint == "free_flyer" or sub.config.mount_frame:
            continue
        if sub.config.base_joint != "planar":
            return None                   # fixed to the world, or pivoting on it
        normals.append(mount_rotation(sub.config.mount_rpy)[:, 2])     # the joint's plane is its frame's xy plane
    gravity = np.asarray(system.config.gravity, float)
    axes = normals + ([gravity / np.linalg.norm(gravity)] if np.any(gravity) else [])
    if not axes:
        return {"linear": np.eye(3).tolist(), "angular": np.eye(3).tolist(), "components": "all"}
    n = axes[0]
    if any(np.linalg.norm(np.cross(n, a)) > PARALLEL_TOLERANCE for a in axes[1:]):
        return None                       # two planes, or a plane and gravity, that are not parallel
    across = _plane_basis(n)
    if normals:
        return {"linear": across.tolist(), "angular": [n.tolist()],
                "components": f"p in the bearing plane and L along its normal {_vector(n)} (world frame)"}
    return {"linear": across.tolist(), "angular": np.eye(3).tolist(),
            "components": f"p across gravity {_vector(n)} and all of L about the CoM (world frame)"}


def momentum_conserved(system: SystemModel, in_orbit: bool = False) -> bool:
    """Whether every component of p and L is conserved (a free-floating system without gravity or thrusters)."""
    conserved = conserved_momentum(system, in_orbit)
    return conserved is not None and conserved["components"] == "all"


def _plane_basis(n: np.ndarray) -> np.ndarray:
    """Two orthonormal rows across the unit vector n."""
    helper = np.eye(3)[int(np.argmin(np.abs(n)))]
    u = np.cross(n, helper)
    u /= np.linalg.norm(u)
    return np.vstack((u, np.cross(n, u)))


def _vector(v: np.ndarray) -> str:
    return "[" + ", ".join(f"{x:.3g}" for x in v + 0.0) + "]"
