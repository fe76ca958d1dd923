"""Normal and tangential parts of the grasp wrench (space_robot_dynamics/contact/constraint_wrench.py; seed 004 sec.
5.3, eqs. 5.17-5.24), checked against the definition: F = F_n + F_t with F_n in N and F_t in T, unique.

References written here, independently of the module: membership in a subspace by least squares on its basis
(residual zero), the orthogonal projector B (B^T B)^-1 B^T for the grasp's orthogonal subspaces, and an oblique pair of
subspaces solved as the linear system [T N] [x; y] = F. Tolerance 1e-12 of |F| (a 6x6 solve of condition ~1).
"""
import numpy as np
import pytest

from space_robot_dynamics.contact.constraint_wrench import GraspWrenchDecomposition, grasp_subspaces, oblique_projector

TOL = 1e-12


def in_span(basis, vector):
    coefficients = np.linalg.lstsq(basis, vector, rcond=None)[0]
    return np.linalg.norm(basis @ coefficients - vector)


@pytest.mark.parametrize("seed", range(4))
def test_the_grasp_decomposition_is_the_unique_split_into_n_and_t(seed):
    rng = np.random.default_rng(seed)
    axis = rng.normal(size=3)
    wrench = rng.normal(0.0, 10.0, 6)
    parts = GraspWrenchDecomposition(axis)(wrench)
    tangential, normal = grasp_subspaces(axis)
    scale = np.linalg.norm(wrench)
    assert np.allclose(parts.normal + parts.tangential, wrench, rtol=0.0, atol=TOL * scale)
    assert in_span(normal, parts.normal) < TOL * scale and in_span(tangential, parts.tangential) < TOL * scale
    # N and T are orthogonal at a grasp: P_NT is the orthogonal projector on T
    orthogonal = tangential @ np.linalg.solve(tangential.T @ tangential, tangential.T)
    assert np.allclose(parts.tangential, orthogonal @ wrench, rtol=0.0, atol=TOL * scale)
    a = axis / np.linalg.norm(axis)
    assert parts.axial_force == pytest.approx(-wrench[:3] @ a, abs=TOL * scale)
    assert parts.twist_torque == pytest.approx(wrench[3:] @ a, abs=TOL * scale)
    assert parts.shear_force == pytest.approx(np.linalg.norm(wrench[:3] - (wrench[:3] @ a) * a), abs=TOL * scale)
    assert parts.bending_torque == pytest.approx(np.linalg.norm(wrench[3:] - (wrench[3:] @ a) * a), abs=TOL * scale)


def test_an_oblique_pair_of_subspaces():
    """eq. 5.21 on subspaces that are not orthogonal: the T part is T x of the solve [T N][x; y] = F."""
    rng = np.random.default_rng(7)
    tangential, normal = rng.normal(size=(6, 4)), rng.normal(size=(6, 2))
    wrench = rng.normal(size=6)
    coefficients = np.linalg.solve(np.hstack((tangential, normal)), wrench)
    projector = oblique_projector(tangential, normal)
    assert np.allclose(projector @ wrench, tangential @ coefficients[:4], rtol=0.0, atol=1e-10)
    assert np.allclose(projector @ projector, projector, rtol=0.0, atol=1e-10)      # a projector
    with pytest.raises(ValueError, match="span the whole space"):
        oblique_projector(tangential, tangential[:, :2])

