"""The simulator's side of an orbit (docs/orbit.md): what it integrates besides the multibody state, the gravity it
adds to each right-hand side, and the LVLH view of its state.

The multibody state (q, v) lives in the integration frame W (orbit/lvlh_frame.py: origin on the reference orbit, axes
inertial, equal to LVLH's at t = 0), where the only external action of the central body is the tidal one
(orbit/tidal_wrenches.py). Integrated alongside, by the same integrator and stages:
- `reference_orbit` (6): the reference point's displacement D = r_O - X from where it started, X = r_O(0) (m), and
  its velocity v_O (m/s), W axes: D'' = g(X + D); the LVLH frame at any instant follows from it
  (reference_orbit.lvlh_axes/_rate). D and not r_O because the inertial angular momentum below holds D x v_O, which
  nearly cancels while D is still along v_O: r_O's round-off (1e-9 m at 7e6 m, a random walk over the steps) made it
  1e-8 of the momentum after 0.3 s, D's makes it ~1e-11;
- `external_impulse` (6): the integral of the external forces on the whole system (N s) and of their moment about
  the fixed inertial point X = r_O(0) (N m s), inertial (W axes): the full gravity m_k g(r_O + c_k) of every body
  with its gravity-gradient couple, and the external wrenches (thrusters). Its balance against the inertial
  momentum, P = P' + M v_O and L_X = L'_G + (r_O - X + c) x P (P', L'_G, c: momentum, angular momentum about the
  centre of mass and centre of mass in W, which W's translation does not change), is the summary's
  momentum_balance_residual;
- `frame_impulse` (6): the same in W itself: the tidal forces and the external wrenches (N s) and their moment about
  W's origin (N m s), i.e. d/dt P' and d/dt L'_O (W's fall is a uniform inertial force -m g(r_O) on every mass,
  which cancels the g(r_O) part of its gravity and leaves the tidal force; W's origin is fixed in W). Its balance is
  the sharp test of the tidal wrenches, whose ~1e-3 N vanish beside the inertial momentum's ~1e7 N s.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..model.system_model import SystemModel
from ..orbit.lvlh_frame import FreeFlyerTransform, LvlhFrame
from ..orbit.orbit_config import OrbitConfig
from ..orbit.reference_orbit import POLE, ReferenceOrbit, cross, gravity, lvlh_axes, lvlh_rate
from ..orbit.tidal_wrenches import TidalWrenches

AUX_BLOCKS = (("reference_orbit", 6), ("external_impulse", 6), ("frame_impulse", 6))


@dataclass(frozen=True)
class OrbitState:
    """The orbit at one instant (Simulator.observe): W is the integration frame, X = r_O(0) the fixed inertial point.

    reference_position, reference_velocity: r_O (m), v_O (m/s), ECI. lvlh: the LVLH frame seen from W.
    inertial_linear_momentum P (N s), inertial_angular_momentum L_X (N m s): the system's, inertial, W axes.
    external_impulse (6): integrated external force (N s) and its moment about X (N m s), W axes.
    frame_linear_momentum P', frame_angular_momentum L'_O (about W's origin): the system's in W.
    frame_impulse (6): integrated tidal and external forces (N s) and their moment about W's origin (N m s)."""

    reference_position: np.ndarray
    reference_velocity: np.ndarray
    lvlh: LvlhFrame
    inertial_linear_momentum: np.ndarray
    inertial_angular_momentum: np.ndarray
    external_impulse: np.ndarray
    frame_linear_momentum: np.ndarray
    frame_angular_momentum: np.ndarray
    frame_impulse: np.ndarray


class OrbitalEnvironment:
    """An OrbitConfig applied to a SystemModel (module docstring). Every subtree must have a free-flyer base."""

    def __init__(self, system: SystemModel, config: OrbitConfig):
        self.config = config
        self.reference = ReferenceOrbit(config)
        # W's axes in ECI: the LVLH axes at t = 0 (x_ECI = eci_axes x_W)
        self.eci_axes = lvlh_axes(self.reference.r0, self.reference.v0)
        self.pole = self.eci_axes.T @ POLE
        self.start = self.eci_axes.T @ self.reference.r0           # X, W axes
        self.tidal = TidalWrenches(system.model, config, self.pole)
        self.transform = FreeFlyerTransform(system.model, [s.root_joint_id for s in system.subtrees])

    def reference_state(self, t: float) -> np.ndarray:
        """[D, v_O] = [r_O - X, v_O] at t in W axes (ReferenceOrbit.state: Kepler's equation, or J2's integration)."""
        r, v = self.reference.state(t)
        return np.concatenate((self.eci_axes.T @ r - self.start, self.eci_axes.T @ v))

    def gravity(self, r: np.ndarray) -> np.ndarray:
        """The central body's gravity at r (W axes, m from its centre), W axes."""
        return gravity(self.config, r, self.pole)

    def lvlh(self, reference: np.ndarray) -> LvlhFrame:
        """The LVLH frame of the reference state [D, v_O] (W axes)."""
        r, v = self.start + reference[:3], reference[3:]
        axes = lvlh_axes(r, v)
        return LvlhFrame(axes, lvlh_rate(r, v, self.gravity(r), axes))

    def rates(self, reference: np.ndarray, external: tuple[np.ndarray, np.ndarray] | None, out: np.ndarray) -> None:
        """Into out (18): d/dt of [reference_orbit, external_impulse, frame_impulse] at the last tidal evaluate
        (at W's origin r_O = X + D, reference = [D, v_O]); `external`: the external wrenches' resultant force and
        moment about W's origin (W axes), or None."""
        tidal = self.tidal
        offset = reference[:3]                                        # D = r_O - X
        g_origin = self.gravity(self.start + offset)
        out[0:3] = reference[3:]
        out[3:6] = g_origin
        tidal_force = tidal.force.sum(axis=0)
        tidal_moment = tidal.moment.sum(axis=0)
        weight = tidal.mass @ (offset + tidal.com)                    # sum m_k (D + c_k)
        force = tidal_force + tidal.total_mass * g_origin
        moment = tidal_moment + cross(offset, tidal_force) + cross(weight, g_origin)
        if external is not None:
            f, n = external
            tidal_force, tidal_moment = tidal_force + f, tidal_moment + n
            force, moment = force + f, moment + n + cross(offset, f)
        out[6:9], out[9:12] = force, moment
        out[12:15], out[15:18] = tidal_force, tidal_moment

    def observe(self, model: pin.Model, data: pin.Data, q: np.ndarray, v: np.ndarray, aux: np.ndarray) -> OrbitState:
        """OrbitState at the W state (q, v) and the 18 auxiliary entries `aux` (AUX_BLOCKS order)."""
        reference = aux[:6]
        hg = pin.computeCentroidalMomentum(model, data, q, v)
        com = data.com[0]
        linear = hg.linear + self.tidal.total_mass * reference[3:]
        angular = hg.angular + cross(reference[:3] + com, linear)
        return OrbitState(self.eci_axes @ (self.start + reference[:3]), self.eci_axes @ reference[3:],
                          self.lvlh(reference),
                          linear, angular, aux[6:12].copy(), hg.linear.copy(),
                          hg.angular + cross(com, hg.linear), aux[12:18].copy())
