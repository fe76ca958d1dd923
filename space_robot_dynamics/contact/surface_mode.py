"""Surface contact mode: a unilateral, frictionless contact between the robot's point and one armed surface
(surface_contact.py; docs/contact.md sec. 5), for force-controlled contact tasks (seed 004 ch. 6).

Armed on a surface (Simulator.set_contact_surface), the mode detects touchdown at the end of each step: the point
at or inside the surface (Phi <= 0) and approaching it (dPhi/dt < 0) -> a plastic normal impulse (impulse.py) and
the contact holds from then on (event `touchdown`). At the start of each step with the contact held, the normal
force under the step's command is computed first: lambda_n < 0 (the surface would pull) releases it (event
`separation`) and the step runs free. Disarming ends a held contact (also a `separation`).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from .contact_events import SEPARATION, TOUCHDOWN, ContactEvent, momentum_jump
from .impulse import plastic_impulse
from .surface_contact import SurfaceContact


class SurfaceMode:
    def __init__(self, model: pin.Model, surfaces: dict[str, SurfaceContact], subtree_columns: list):
        self.model = model
        self.data = model.createData()
        self.surfaces = surfaces
        self.subtree_columns = subtree_columns
        self.armed: SurfaceContact | None = None
        self.in_contact = False
        self.peak_normal_force = 0.0          # N, since the last touchdown
        self.last_force = np.zeros(1)

    def arm(self, name: str | None, t: float) -> ContactEvent | None:
        event = self.separate(t, "the surface was disarmed") if self.in_contact else None
        self.armed = None if name is None else self.surfaces[name]
        return event

    def separate(self, t: float, why: str) -> ContactEvent:
        self.in_contact = False
        name = self.armed.config.name if self.armed is not None else "?"
        return ContactEvent(t, SEPARATION, f"left surface {name!r}: {why}", figures={"surface": name})

    def reset(self) -> None:
        self.armed, self.in_contact = None, False
        self.peak_normal_force = 0.0

    def touchdown(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, ContactEvent | None]:
        """At a step's end: (v after a touchdown impulse, the event), or (v, None)."""
        surface = self.armed
        if surface is None or self.in_contact:
            return v, None
        phi, rate = surface.distance(self.data, q, v)
        if phi > 0.0 or rate >= 0.0:
            return v, None
        jacobian = surface.explicit.impulse_jacobian(surface.jacobian(self.data, q))
        result = plastic_impulse(self.model, self.data, q, v, jacobian, 1)
        jump = momentum_jump(self.model, self.data, q, v, result.v_plus, self.subtree_columns)
        self.in_contact = True
        self.peak_normal_force = 0.0
        name = surface.config.name
        return result.v_plus, ContactEvent(
            t, TOUCHDOWN, f"touched surface {name!r} at {-rate:.4g} m/s: normal impulse {result.impulse[0]:.4g} N s, "
                          f"{result.energy_loss:.4g} J dissipated", impulse=result.impulse,
            energy_loss=result.energy_loss, momentum=jump, figures={"surface": name, "penetration_m": -phi,
                                                                    "approach_speed_m_s": -rate})

    def record_force(self, force: np.ndarray) -> None:
        self.last_force = force
        self.peak_normal_force = max(self.peak_normal_force, float(force[0]))
