"""Lie brackets of the velocity spaces of Pinocchio joints, in Pinocchio's own velocity convention.

Pinocchio integrates a configuration as q (+) v = g exp(v) (right composition, `pin.integrate`): the
velocity v of a free-flyer, spherical or planar joint is a *body* (left-trivialised) velocity, i.e. the
coordinates of a left-invariant vector field. For left-invariant fields [X_a, X_b] = X_[a,b] with the
matrix commutator [a, b] = ab - ba, which for twists a = (v_a, w_a) (linear first, as Pinocchio orders
them) reads

    [a, b] = (w_a x v_b - w_b x v_a,  w_a x w_b)        se(3), free flyer (6 entries)
    [a, b] = w_a x w_b                                   so(3), spherical joint (3 entries)
    [a, b] = (-w_a v_b,y + w_b v_a,y, w_a v_b,x - w_b v_a,x, 0)   se(2), planar joint [v_x, v_y, w_z]

and one-degree-of-freedom joints (revolute, prismatic, continuous) are abelian: bracket zero.
This is `pin.Motion.cross` (ad_a b) for se(3). Body angular velocity is not the time derivative of any
coordinate; these brackets are what a Frobenius test must add for it (see frobenius.py).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.errors import ConfigError

FREE_FLYER = "free_flyer"
SPHERICAL = "spherical"
PLANAR = "planar"
ONE_DOF = "one_dof"

_GROUP_OF_SHORTNAME = {
    "JointModelFreeFlyer": FREE_FLYER,
    "JointModelSpherical": SPHERICAL,
    "JointModelPlanar": PLANAR,
}


# Levi-Civita symbol eps_abc, and the linear map v -> [v x] flattened: [v x].ravel() = v @ _SKEW_LINEAR.
_LEVI_CIVITA = np.zeros((3, 3, 3))
_LEVI_CIVITA[0, 1, 2] = _LEVI_CIVITA[1, 2, 0] = _LEVI_CIVITA[2, 0, 1] = 1.0
_LEVI_CIVITA[0, 2, 1] = _LEVI_CIVITA[2, 1, 0] = _LEVI_CIVITA[1, 0, 2] = -1.0
_SKEW_LINEAR = _LEVI_CIVITA.transpose(1, 0, 2).reshape(3, 9)     # [v x]_ac = sum_b eps_abc v_b


def skew(v: np.ndarray) -> np.ndarray:
    """[v x], the 3x3 matrix with [v x] w = v x w (seed 004 eq. 2.23); v of shape (..., 3) gives (..., 3, 3).

    One matrix product (small numpy calls cost microseconds each; this runs every monitor cycle).
    """
    v = np.asarray(v, dtype=float)
    return v.dot(_SKEW_LINEAR).reshape(v.shape[:-1] + (3, 3))


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b over the last axis, broadcasting the others (np.cross is several times slower on small arrays)."""
    return np.einsum("ijk,...j,...k->...i", _LEVI_CIVITA, a, b)


def se3_bracket(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[a, b] of twists (..., 6) = (linear, angular); broadcasts over leading axes."""
    va, wa, vb, wb = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate((cross(wa, vb) - cross(wb, va), cross(wa, wb)), axis=-1)


def bracket_constants(n_twists: int = 1) -> np.ndarray:
    """se(3) structure constants for k twists side by side (e.g. the base and the target, each bracketed with
    its own kind), laid out for bracket_pairs: (6k 6k, 6k), row c 6k + a, column b, value [e_a, e_b]_c
    (block diagonal in the twists)."""
    basis = np.eye(6)
    block = se3_bracket(basis[:, None, :], basis[None, :, :])         # [a, b, c] = [e_a, e_b]_c
    gamma = np.zeros((6 * n_twists,) * 3)
    for f in range(n_twists):
        gamma[6 * f:6 * f + 6, 6 * f:6 * f + 6, 6 * f:6 * f + 6] = block
    d = 6 * n_twists
    return np.ascontiguousarray(gamma.transpose(2, 0, 1).reshape(d * d, d))


def bracket_pairs(columns: np.ndarray, constants: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """All pairwise brackets of the columns of `columns` (d, n), components first: (d, n n) with column
    j n + i = [col_i, col_j]; `constants` from bracket_constants. Two matrix products (and one transposition)
    instead of a dozen small cross products; equal to se3_bracket up to round-off. Written into `out`
    (C-ordered, (d, n n)) if given."""
    d, n = columns.shape
    right = constants.dot(columns).reshape(d, d, n)          # [c, a, j] = sum_b Gamma[a, b, c] col_j[b]
    left = right.transpose(0, 2, 1).reshape(d * n, d)       # [(c, j), a]
    if out is None:
        return left.dot(columns).reshape(d, n * n)
    left.dot(columns, out=out.reshape(d * n, n))
    return out


def so3_bracket(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return cross(a, b)


def se2_bracket(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """[a, b] of planar twists (..., 3) = (v_x, v_y, w_z)."""
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = -a[..., 2] * b[..., 1] + b[..., 2] * a[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - b[..., 2] * a[..., 0]
    return out


_BRACKETS = {FREE_FLYER: se3_bracket, SPHERICAL: so3_bracket, PLANAR: se2_bracket}


def joint_group(joint: pin.JointModel) -> str:
    """FREE_FLYER, SPHERICAL, PLANAR or ONE_DOF; ConfigError for joints that are not a Lie group chart."""
    if joint.nv == 1:
        return ONE_DOF
    group = _GROUP_OF_SHORTNAME.get(joint.shortname())
    if group is None:
        raise ConfigError("model", f"joint type {joint.shortname()} has no Lie-group velocity bracket here "
                          "(supported: free flyer, spherical, planar, one-degree-of-freedom joints)")
    return group


class VelocityBracket:
    """The Lie bracket [u, w] of two Pinocchio velocity vectors (nv,) of `model`, joint by joint.

    The vector fields E_k behind the coordinates of v (left-invariant on each group joint, coordinate
    fields on one-DOF joints) satisfy [sum u_k E_k, sum w_k E_k] = sum [u, w]_k E_k for constant u, w.
    Works on stacks: u, w of shape (nv,) or (nv, ...) (leading axis = velocity index).
    """

    def __init__(self, model: pin.Model):
        self.blocks = []
        for j in range(1, model.njoints):
            joint = model.joints[j]
            group = joint_group(joint)
            if group != ONE_DOF:
                self.blocks.append((slice(joint.idx_v, joint.idx_v + joint.nv), _BRACKETS[group]))
        self.nv = model.nv

    def __call__(self, u: np.ndarray, w: np.ndarray) -> np.ndarray:
        shape = np.broadcast_shapes(u.shape, w.shape)
        out = np.zeros(shape)
        for block, bracket in self.blocks:
            # move the velocity axis last for the bracket functions, then back
            a = np.moveaxis(np.broadcast_to(u, shape)[block], 0, -1)
            b = np.moveaxis(np.broadcast_to(w, shape)[block], 0, -1)
            out[block] = np.moveaxis(bracket(a, b), -1, 0)
        return out
