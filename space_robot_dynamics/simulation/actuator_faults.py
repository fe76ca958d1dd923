"""Failed actuators: what a failed wheel drive or arm joint motor applies instead of its command.

Each fault acts on the torque the simulator applies (after the limits of simulator.set_command), so it holds for
every integrator and every right-hand side (free, grasped, flexible), and the torque stays internal to the robot
(a wheel's and a joint's torque act between two of its bodies: no fault changes the system's momentum):

- `lost` (wheel_lost, joint_limp): the drive gives no torque; the wheel spins on at its speed (a frictionless
  bearing), the joint swings free;
- `halved` (wheel_torque_halved): the drive's torque limit is half the model's;
- `stuck` (wheel_stuck): the bearing seizes. The drive gives no torque, and the bearing's friction, at most
  `torque` (N m), brakes the wheel to the bus's rate and then holds it there: each step it applies the torque that
  would stop the wheel's relative motion within that step, -J_spin w / dt, clipped to +-torque (Coulomb friction
  that sticks once stopped). J_spin is the wheel's spin inertia; the effective inertia at the wheel's joint is a
  little smaller (the bus recoils), so the step lands within J_spin / J_bus of zero and stays there (a stable
  zero-order hold: the factor is ~1e-4 on the servicer).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

KINDS = ("lost", "halved", "stuck")


@dataclass(frozen=True)
class _Seized:
    index: int            # in the actuated vector [arm, wheels]
    v_index: int          # the wheel's joint in v
    spin_inertia: float   # kg m^2
    torque: float         # N m: the seized bearing's friction


class ActuatorFaults:
    """The failed actuators of a simulator: `limits(lower, upper)` gives the limits with the lost and halved
    drives; `brake(applied, v, dt)` writes the seized bearings' torques into the applied vector."""

    def __init__(self):
        self.failed: dict[int, str] = {}      # actuated index -> kind
        self._seized: list[_Seized] = []

    def __bool__(self) -> bool:
        return bool(self.failed)

    def fail(self, index: int, kind: str, v_index: int | None = None, spin_inertia: float | None = None,
             torque: float | None = None) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown actuator fault {kind!r} (one of {KINDS})")
        self.failed[index] = kind
        if kind == "stuck":
            self._seized.append(_Seized(index, v_index, float(spin_inertia), float(torque)))

    def limits(self, lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The torque limits (N m, actuated order) with the failed drives': zero for a lost or seized drive,
        half for a halved one."""
        lower, upper = lower.copy(), upper.copy()
        for index, kind in self.failed.items():
            scale = 0.5 if kind == "halved" else 0.0
            lower[index] *= scale
            upper[index] *= scale
        return lower, upper

    def brake(self, applied: np.ndarray, v: np.ndarray, dt: float) -> None:
        """The seized bearings' friction into `applied` (in place), from the joint velocities v at the step's
        start (rad/s, relative to the bus)."""
        for s in self._seized:
            stop = -s.spin_inertia * v[s.v_index] / dt
            applied[s.index] = min(max(stop, -s.torque), s.torque)
