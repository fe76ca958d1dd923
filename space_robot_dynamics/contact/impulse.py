"""The impulse of a contact event: a perfectly plastic impact on the constraint rows (docs/contact.md sec. 4).

When a constraint closes (the grasp; the end effector touching a surface), the velocities jump so that the
constrained relative velocity vanishes:

    M (v+ - v-) = J^T P,     J v+ = 0                                                                 (1)

(restitution 0), solved by Pinocchio's `impulseDynamics(model, data, q, v-, J, 0, 0)` with the explicit
constraint Jacobian J (an overload that takes the relative velocity of the two moving bodies from J v-, unlike the
overload with constraint models, see ../shared/reference/pinocchio_notes.md); on a flexible model J carries the
coupling rows of explicit_constraints.py eq. (1). P is the impulse on the constraint rows (N s, N m s; for the
grasp: on the hand, in the end-effector frame). The impulse acts between two bodies of the system, so the total
linear and angular momentum is unchanged across the event, and the kinetic energy falls by the plastic-impact loss

    dT = 1/2 (J v-)^T (J M^-1 J^T)^-1 (J v-)                                                          (2)

(Kelvin's theorem; the Carnot loss 1/2 (v- - v+)^T M (v- - v+)), which test_contact_impulse.py checks against
the simulator's energy change on random states, with the momentum change.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin


@dataclass(frozen=True)
class ImpulseResult:
    """v_plus (nv): velocities after the event; impulse: P of eq. (1) on the contact rows (N s / N m s);
    energy_loss (J): T(v-) - T(v+), from the mass matrix of the solve."""

    v_plus: np.ndarray
    impulse: np.ndarray
    energy_loss: float


def plastic_impulse(model: pin.Model, data: pin.Data, q: np.ndarray, v_minus: np.ndarray, jacobian: np.ndarray,
                    contact_rows: int) -> ImpulseResult:
    """Eq. (1) at configuration q with Pinocchio's impulseDynamics; `jacobian` (m, nv) may carry rows below the
    `contact_rows` ones (a flexible model's coupling rows), whose impulses are internal and not returned."""
    v_plus = pin.impulseDynamics(model, data, q, v_minus, jacobian, 0.0, 0.0).copy()
    impulse = data.impulse_c[:contact_rows].copy()       # views Pinocchio overwrites at its next call
    mass = data.M                                        # crba's upper triangle, filled by impulseDynamics
    mass = np.triu(mass) + np.triu(mass, 1).T
    loss = 0.5 * float(v_minus @ mass @ v_minus - v_plus @ mass @ v_plus)
    if not np.isfinite(loss) or not np.all(np.isfinite(v_plus)):
        raise FloatingPointError("the impulse of the contact event is not finite (singular constraint Jacobian?)")
    return ImpulseResult(v_plus, impulse, loss)
