"""A rigid body's inertial parameters: the physical ones the configuration names and Pinocchio's linear ones.

Physical parameters (what users set, bound and read), in the body's frame F (a link frame):
    mass (kg); com_x, com_y, com_z: centre of mass in F (m); ixx, ixy, ixz, iyy, iyz, izz: inertia tensor about
    the centre of mass, F axes (kg m^2; ixy is the tensor entry I_xy = -sum m x y, as in URDF).
Dynamic parameters (Pinocchio `Inertia.toDynamicParameters`), in which the momentum and the equations of motion
are linear: pi = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz] with I = I_c + m S(c)^T S(c) the
inertia about F's origin (parallel-axis theorem; S(c) the cross-product matrix).
pi(theta) = m phi(c) + psi(I_c), phi(c) = the parameters of a unit point mass at c (quadratic in c), psi the
placement of the six inertia entries: its Jacobian is exact (`dynamic_parameter_jacobian`).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

PARAMETERS = ("mass", "com_x", "com_y", "com_z", "ixx", "ixy", "ixz", "iyy", "iyz", "izz")
UNITS = {"mass": "kg", "com_x": "m", "com_y": "m", "com_z": "m", **{k: "kg m^2" for k in PARAMETERS[4:]}}
# physical inertia entry -> its index in Pinocchio's dynamic parameters
_INERTIA_INDEX = {"ixx": 4, "ixy": 5, "iyy": 6, "ixz": 7, "iyz": 8, "izz": 9}


def inertia_matrix(theta: np.ndarray) -> np.ndarray:
    """The 3x3 inertia tensor about the centre of mass (kg m^2, F axes) from the physical parameters."""
    ixx, ixy, ixz, iyy, iyz, izz = theta[4:10]
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def physical_parameters(inertia: pin.Inertia) -> np.ndarray:
    """theta (PARAMETERS order) of a Pinocchio spatial inertia given in F."""
    tensor = np.asarray(inertia.inertia, float)
    return np.array([inertia.mass, *np.asarray(inertia.lever, float), tensor[0, 0], tensor[0, 1], tensor[0, 2],
                     tensor[1, 1], tensor[1, 2], tensor[2, 2]])


def dynamic_parameters(theta: np.ndarray) -> np.ndarray:
    """pi (Pinocchio's order, about F's origin) from theta (PARAMETERS order)."""
    theta = np.asarray(theta, float)
    return pin.Inertia(float(theta[0]), theta[1:4].copy(), inertia_matrix(theta)).toDynamicParameters()


def _unit_point_mass(com: np.ndarray) -> np.ndarray:
    return pin.Inertia(1.0, np.asarray(com, float).copy(), np.zeros((3, 3))).toDynamicParameters()


def dynamic_parameter_jacobian(theta: np.ndarray) -> np.ndarray:
    """d pi / d theta (10 x 10), exact: d/dm = phi(c); d/dc_k = m d phi/dc_k, taken as a central difference with
    unit step, exact because phi is quadratic in each c_k; d/dI = the placement of the entries."""
    theta = np.asarray(theta, float)
    mass, com = theta[0], theta[1:4]
    jac = np.zeros((10, 10))
    jac[:, 0] = _unit_point_mass(com)
    for k in range(3):
        step = np.zeros(3)
        step[k] = 1.0
        jac[:, 1 + k] = mass * (_unit_point_mass(com + step) - _unit_point_mass(com - step)) / 2.0
    for column, name in enumerate(PARAMETERS[4:], start=4):
        jac[_INERTIA_INDEX[name], column] = 1.0
    return jac


def mass_relative_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """|m_hat - m| / m."""
    return abs(float(estimate[0]) - float(truth[0])) / abs(float(truth[0]))


def inertia_relative_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Relative Frobenius error of the inertia tensor about the centre of mass: |I_hat - I|_F / |I|_F."""
    reference = inertia_matrix(truth)
    return float(np.linalg.norm(inertia_matrix(estimate) - reference) / np.linalg.norm(reference))


def com_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Distance (m) between the estimated and the true centre of mass."""
    return float(np.linalg.norm(np.asarray(estimate[1:4], float) - np.asarray(truth[1:4], float)))


def physically_consistent(theta: np.ndarray) -> bool:
    """Mass > 0 and the inertia about the centre of mass positive definite with its principal moments meeting
    the triangle inequality (each at most the sum of the other two)."""
    if not theta[0] > 0:
        return False
    moments = np.linalg.eigvalsh(inertia_matrix(theta))
    return bool(moments[0] > 0 and moments[2] <= moments[0] + moments[1])
