"""Assumed-mode shapes of a uniform beam and their inertia shape integrals (docs/flexibility.md eqs. 3, 6, 9).

Shapes are functions of xi = x / L on [0, 1], normalised to 1 at the tip (xi = 1), so a modal coordinate is
the tip deflection (m) or tip twist (rad) of its mode. Bending (seed 000 eq. 11, Euler-Bernoulli):
clamped-free (eq. 3a) and pinned-free (eq. 3b); torsion clamped-free (eq. 3c). The integrals of eq. 6 are taken
by Gauss-Legendre quadrature with QUADRATURE_POINTS points: the shapes are smooth, and 64 points integrate
products of the first MAX_MODES shapes to round-off (checked against closed forms in test/test_beam_modes.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BOUNDARY_CONDITIONS = ("clamped_free", "pinned_free")
MAX_MODES = 8                 # per direction; higher modes need more quadrature points than below
QUADRATURE_POINTS = 64


def wavenumbers(boundary_condition: str, count: int) -> np.ndarray:
    """b_i L of the first `count` bending modes: roots of cos(bL) cosh(bL) = -1 (clamped-free, eq. 3a) or
    tan(bL) = tanh(bL) (pinned-free, eq. 3b, elastic modes only). Written as cos + 1/cosh and
    sin cosh - cos sinh divided by cosh, which stay finite; each root is bracketed around its asymptote
    (2i - 1) pi / 2 (clamped-free) or (4i + 1) pi / 4 (pinned-free)."""
    from scipy.optimize import brentq  # imported here: only flexible models need it (rigid builds stay light)

    if boundary_condition == "clamped_free":
        def f(b):
            return np.cos(b) + 1.0 / np.cosh(b)
        centres = [(2 * i - 1) * np.pi / 2 for i in range(1, count + 1)]
    elif boundary_condition == "pinned_free":
        def f(b):
            return np.sin(b) - np.cos(b) * np.tanh(b)
        centres = [(4 * i + 1) * np.pi / 4 for i in range(1, count + 1)]
    else:
        raise ValueError(f"unknown boundary condition {boundary_condition!r}")
    return np.array([brentq(f, c - 0.45 * np.pi / 2, c + 0.45 * np.pi / 2, xtol=1e-15)
                     for c in centres])


def bending_shape(boundary_condition: str, bl: float, xi: np.ndarray, derivative: int = 0) -> np.ndarray:
    """phi(xi), or its derivative of that order with respect to xi (multiply by L^-order for x), of the mode
    with wavenumber b L = `bl`, normalised to phi(1) = 1 (eqs. 3a, 3b). Exponential form: cosh(bx) - s sinh(bx)
    = ((1 - s) e^{bx} + (1 + s) e^{-bx}) / 2, which does not cancel for the higher modes (s -> 1)."""
    xi = np.asarray(xi, dtype=float)
    z = bl * xi
    if boundary_condition == "clamped_free":
        denominator = np.cosh(bl) + np.cos(bl)
        s = (np.sinh(bl) - np.sin(bl)) / denominator
        one_minus_s = (np.exp(-bl) + np.cos(bl) + np.sin(bl)) / denominator     # 1 - s without cancellation
        tip = _clamped(bl, s, one_minus_s, 1.0, 0)
        return _clamped(z, s, one_minus_s, bl, derivative) / tip
    if boundary_condition == "pinned_free":
        r = np.sin(bl) / np.sinh(bl)
        tip = np.sin(bl) + r * np.sinh(bl)
        trig = [np.sin, np.cos, lambda u: -np.sin(u), lambda u: -np.cos(u)][derivative % 4](z)
        hyper = (np.sinh if derivative % 2 == 0 else np.cosh)(z)
        return bl ** derivative * (trig + r * hyper) / tip
    raise ValueError(f"unknown boundary condition {boundary_condition!r}")


def _clamped(z, s: float, one_minus_s: float, scale: float, derivative: int):
    """cosh z - cos z - s (sinh z - sin z) and its derivatives in z, times scale^derivative."""
    grow, decay = 0.5 * one_minus_s * np.exp(z), 0.5 * (1.0 + s) * np.exp(-z)
    hyperbolic = grow + (decay if derivative % 2 == 0 else -decay)          # cosh - s sinh, differentiated
    trig = [lambda u: -np.cos(u) + s * np.sin(u), lambda u: np.sin(u) + s * np.cos(u),
            lambda u: np.cos(u) - s * np.sin(u), lambda u: -np.sin(u) - s * np.cos(u)][derivative % 4](z)
    return scale ** derivative * (hyperbolic + trig)


def torsion_shape(k: int, xi: np.ndarray, derivative: int = 0) -> np.ndarray:
    """psi_k(xi) = sin((2k - 1) pi xi / 2) / sin((2k - 1) pi / 2) (eq. 3c), or its derivative in xi."""
    c = (2 * k - 1) * np.pi / 2
    tip = np.sin(c)
    z = c * np.asarray(xi, dtype=float)
    value = [np.sin, np.cos, lambda u: -np.sin(u), lambda u: -np.cos(u)][derivative % 4](z)
    return c ** derivative * value / tip


@dataclass(frozen=True)
class ModeSet:
    """Modal data of one family of modes of a uniform beam of length L (m) and line density rho (kg/m for
    bending, kg m for torsion), per mode i (docs/flexibility.md eq. 6):

    P_i = int rho phi_i, H_i = int rho x phi_i, M_i = int rho phi_i^2 (M_ij = 0 for i != j, orthogonal modes),
    tip_slope_i = phi_i'(L) (1/m; eq. 4), wavenumber b_i L (bending) or (2k - 1) pi / 2 (torsion): omega_i =
    (b_i L)^2 sqrt(EI / (rho L^4)) or (2k - 1) pi / (2 L) sqrt(GJ / rho) (eq. 9).
    """

    kind: str                 # "bending" or "torsion"
    boundary_condition: str
    length: float
    density: float
    wavenumber: np.ndarray
    P: np.ndarray
    H: np.ndarray
    M: np.ndarray
    tip_slope: np.ndarray

    @property
    def count(self) -> int:
        return len(self.P)

    def shapes(self, xi: np.ndarray, derivative: int = 0) -> np.ndarray:
        """(count, len(xi)) values of the shapes (or derivatives in x, 1/m^order) at xi = x / L."""
        if self.kind == "torsion":
            rows = [torsion_shape(k, xi, derivative) for k in range(1, self.count + 1)]
        else:
            rows = [bending_shape(self.boundary_condition, bl, xi, derivative) for bl in self.wavenumber]
        return np.array(rows) / self.length ** derivative

    def frequencies(self, rigidity: float) -> np.ndarray:
        """omega_i (rad/s) for bending stiffness EI (N m^2) or torsional stiffness GJ (N m^2), eq. 9."""
        if self.kind == "torsion":
            return self.wavenumber / self.length * np.sqrt(rigidity / self.density)
        return self.wavenumber ** 2 * np.sqrt(rigidity / (self.density * self.length ** 4))


def mode_set(kind: str, boundary_condition: str, count: int, length: float, density: float) -> ModeSet:
    """The first `count` modes of `kind` ("bending" with that boundary condition, or "torsion", always
    clamped-free) of a uniform beam, with their integrals (eq. 6) by Gauss-Legendre quadrature."""
    if kind == "torsion":
        wavenumber = np.array([(2 * k - 1) * np.pi / 2 for k in range(1, count + 1)])
        boundary_condition = "clamped_free"
    else:
        wavenumber = wavenumbers(boundary_condition, count)
    nodes, weights = np.polynomial.legendre.leggauss(QUADRATURE_POINTS)
    xi = 0.5 * (nodes + 1.0)
    w = 0.5 * weights * length * density            # int rho f dx = sum w f(x_k)
    partial = ModeSet(kind, boundary_condition, length, density, wavenumber, np.zeros(count), np.zeros(count),
                      np.zeros(count), np.zeros(count))
    phi = partial.shapes(xi)
    x = xi * length
    return ModeSet(kind, boundary_condition, length, density, wavenumber, phi @ w, phi @ (w * x),
                   (phi * phi) @ w, partial.shapes(np.array([1.0]), 1)[:, 0])
