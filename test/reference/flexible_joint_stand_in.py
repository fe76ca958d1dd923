"""One motor-spring-link joint integrated exactly (seed 003 eqs. 3-9, n = 1): a test oracle.

It was the identification's stand-in for the simulator's elastic joint until that existed; now it checks the
`elastic_joint` problem's simulation in the limit where the two coincide (a fixed base, the other joints held:
test_identification_elastic_joint.py). Generalized coordinates: link angle q and motor angle q_m about the same
axis (seed 003 eq. 1, both measured from the same reference); the link side is a rigid inertia I_l about the joint
axis (the arm beyond the joint, the other joints held), the motor side the motor inertia I_m (the rotor's inertia
times the gear ratio squared, sec. 2). Spring k and damper b between them (eqs. 7-8); the motor torque tau acts
on the motor (sec. 2):
    I_l q''   = k (q_m - q) + b (q_m' - q')
    I_m q_m'' = tau - k (q_m - q) - b (q_m' - q')
(eq. 9 with M* = diag(I_l, 0), J* = diag(0, I_m), K* and B* of eqs. 13-14). The base is held still: this is
the joint alone, not seed 003's free-floating test bed.

The motor torque follows seed 003 sec. 4 ("driving torques obtained with the use of inverse dynamics approach
for reference (rigid joints) model"): the rigid model moves q = q_m = q_d along the desired motor trajectory,
so tau(t) = (I_l + I_m) q_d''(t), with the motor inertia of the parameters being evaluated (see
docs/identification.md for this choice). q_d: rest at `start`, then `acceleration` for `duration` s, then
constant rate (sec. 3.2: "each joint accelerating with a constant acceleration", 10 s).
Initial state: q_m(0) = q_d(0), q(0) = q_d(0) + lambda (the initial spring offset, sec. 4), at rest.

The model is linear with a piecewise-constant input, so it is integrated exactly: z = [q, q_m, q', q_m', 1],
z' = F z, z(t + h) = expm(F h) z(t) (scipy.linalg.expm), one matrix per distinct step and segment, its powers
over a run of equal steps by doubling (`propagate`).

Parameters (`<joint>.<name>`): motor_inertia (kg m^2), stiffness (N m/rad), damping (N m s/rad),
spring_offset (rad), link_inertia (kg m^2). Outputs: `<joint>.link_angle`, `<joint>.motor_angle` (rad).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from space_robot_identification.free_parameters import KnownParameter

PARAMETERS = {"motor_inertia": "kg m^2", "stiffness": "N m/rad", "damping": "N m s/rad", "spring_offset": "rad",
              "link_inertia": "kg m^2"}
_STEP_DIGITS = 12          # steps equal to 1e-12 s share one transition matrix


class FlexibleJointStandIn:
    """ParameterizedSimulation of the module docstring."""

    def __init__(self, joint: str, nominal: dict, start: float, acceleration: float, duration: float):
        self.joint = joint
        self.nominal = dict(nominal)
        self.start = start
        self.acceleration = acceleration
        self.duration = duration

    def parameters(self) -> dict[str, KnownParameter]:
        return {f"{self.joint}.{name}": KnownParameter(self.nominal[name], unit) for name, unit in PARAMETERS.items()}

    def outputs(self) -> dict[str, str]:
        return {f"{self.joint}.link_angle": "rad", f"{self.joint}.motor_angle": "rad"}

    def simulate(self, values: Mapping[str, float], times: np.ndarray) -> dict[str, np.ndarray]:
        from scipy.linalg import expm

        p = {name: float(values.get(f"{self.joint}.{name}", self.nominal[name])) for name in PARAMETERS}
        i_l, i_m, k, b = p["link_inertia"], p["motor_inertia"], p["stiffness"], p["damping"]
        torque = (i_l + i_m) * self.acceleration      # N m, rigid reference model with the motor (module doc)
        times = np.asarray(times, float)
        grid = np.unique(np.concatenate(([0.0], times[times > 0.0], [self.duration])))
        steps = np.round(np.diff(grid), _STEP_DIGITS)
        accelerating = grid[:-1] < self.duration          # the step's segment: accelerating, then coasting
        keys = list(zip(steps.tolist(), accelerating.tolist()))
        transitions = {}
        for step, on in set(keys):
            f = np.zeros((5, 5))
            f[0, 2] = f[1, 3] = 1.0
            f[2, :4] = [-k / i_l, k / i_l, -b / i_l, b / i_l]
            f[3, :4] = [k / i_m, -k / i_m, b / i_m, -b / i_m]
            f[3, 4] = torque / i_m if on else 0.0
            transitions[(step, on)] = expm(f * step)
        z = np.array([self.start + p["spring_offset"], self.start, 0.0, 0.0, 1.0])
        states = [z[None, :]]
        run_start = 0
        for i in range(1, len(keys) + 1):          # runs of equal steps: Phi^1..Phi^n z at once (propagate)
            if i == len(keys) or keys[i] != keys[run_start]:
                block = propagate(transitions[keys[run_start]], states[-1][-1], i - run_start)
                states.append(block)
                run_start = i
        states = np.concatenate(states)
        stacked = states[np.searchsorted(grid, times)]
        return {f"{self.joint}.link_angle": stacked[:, 0], f"{self.joint}.motor_angle": stacked[:, 1]}


def propagate(phi: np.ndarray, z: np.ndarray, count: int) -> np.ndarray:
    """[phi z, phi^2 z, ..., phi^count z] as rows, by doubling: from the first m rows and phi^m, the next m rows are
    phi^m applied to them (log2(count) matrix products instead of a loop over the steps)."""
    rows = (phi @ z)[None, :]
    power = phi
    while len(rows) < count:
        rows = np.concatenate((rows, rows @ power.T))
        power = power @ power
    return rows[:count]
