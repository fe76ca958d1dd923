"""small_linear_algebra: the monitor's LAPACK calls against numpy.linalg (an independent wrapper of the same
routines) on matrices of the monitor's shapes, in both memory orders; singular and non-finite input refused.

Tolerances: numpy.linalg runs the same LAPACK routine, so the results agree to round-off of the wrapper's
copies (an inverse computed as that of the transpose: 1e-13 relative to |a^-1|); the SVD takes the matrix as
numpy does and must agree bit for bit (the monitor relies on it where the attitude curvature falls back to it).
"""
import numpy as np
import pytest

from space_robot_monitoring.small_linear_algebra import (
    GRAM_CONDITION_LIMIT,
    inverse,
    singular_values,
    singular_values_from_gram,
    symmetric_eigenvalues,
)

SHAPES = ((6, 16), (6, 22), (6, 7), (6, 4), (3, 3), (45, 3), (1, 3))


def _orders(a):
    return (np.ascontiguousarray(a), np.asfortranarray(a))


@pytest.mark.parametrize("n", [3, 6, 12, 24])
def test_inverse_equals_numpy(n):
    rng = np.random.default_rng(n)
    a = rng.normal(size=(n, n)) * rng.uniform(0.1, 100.0, size=n)
    for x in _orders(a):
        inv = inverse(x)
        expected = np.linalg.inv(a)
        np.testing.assert_allclose(inv, expected, rtol=0, atol=1e-13 * np.abs(expected).max())
        np.testing.assert_allclose(inv @ a, np.eye(n), rtol=0, atol=1e-12)
        assert inv.flags.c_contiguous


def test_inverse_of_a_block_diagonal_matrix_is_block_diagonal():
    """The monitor inverts C_f and the Gram blocks together: the off-diagonal blocks must come out exactly zero."""
    rng = np.random.default_rng(1)
    square = np.zeros((12, 12))
    square[:6, :6] = rng.normal(size=(6, 6))
    gram = rng.normal(size=(6, 6))
    square[6:, 6:] = gram @ gram.T
    inv = inverse(square)
    assert not inv[:6, 6:].any() and not inv[6:, :6].any()


def test_singular_matrix_is_refused():
    with pytest.raises(np.linalg.LinAlgError):
        inverse(np.ones((6, 6)))


@pytest.mark.parametrize("shape", SHAPES)
def test_singular_values_equal_numpy(shape):
    a = np.random.default_rng(len(shape) + shape[0] * 31 + shape[1]).normal(size=shape)
    expected = np.linalg.svd(a, compute_uv=False)
    for x in _orders(a):
        np.testing.assert_array_equal(singular_values(x), expected)


@pytest.mark.parametrize("n", [3, 6])
def test_symmetric_eigenvalues_equal_numpy(n):
    a = np.random.default_rng(n).normal(size=(n, 2 * n + 1))
    gram = a @ a.T
    np.testing.assert_allclose(symmetric_eigenvalues(gram), np.linalg.eigvalsh(gram), rtol=1e-14)


def test_non_finite_input_to_the_svd_is_refused():
    """LAPACK's gesdd reports a NaN argument (info < 0): an error, not singular values of zero."""
    bad = np.eye(6)
    bad[2, 3] = np.nan
    with pytest.raises(np.linalg.LinAlgError):
        singular_values(bad)


@pytest.mark.parametrize("ratio,from_gram", [(10.0, True), (GRAM_CONDITION_LIMIT * 0.99, True),
                                             (GRAM_CONDITION_LIMIT * 1.01, False), (1e9, False)])
def test_singular_values_from_the_gram_matrix(ratio, from_gram):
    """Within the condition limit the Gram route gives the singular values to 1e-13; beyond it they are the SVD's
    (bit for bit), where the Gram route would lose a small singular value."""
    rng = np.random.default_rng(5)
    u, _ = np.linalg.qr(rng.normal(size=(16, 6)))
    v, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    values = np.geomspace(1.0, 1.0 / ratio, 6)
    a = (u * values) @ v                       # (16, 6), singular values `values`
    gram_values = symmetric_eigenvalues(a.T @ a)[::-1]
    result = singular_values_from_gram(a, gram_values)
    if from_gram:
        np.testing.assert_allclose(result, values, rtol=1e-13)
    else:
        np.testing.assert_array_equal(result, np.linalg.svd(a, compute_uv=False))


def test_negative_round_off_eigenvalue_goes_to_the_svd():
    """A rank-deficient Gram matrix can have a slightly negative eigenvalue: its square root is NaN, which must
    send the computation to the SVD rather than into the published figures."""
    a = np.zeros((4, 3))
    a[:, 0] = [1.0, 2.0, 3.0, 4.0]
    result = singular_values_from_gram(a, np.array([30.0, 0.0, -1e-17]))
    assert np.all(np.isfinite(result))
    np.testing.assert_array_equal(result, np.linalg.svd(a, compute_uv=False))
