"""The monitor's view of a system in orbit (docs/orbit.md sec. 7): the LVLH state it receives, seen in the free-falling
frame W of the reference orbit, and the external wrench gravity puts on each body there.

The messages give poses and twists relative to LVLH, whose rotation (one turn per orbit) is no physics of the robot:
momentum relative to it changes as the stack turns. In W (space_robot_dynamics.orbit.lvlh_frame) the momentum of the
monitored bodies changes only by the tidal forces and gravity-gradient couples (orbit/tidal_wrenches.py), which the
monitor integrates between its cycles (HolonomyMonitor.update's body_wrenches) so that they are not reported as an
external force. The reference orbit comes from Kepler's equation (or J2's integration) at the state's time: within
~1e-12 rad of the simulator's own integration of it, far below what the momentum figures resolve.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.orbit.orbit_config import OrbitConfig
from space_robot_dynamics.simulation.orbital_environment import OrbitalEnvironment


@dataclass(frozen=True)
class BodyWrenches:
    """Gravity's wrench on each massive body at one instant, W axes: joints (the bodies' joint ids), force (n, 3) N
    through the centres of mass com (n, 3) m, torque (n, 3) N m about them."""

    joints: tuple
    force: np.ndarray
    torque: np.ndarray
    com: np.ndarray


def with_wrench(wrenches: BodyWrenches | None, joint: int, force: np.ndarray, torque: np.ndarray,
                point: np.ndarray) -> BodyWrenches:
    """`wrenches` (None: none) and one more: `force` (N) through `point` (m) and the couple `torque` (N m) on the
    body of `joint`, world axes (a thruster's)."""
    if wrenches is None:
        return BodyWrenches((joint,), force[None, :], torque[None, :], point[None, :])
    return BodyWrenches(wrenches.joints + (joint,), np.vstack((wrenches.force, force)),
                        np.vstack((wrenches.torque, torque)), np.vstack((wrenches.com, point)))


class OrbitalView:
    """LVLH state -> (W state, BodyWrenches) at a time (module docstring)."""

    def __init__(self, system: SystemModel, config: OrbitConfig):
        self.environment = OrbitalEnvironment(system, config)
        self.model = system.model
        self.data = system.model.createData()

    def in_frame(self, t: float, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray, BodyWrenches]:
        """(q, v) in W and the bodies' wrenches, for the LVLH state (q, v) at time t (s)."""
        env = self.environment
        reference = env.reference_state(t)
        q_w, v_w = env.transform.from_lvlh(q, v, env.lvlh(reference))
        pin.computeJointJacobians(self.model, self.data, q_w)
        tidal = env.tidal
        tidal.evaluate(self.data, env.start + reference[:3])
        return q_w, v_w, BodyWrenches(tuple(tidal.joints), tidal.force.copy(), tidal.torque.copy(), tidal.com.copy())
