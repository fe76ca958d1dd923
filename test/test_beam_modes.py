"""Assumed-mode shapes of space_robot_dynamics/model/beam_modes.py against independent facts (docs/flexibility.md
eqs. 3, 6, 9): tabulated wavenumbers (Blevins, Formulas for natural frequency and mode shape, table 8-1), the
boundary conditions at both ends, the beam equation phi'''' = b^4 phi, derivatives against finite differences,
orthogonality and the integrals of eq. 6 against scipy's adaptive quadrature.

Tolerances: the wavenumbers are tabulated to 8-9 digits (5e-8); boundary values and the beam equation are sums of
exponentials of size up to e^(bL) ~ 5e3 times round-off (1e-9 relative to b^k); the quadratures agree to ~1e-14,
checked to 1e-11; central differences with h = 1e-5 have truncation ~h^2 b^3 ~ 1e-7 relative.
"""
import numpy as np
import pytest
from scipy.integrate import quad

from space_robot_dynamics.model.beam_modes import bending_shape, mode_set, torsion_shape, wavenumbers

CLAMPED_FREE = [1.87510407, 4.69409113, 7.85475744, 10.99554073, 14.13716839]
PINNED_FREE = [3.92660231, 7.06858275, 10.21017612, 13.35176878]


@pytest.mark.parametrize("bc, table", [("clamped_free", CLAMPED_FREE), ("pinned_free", PINNED_FREE)])
def test_wavenumbers_match_the_tables(bc, table):
    assert np.allclose(wavenumbers(bc, len(table)), table, rtol=0, atol=5e-8)


@pytest.mark.parametrize("bc", ["clamped_free", "pinned_free"])
def test_shapes_satisfy_the_beam_equation_and_boundary_conditions(bc):
    end, start = np.array([1.0]), np.array([0.0])
    for bl in wavenumbers(bc, 6):
        def d(order, xi, bl=bl):
            return bending_shape(bc, bl, xi, order)[0]
        assert d(0, end) == pytest.approx(1.0, abs=1e-12)                 # normalised to the tip deflection
        assert abs(d(2, end)) < 1e-9 * bl ** 2 and abs(d(3, end)) < 1e-9 * bl ** 3     # free end: no moment, shear
        assert abs(d(0, start)) < 1e-12                                   # root on the axis
        root_condition = d(1, start) if bc == "clamped_free" else d(2, start)   # clamped: slope; pinned: moment
        assert abs(root_condition) < 1e-9 * bl ** 2
        xi = np.linspace(0.0, 1.0, 11)
        assert np.allclose(bending_shape(bc, bl, xi, 4), bl ** 4 * bending_shape(bc, bl, xi), rtol=0,
                           atol=1e-8 * bl ** 4)
        h = 1e-5
        for order in (1, 2):
            inner = xi[1:-1]
            above, below = bending_shape(bc, bl, inner + h, order - 1), bending_shape(bc, bl, inner - h, order - 1)
            numeric = (above - below) / (2 * h)
            assert np.allclose(numeric, bending_shape(bc, bl, xi[1:-1], order), rtol=0, atol=1e-6 * bl ** order)


@pytest.mark.parametrize("kind, bc", [("bending", "clamped_free"), ("bending", "pinned_free"), ("torsion", None)])
def test_integrals_and_orthogonality(kind, bc):
    length, density = 1.7, 0.8
    modes = mode_set(kind, bc or "clamped_free", 5, length, density)

    def shape(i, x):
        if kind == "torsion":
            return torsion_shape(i + 1, np.array([x / length]))[0]
        return bending_shape(bc, modes.wavenumber[i], np.array([x / length]))[0]

    def integral(f):
        return quad(f, 0.0, length, epsabs=1e-14, epsrel=1e-13, limit=200)[0]

    for i in range(5):
        assert modes.P[i] == pytest.approx(integral(lambda x, i=i: density * shape(i, x)), abs=1e-11)
        assert modes.H[i] == pytest.approx(integral(lambda x, i=i: density * x * shape(i, x)), abs=1e-11)
        assert modes.M[i] == pytest.approx(integral(lambda x, i=i: density * shape(i, x) ** 2), abs=1e-11)
        for j in range(i):
            assert abs(integral(lambda x, i=i, j=j: shape(i, x) * shape(j, x))) < 1e-10
    if kind == "bending" and bc == "clamped_free":
        # classical normalisation: int phi^2 = L with phi(L) = 2, i.e. M = rho L / 4 at unit tip deflection
        assert np.allclose(modes.M, density * length / 4, rtol=1e-12)
    if kind == "bending" and bc == "pinned_free":
        assert np.allclose(modes.H, 0.0, atol=1e-12)      # elastic modes carry no angular momentum about the pin
