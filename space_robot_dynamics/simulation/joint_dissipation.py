"""Joint damping and friction from the URDF <dynamics> tags (optional, off by default).

tau_d = -b qdot - f_c tanh(qdot / v_s): viscous damping b (N m s/rad) and Coulomb friction f_c (N m)
smoothed over v_s (rad/s) so the right-hand side stays Lipschitz for the explicit integrators.
Both act between the two bodies a joint connects, so they dissipate energy but conserve the total
momentum of a free-floating system.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from ..errors import StepTooLargeError

# Real-axis stability limits |dt * lambda| of the explicit schemes for dv/dt = -lambda v.
STABILITY_LIMIT = {"rk4": 2.785, "semi_implicit_euler": 2.0}
# Required margin below the limit: M^-1 varies with the configuration, the check uses the initial one.
STABILITY_MARGIN = 0.5


class JointDissipation:
    """Dissipative generalized forces on the one-DOF joints `v_indices` (indices into v)."""

    def __init__(self, v_indices: np.ndarray, damping: np.ndarray, friction: np.ndarray,
                 friction_smoothing_speed: float):
        self.v_indices = np.asarray(v_indices, dtype=int)
        self.damping = np.asarray(damping, dtype=float)
        self.friction = np.asarray(friction, dtype=float)
        self.smoothing = float(friction_smoothing_speed)

    def torque(self, v: np.ndarray) -> np.ndarray:
        """Generalized force on the selected joints (N m), same order as v_indices."""
        rate = v[self.v_indices]
        return -self.damping * rate - self.friction * np.tanh(rate / self.smoothing)


def check_explicit_stability(model: pin.Model, q: np.ndarray, dissipation: JointDissipation, dt: float,
                             integrator: str, names: list[str]) -> None:
    """Reject a damping/friction setting that the explicit integrator cannot resolve at this dt.

    The dissipative terms decay a joint rate with eigenvalue lambda_i ~ (b_i + f_i / v_s) (M^-1)_ii
    (s^-1): with the light Sawyer wrist links (M^-1 ~ 3e3) and b = 5 N m s/rad, lambda ~ 1.5e4, so
    an explicit step of 1 ms diverges to inf/NaN within a few steps. Fail at start-up instead, naming the
    joint and the largest stable step.
    """
    data = model.createData()
    minv_diag = np.diag(pin.computeMinverse(model, data, q)).copy()
    rate = (dissipation.damping + dissipation.friction / dissipation.smoothing) * minv_diag[dissipation.v_indices]
    limit = STABILITY_LIMIT[integrator] * STABILITY_MARGIN
    worst = int(np.argmax(rate))
    if rate[worst] * dt > limit:
        raise StepTooLargeError(
            f"joint {names[worst]!r}: damping {dissipation.damping[worst]} N m s/rad and friction "
            f"{dissipation.friction[worst]} N m over {dissipation.smoothing} rad/s act on an effective inertia of "
            f"{1.0 / minv_diag[dissipation.v_indices][worst]:.3g} kg m^2 (decay rate {rate[worst]:.3g} 1/s): "
            f"{integrator} at dt={dt} s is unstable", limit / rate[worst],
            "a larger friction_smoothing_speed, or turn the option off",
            field="simulation.joint_damping/joint_friction")
