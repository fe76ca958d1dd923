"""Seed 003's test on the simulator's elastic-joint model: a ParameterizedSimulation (parameterized_simulation.py)
of the test bed with its flexible joint, as the paper runs its SimMechanics model for identification (sec. 4).

The model is a SystemModel with elastic joints (docs/flexibility.md sec. 4; seed 003 eqs. 1-20 with N = 1 for the
test bed), whose parameters are set in place at each evaluation (SystemModel.set_elastic_joint: no URDF read).
The run (sec. 4, docs/identification.md "model-structure choices"):
- the prescribed joints (joints 2 and 3: "actuated ... with the use of encoder measurements") follow the desired
  trajectory exactly (prescribed_motion_dynamics.py eq. 1);
- every other arm joint is driven by the torque of the rigid reference model's inverse dynamics along the desired
  trajectory, with the motor inertias being evaluated (rigid_reference_torque.py); an elastic joint's acts on its
  motor (tau_m / N on the rotor, flexibility.md eq. 12);
- the floating base is free (not actuated), everything at rest at t = 0;
- the initial state sets each elastic joint's motor at the trajectory's start, theta_m(0) = q_d(0) (the encoder
  sits on the motor side: the control system holds the motor there before the test), and its link at
  q(0) = q_d(0) + lambda(0): the initial spring offset lambda1(t0) = q1(t0) - q_m1(t0) of sec. 4 is an initial
  condition, not a preload of the spring (the model's own `spring_offset`, lambda_0 of eq. 12, is kept).

Parameters, per elastic joint J (SI units): `J.motor_inertia` the motor inertia reflected to the link,
I_m = N^2 I_r (kg m^2; seed 003's I_m1, sec. 2: "its moment of inertia must be multiplied by the square of the
gear reduction ratio"), `J.stiffness` k (N m/rad), `J.damping` b (N m s/rad), `J.spring_offset` lambda(0) (rad).
Nominal values: the model's, and lambda(0) = lambda_0 (the spring relaxed at the start).
Outputs: `J.link_angle` q (rad) for every arm joint not prescribed, `J.motor_angle` theta_m = phi / N (rad) for
the elastic ones.

Integration: classical RK4 on the free coordinates (positions of the free one-DOF joints, every free velocity) with
a fixed step per smooth piece of the trajectory (joint_space_trajectory.py), h = min(max_step,
step_times_rate / |s|max), |s|max the largest rate of the system linearised at the initial state
(eigenvalues of [[0, 1], [-M_ff^-1 K_ff, -M_ff^-1 C_ff]], as flexible_stability.py): parameters that stiffen the
joint shorten the step, so every evaluation resolves its own spring mode. Outputs at the requested instants by
quintic Hermite interpolation between steps (positions, rates and accelerations at the step ends: an error
O(h^6), below the integration's O(h^4)). The torques and the prescribed motion are evaluated at the RK4 stage
times (t, t + h/2, t + h). Deterministic: the same values and times give the same outputs bit for bit.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .free_parameters import KnownParameter
from .joint_space_trajectory import ConstantAccelerationTrajectory
from .prescribed_motion_dynamics import PrescribedMotionDynamics
from .rigid_reference_torque import RigidReferenceTorque

PARAMETERS = {"motor_inertia": "kg m^2", "stiffness": "N m/rad", "damping": "N m s/rad", "spring_offset": "rad"}
# The lowest value of each parameter the model accepts (SystemModel.set_elastic_joint), and whether it is excluded:
# the bounds of a free parameter must respect it.
DOMAIN = {"motor_inertia": (0.0, True), "stiffness": (0.0, True), "damping": (0.0, False)}
_CACHED_GRIDS = 16              # reference torques kept for this many integration grids (bounded memory)


@dataclass(frozen=True)
class IntegrationSettings:
    """max_step (s) and step_times_rate (|s|max h, dimensionless) of the module docstring."""

    max_step: float = 0.1
    step_times_rate: float = 0.2


class ElasticJointSimulation:
    """The ParameterizedSimulation of the module docstring."""

    def __init__(self, system: SystemModel, trajectory: ConstantAccelerationTrajectory, prescribed: tuple,
                 integration: IntegrationSettings = IntegrationSettings(), field: str = "problem"):
        flexibility = system.flexibility
        if flexibility is None or not flexibility.joints:
            raise ConfigError(f"{field}.model", "the model has no elastic joint (elastic_joints)")
        for name in prescribed:
            if name not in trajectory.joints:
                raise ConfigError(f"{field}.prescribed", f"{name!r} is not an arm joint with a desired trajectory "
                                                          f"(have {list(trajectory.joints)})")
            if flexibility.elastic(name) is not None:
                raise ConfigError(f"{field}.prescribed", f"{name!r} is an elastic joint: its motor is driven by "
                                                          "the reference torque, its link follows the spring")
        self.system, self.trajectory, self.prescribed = system, trajectory, tuple(prescribed)
        self.integration = integration
        self.dynamics = PrescribedMotionDynamics(system, self.prescribed, f"{field}.model")
        self.reference = RigidReferenceTorque(system, trajectory.joints, f"{field}.model")
        self.elastic = tuple(j for j in flexibility.joints)
        names = self.dynamics.position_names
        self._prescribed_rows = np.array([trajectory.joints.index(n) for n in self.prescribed], dtype=int)
        self.driven = tuple(n for n in trajectory.joints if n not in self.prescribed)
        self._driven_rows = np.array([trajectory.joints.index(n) for n in self.driven], dtype=int)
        self._driven_v, self._driven_gain = [], []
        for name in self.driven:
            elastic = flexibility.elastic(name)
            self._driven_v.append(system.v_index(name) if elastic is None else elastic.rotor_v)
            self._driven_gain.append(1.0 if elastic is None else 1.0 / elastic.joint.gear_ratio)
        self._driven_v, self._driven_gain = np.array(self._driven_v, dtype=int), np.array(self._driven_gain)
        # initial positions: each driven joint at its start, each rotor at N q_d(0); links move by lambda(0)
        self._start = np.zeros(len(names))
        self._offset_rows, self._rotor_rows, self._rotor_gain, self._link_rows = [], [], [], []
        for k, name in enumerate(names):
            if name in trajectory.joints:
                self._start[k] = trajectory.start[trajectory.joints.index(name)]
        for e in self.elastic:
            link, rotor = names.index(e.joint.name), names.index(e.joint.rotor_joint)
            self._start[rotor] = e.joint.gear_ratio * trajectory.start[trajectory.joints.index(e.joint.name)]
            self._offset_rows.append(link)
            self._rotor_rows.append(rotor)
            self._rotor_gain.append(1.0 / e.joint.gear_ratio)
        self._outputs = {}
        for name in self.driven:
            self._outputs[f"{name}.link_angle"] = (names.index(name), 1.0)
            elastic = flexibility.elastic(name)
            if elastic is not None:
                self._outputs[f"{name}.motor_angle"] = (names.index(elastic.joint.rotor_joint),
                                                        1.0 / elastic.joint.gear_ratio)
        self._nominal = {}
        for e in self.elastic:
            c = e.joint.config
            values = {"motor_inertia": e.joint.reflected_inertia(), "stiffness": c.stiffness, "damping": c.damping,
                      "spring_offset": c.spring_offset}
            for name, unit in PARAMETERS.items():
                lowest, exclusive = DOMAIN.get(name, (None, False))
                self._nominal[f"{e.joint.name}.{name}"] = KnownParameter(float(values[name]), unit, lowest, exclusive)
        self._cache = {}
        self.last_step = None           # s: the step of the last simulate (for reports and tests)

    # ---- ParameterizedSimulation ------------------------------------------------------------------
    def parameters(self) -> dict[str, KnownParameter]:
        """The model's values as built (not those of the last evaluation)."""
        return dict(self._nominal)

    def outputs(self) -> dict[str, str]:
        return {name: "rad" for name in self._outputs}

    def simulate(self, values: Mapping[str, float], times: np.ndarray) -> dict[str, np.ndarray]:
        times = np.asarray(times, float)
        offsets = self._set(values)
        positions = self._start.copy()
        positions[self._offset_rows] += offsets
        velocities = np.zeros(len(self.dynamics.free_v))
        elastic = self.dynamics.elastic_matrices()
        step = self._step(positions, elastic)
        self.last_step = step
        samples = np.zeros((len(times), len(positions)))
        end = float(times.max()) if len(times) else 0.0
        for start, stop, segment in self.trajectory.segments(end):
            inside = (times >= start) & (times <= stop) if segment == 0 else (times > start) & (times <= stop)
            if stop <= start:                   # only t = 0 asked for: the initial state
                samples[inside] = positions
                continue
            count = max(1, int(np.ceil((stop - start) / step - 1e-9)))
            grid, positions, velocities, rates, accelerations, positions_out = self._integrate(
                start, stop, count, segment, positions, velocities, elastic)
            samples[inside] = _quintic_hermite(grid, positions_out, rates, accelerations, times[inside])
        return {name: samples[:, row] * gain for name, (row, gain) in self._outputs.items()}

    # ---- parts -------------------------------------------------------------------------------------
    def _set(self, values: Mapping[str, float]) -> np.ndarray:
        """Set the elastic joints' parameters on the model; returns lambda(0) per elastic joint."""
        nominal = self._nominal
        offsets = []
        for e in self.elastic:
            value = {key: float(values.get(f"{e.joint.name}.{key}", nominal[f"{e.joint.name}.{key}"].value))
                     for key in PARAMETERS}
            self.system.set_elastic_joint(e.joint.name, motor_inertia=value["motor_inertia"] / e.joint.gear_ratio ** 2,
                                          stiffness=value["stiffness"], damping=value["damping"])
            offsets.append(value["spring_offset"])
        self.elastic = tuple(self.system.flexibility.joints)
        return np.array(offsets)

    def _step(self, positions: np.ndarray, elastic: tuple) -> float:
        """h of the module docstring at the initial state."""
        dynamics = self.dynamics
        q = dynamics.q.copy()
        q[dynamics.position_q] = positions
        q[dynamics.prescribed_q] = self.trajectory.start[self._prescribed_rows]
        mass = dynamics.free_mass_matrix(q)
        n = len(mass)
        stiffness = np.zeros((n, n))
        stiffness[:, self.dynamics.position_rows] = elastic[0]      # positions -> their free velocity coordinate
        state = np.zeros((2 * n, 2 * n))
        state[:n, n:] = np.eye(n)
        state[n:, :n] = -np.linalg.solve(mass, stiffness)
        state[n:, n:] = -np.linalg.solve(mass, elastic[1])
        rate = float(np.abs(np.linalg.eigvals(state)).max())
        settings = self.integration
        return settings.max_step if rate == 0.0 else min(settings.max_step, settings.step_times_rate / rate)

    def _torques(self, stage_times: np.ndarray, segment: int, desired: tuple) -> np.ndarray:
        """The reference torques of the driven joints at the stage times (cached per motor inertias and grid)."""
        key = (segment, stage_times[0], stage_times[-1], len(stage_times))
        inertias = tuple(e.joint.config.motor_inertia for e in self.elastic)
        cached = self._cache.get(key)
        if cached is not None and cached[0] == inertias:
            return cached[1]
        torques = self.reference.torques(*desired)[:, self._driven_rows]
        if len(self._cache) >= _CACHED_GRIDS:       # steps shortened by stiff candidates: each its own grid
            self._cache.clear()
        self._cache[key] = (inertias, torques)
        return torques

    def _integrate(self, start: float, stop: float, count: int, segment: int, positions: np.ndarray,
                   velocities: np.ndarray, elastic: tuple):
        """RK4 over [start, stop] in `count` equal steps; the grid and, at its points, the positions, the rates and
        accelerations of the positions, and the final state."""
        dynamics = self.dynamics
        h = (stop - start) / count
        stage_times = start + 0.5 * h * np.arange(2 * count + 1)
        desired = self.trajectory.at(stage_times, segment)
        driven = np.zeros((len(stage_times), self.system.nv))
        driven[:, self._driven_v] = self._torques(stage_times, segment, desired) * self._driven_gain
        forces = driven[:, dynamics.free_v]
        q_rows = np.tile(dynamics.q, (len(stage_times), 1))
        v_rows, a_rows = np.zeros((len(stage_times), self.system.nv)), np.zeros((len(stage_times), self.system.nv))
        q_rows[:, dynamics.prescribed_q] = desired[0][:, self._prescribed_rows]
        v_rows[:, dynamics.prescribed_v] = desired[1][:, self._prescribed_rows]
        a_rows[:, dynamics.prescribed_v] = desired[2][:, self._prescribed_rows]
        acceleration, rows = dynamics.acceleration, dynamics.position_rows
        n_pos = len(positions)

        def rhs(i, y):
            out = np.empty(len(y))
            velocities = y[n_pos:]
            out[:n_pos] = velocities[rows]
            out[n_pos:] = acceleration(y[:n_pos], velocities, q_rows[i], v_rows[i], a_rows[i], forces[i], elastic)
            return out

        y = np.concatenate((positions, velocities))
        states, derivatives = np.empty((count + 1, len(y))), np.empty((count + 1, len(y)))
        half, sixth = 0.5 * h, h / 6.0
        for k in range(count):
            states[k] = y
            k1 = rhs(2 * k, y)
            derivatives[k] = k1
            k2 = rhs(2 * k + 1, y + half * k1)
            k3 = rhs(2 * k + 1, y + half * k2)
            k4 = rhs(2 * k + 2, y + h * k3)
            y = y + sixth * (k1 + 2.0 * (k2 + k3) + k4)
        states[count] = y
        derivatives[count] = rhs(2 * count, y)
        grid = start + h * np.arange(count + 1)
        rates = derivatives[:, :n_pos]
        accelerations = derivatives[:, n_pos:][:, rows]
        return grid, y[:n_pos], y[n_pos:], rates, accelerations, states[:, :n_pos]


def _quintic_hermite(grid: np.ndarray, x: np.ndarray, dx: np.ndarray, ddx: np.ndarray, t: np.ndarray) -> np.ndarray:
    """x at the instants t (within the grid) from x, x', x'' at the grid points (rows): the quintic Hermite
    polynomial of each interval."""
    if len(t) == 0:
        return np.zeros((0, x.shape[1]))
    h = grid[1] - grid[0]
    k = np.clip(np.floor((t - grid[0]) / h).astype(int), 0, len(grid) - 2)
    s = ((t - grid[k]) / h)[:, None]
    s2, s3 = s * s, s * s * s
    s4, s5 = s3 * s, s3 * s2
    h0, h5 = 1.0 - 10.0 * s3 + 15.0 * s4 - 6.0 * s5, 10.0 * s3 - 15.0 * s4 + 6.0 * s5
    h1, h4 = s - 6.0 * s3 + 8.0 * s4 - 3.0 * s5, -4.0 * s3 + 7.0 * s4 - 3.0 * s5
    h2, h3 = 0.5 * (s2 - 3.0 * s3 + 3.0 * s4 - s5), 0.5 * (s3 - 2.0 * s4 + s5)
    return (h0 * x[k] + h * (h1 * dx[k] + h4 * dx[k + 1]) + h * h * (h2 * ddx[k] + h3 * ddx[k + 1])
            + h5 * x[k + 1])
