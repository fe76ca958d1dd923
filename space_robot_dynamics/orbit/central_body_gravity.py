"""Gravity of the central body (m/s^2): point mass and the J2 zonal term, in any axes given the pole's direction.

- Point mass: a = -mu r / |r|^3 (Vallado 2013, eq. 1-14).
- J2: a = -(3/2) J2 mu R_e^2 / |r|^5 [(1 - 5 (r.k)^2 / |r|^2) r + 2 (r.k) k], k the unit pole (Curtis 2014,
  eq. 12.30, written without choosing axes: along k it is z (3 - 5 z^2/r^2), across k x (1 - 5 z^2/r^2)).
- The difference of the point-mass field between r + c and r (the tidal acceleration of a body at c from the
  reference point r), without the cancellation of subtracting two accelerations of ~8 m/s^2 that differ by ~1e-6
  of it: g(r + c) - g(r) = -mu / |r + c|^3 (c + f r) with f = 1 - |r + c|^3 / |r|^3 computed as
  f = -eps (s + sqrt(s) + 1) / (sqrt(s) + 1), s = |r + c|^2 / |r|^2 = 1 + eps, eps = (2 r.c + |c|^2) / |r|^2
  (Battin 1999, sec. 8.4, the same device as his f(q)).
Arrays of points are (n, 3); r, k are 3-vectors in the same axes.
"""
from __future__ import annotations

import math

import numpy as np


def point_mass(r: np.ndarray, mu: float) -> np.ndarray:
    """-mu r / |r|^3 for one point (3,) or many (n, 3)."""
    if r.ndim == 1:
        d2 = float(r @ r)
        return (-mu / (d2 * math.sqrt(d2))) * r
    d2 = np.einsum("ni,ni->n", r, r)
    return (-mu / (d2 * np.sqrt(d2)))[:, None] * r


def j2_acceleration(r: np.ndarray, mu: float, radius: float, j2: float, pole: np.ndarray) -> np.ndarray:
    """The J2 term at one point (3,) or many (n, 3), pole k a unit vector in the same axes."""
    norm2 = np.sum(r * r, axis=-1, keepdims=True)
    z = r @ pole
    z = z[..., None] if np.ndim(z) else z
    factor = -1.5 * j2 * mu * radius ** 2 / norm2 ** 2.5
    return factor * ((1.0 - 5.0 * z * z / norm2) * r + 2.0 * z * pole)


def point_mass_difference(r: np.ndarray, c: np.ndarray, mu: float) -> np.ndarray:
    """g(r + c) - g(r) of the point-mass field, r (3,), c (n, 3) (module docstring: no cancellation)."""
    r2 = float(r @ r)
    eps = (2.0 * (c @ r) + np.sum(c * c, axis=1)) / r2
    root = np.sqrt(1.0 + eps)
    f = -eps * (2.0 + eps + root) / (root + 1.0)
    d2 = r2 * (1.0 + eps)                   # |r + c|^2
    return (-mu / (d2 * np.sqrt(d2)))[:, None] * (c + f[:, None] * r)
