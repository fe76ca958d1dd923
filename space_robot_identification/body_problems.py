"""A body's inertial parameters from a recorded run: momentum conservation, or the joint torques.

problem:
  kind: body_momentum | body_joint_torques
  model: config/models/...yaml         # the system, with the body's prior; everything else in it is known
  body: target/base_link               # the link (frame) whose inertial parameters are free
  state: {joint_states: TOPIC, odometry: {SUBTREE: TOPIC}, filter: {window: S, order: K}}   # system_samples.py
  signals: {GROUP: {weight: W}}        # W: 1 / the residual scale expected in the group's unit
  initial_momentum: zero | free        # body_momentum: the run starts at rest, or at an unknown constant
  acceleration: {window: S, order: K}  # body_joint_torques: Savitzky-Golay differentiation of the rates

Parameters `<body>.<name>` with the names of body_inertia.PARAMETERS (mass, centre of mass and inertia about it,
in the body's frame); the others keep the model's values.

body_momentum (groups momentum.linear, kg m/s, and momentum.angular, kg m^2/s about the world origin; world
axes): no external force acts, so h_O(t_k) = h_known + Y_k pi(theta) stays equal to its initial value h_0
(body_regressors.py): r_k = W (h_O(t_k) - h_0). With `free`, h_0 is the time mean of h_O (the least-squares
estimate of an unknown constant, so the constant needs no parameter); with `zero`, h_0 = 0.
body_joint_torques (groups joint_torques, N m, the one-DOF joints against the recorded efforts, and
base_wrench, N and N m, the floating bases' rows against zero: nothing actuates them):
r_k = W (tau_known + Y_k pi(theta) - tau_recorded), with accelerations differentiated from the rates.
Both are linear in pi, r = A pi(theta) + c; the Jacobian is exact, A dpi/dtheta
(body_inertia.dynamic_parameter_jacobian), and the cost has a 10 x 10 form (_BodyProblem).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel, build_model

from . import body_inertia
from .body_regressors import BodyRegressors
from .free_parameters import KnownParameter, ParameterSpace
from .recorded_signals import RecordedSignals
from .signal_comparison import SignalComparison
from .system_samples import (
    StateSignals,
    accelerations,
    filter_length,
    read_state_signals,
    sample_interval,
    system_samples,
)

MOMENTUM_GROUPS = {"momentum.linear": "kg m/s", "momentum.angular": "kg m^2/s"}
TORQUE_GROUPS = {"joint_torques": "N m", "base_wrench": "N, N m"}


@dataclass
class BodyProblemSpec:
    """A body problem as configured (checked at load, before any data is read)."""

    kind: str
    system: SystemModel
    body: str
    regressors: BodyRegressors
    state: StateSignals
    weights: dict
    initial_momentum: str = "zero"
    acceleration_window: float = 0.05
    acceleration_order: int = 3
    field: str = "problem"
    source: str | None = None

    def known_parameters(self) -> dict:
        prior = self.regressors.prior_parameters()
        return {f"{self.body}.{name}": KnownParameter(float(value), body_inertia.UNITS[name])
                for name, value in zip(body_inertia.PARAMETERS, prior)}

    def parameter_values(self, system: SystemModel) -> dict:
        """The body's parameters in another model of the same system (the one that made the data: the truth)."""
        try:
            values = BodyRegressors(system, self.body).prior_parameters()
        except Exception as exc:  # noqa: BLE001 - a model without the body cannot give its truth
            raise ConfigError(f"{self.field}.body", f"the data's model has no body {self.body!r}: {exc}",
                              self.source) from None
        return {f"{self.body}.{name}": float(value) for name, value in zip(body_inertia.PARAMETERS, values)}

    def bind(self, signals: RecordedSignals, space: ParameterSpace, start: float, end: float):
        samples = system_samples(self.system, self.state, signals, start, end)
        if self.kind == "body_momentum":
            return BodyMomentumProblem(self, samples, space)
        return BodyTorqueProblem(self, samples, space, signals)

    def decimation(self, samples) -> int:
        """One instant per state-filter window (1: no filter)."""
        if self.state.filter_window is None:
            return 1
        return filter_length(self.state, sample_interval(samples.t, f"{self.field}.state.filter", self.source))


def read_body_problem(reader: ConfigReader, kind: str) -> BodyProblemSpec:
    system = build_model(reader.file_path("model"))
    if np.any(np.asarray(system.config.gravity) != 0.0) and kind == "body_momentum":
        raise reader.error("model", f"has gravity {list(system.config.gravity)}: momentum is conserved only "
                                    "without external forces (use body_joint_torques)")
    body = reader.string("body")
    if not system.model.existFrame(body):
        raise reader.error("body", f"no link or frame {body!r} in the model")
    try:
        regressors = BodyRegressors(system, body)
    except ValueError as exc:
        raise reader.error("body", str(exc)) from None
    state = read_state_signals(reader.sub("state", {}), system)
    groups = MOMENTUM_GROUPS if kind == "body_momentum" else TORQUE_GROUPS
    weights = read_group_weights(reader, groups)
    spec = BodyProblemSpec(kind, system, body, regressors, state, weights, field=reader.path, source=reader.source)
    if kind == "body_momentum":
        spec.initial_momentum = reader.string("initial_momentum", "zero", choices=("zero", "free"))
    else:
        acceleration = reader.sub("acceleration", {})
        spec.acceleration_window = acceleration.number("window", 0.05, exclusive_minimum=0.0)
        spec.acceleration_order = acceleration.integer("order", 3, minimum=1)
        acceleration.reject_unknown()
    reader.reject_unknown()
    return spec


def read_group_weights(reader: ConfigReader, groups: dict) -> dict:
    """signals: {GROUP: {weight: W > 0}} for groups of the problem; at least one."""
    raw = reader.raw("signals")
    if not isinstance(raw, dict) or not raw:
        raise reader.error("signals", f"must be a non-empty mapping; this problem matches {sorted(groups)}")
    section = reader.sub("signals")
    weights = {}
    for name in raw:
        if name not in groups:
            raise section.error(str(name), f"unknown signal (this problem matches: {', '.join(sorted(groups))})")
        entry = section.sub(name)
        weights[name] = entry.number("weight", 1.0, exclusive_minimum=0.0)
        entry.reject_unknown()
    return weights


class _BodyProblem:
    """Weighted residuals r = A pi(theta) + c, linear in the dynamic parameters pi. cost(theta) = |r|^2 is
    evaluated as (pi - pi*)^T G (pi - pi*) + S*, G = A^T A, with pi* a least-squares solution in pi and S* its
    cost (|A (pi - pi*)|^2 + S* is |A pi + c|^2 exactly, without the cancellation of expanding the square): a
    10 x 10 product per Nelder-Mead step instead of the whole regressor."""

    has_jacobian = True

    def __init__(self, spec: BodyProblemSpec, space: ParameterSpace):
        self.spec = spec
        self.space = space
        prefix = f"{spec.body}."
        self.free = np.array([body_inertia.PARAMETERS.index(n[len(prefix):]) for n in space.names], dtype=int)
        self.prior = spec.regressors.prior_parameters()

    def _linear(self, matrix: np.ndarray, offset: np.ndarray) -> None:
        self.matrix, self.offset = matrix, offset
        self.gram = matrix.T @ matrix
        self.pi_best = np.linalg.lstsq(matrix, -offset, rcond=None)[0]
        rest = matrix @ self.pi_best + offset
        self.cost_best = float(rest @ rest)

    def full(self, theta: np.ndarray) -> np.ndarray:
        full = self.prior.copy()
        full[self.free] = theta
        return full

    def parameters_dpi(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        full = self.full(theta)
        return body_inertia.dynamic_parameters(full), body_inertia.dynamic_parameter_jacobian(full)[:, self.free]

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        return self.matrix @ body_inertia.dynamic_parameters(self.full(theta)) + self.offset

    def cost(self, theta: np.ndarray) -> float:
        d = body_inertia.dynamic_parameters(self.full(theta)) - self.pi_best
        return float(d @ self.gram @ d) + self.cost_best

    def jacobian(self, theta: np.ndarray) -> np.ndarray:
        _, dpi = self.parameters_dpi(theta)
        return self.matrix @ dpi


class BodyMomentumProblem(_BodyProblem):
    def __init__(self, spec: BodyProblemSpec, samples, space: ParameterSpace):
        super().__init__(spec, space)
        samples = samples.decimated(spec.decimation(samples))
        self.t = samples.t
        pairs = [spec.regressors.momentum(q, v) for q, v in zip(samples.q, samples.v)]
        self.known = np.array([h for h, _ in pairs])            # (N, 6)
        self.regressor = np.array([y for _, y in pairs])        # (N, 6, 10)
        self.row_weight = np.array([spec.weights.get("momentum.linear", 0.0)] * 3
                                   + [spec.weights.get("momentum.angular", 0.0)] * 3)
        self.free_constant = spec.initial_momentum == "free"
        known, regressor = self.known, self.regressor
        if self.free_constant:          # h - mean(h): the constant's least-squares estimate taken out
            known, regressor = known - known.mean(axis=0), regressor - regressor.mean(axis=0)
        weight = self.row_weight
        self._linear((regressor * weight[None, :, None]).reshape(-1, 10), (known * weight).ravel())

    def momentum(self, theta: np.ndarray) -> np.ndarray:
        return self.known + self.regressor @ body_inertia.dynamic_parameters(self.full(theta))

    def comparisons(self, theta: np.ndarray) -> list[SignalComparison]:
        h = self.momentum(theta)
        constant = h.mean(axis=0) if self.free_constant else np.zeros(6)
        out = []
        for row, (group, axis) in enumerate([(g, a) for g in MOMENTUM_GROUPS for a in "xyz"]):
            if group in self.spec.weights:
                out.append(SignalComparison(f"{group}.{axis}", group, MOMENTUM_GROUPS[group], self.t, h[:, row],
                                            np.full(len(self.t), constant[row]), self.spec.weights[group]))
        return out


class BodyTorqueProblem(_BodyProblem):
    def __init__(self, spec: BodyProblemSpec, samples, space: ParameterSpace, signals: RecordedSignals):
        super().__init__(spec, space)
        system = spec.system
        a = accelerations(samples, spec.acceleration_window, spec.acceleration_order, spec.source)
        step = spec.decimation(samples)
        samples, a = samples.decimated(step), a[::step]
        self.t = samples.t
        pairs = [spec.regressors.torques(q, v, acc) for q, v, acc in zip(samples.q, samples.v, a)]
        self.known = np.array([tau for tau, _ in pairs])       # (N, nv)
        self.regressor = np.array([y for _, y in pairs])       # (N, nv, 10)
        self.recorded = np.zeros_like(self.known)
        self.row_weight = np.zeros(system.nv)
        self.row_names = [""] * system.nv
        self.row_group = [""] * system.nv
        field = f"{spec.field}.state.joint_states"
        for name in system.actuated_joint_names():
            row = system.v_index(name)
            self.recorded[:, row] = signals.sampled(f"{spec.state.joint_states}.effort.{name}", self.t, field,
                                                    spec.source)
            self.row_weight[row] = spec.weights.get("joint_torques", 0.0)
            self.row_names[row], self.row_group[row] = f"joint_torques.{name}", "joint_torques"
        for subtree in system.subtrees:
            if subtree.root_joint_id == 0:
                continue
            vs = system.v_slice(subtree.base_joint)
            labels = ["force_x", "force_y", "force_z", "torque_x", "torque_y", "torque_z"]
            for row, label in zip(range(vs.start, vs.stop), labels):
                self.row_weight[row] = spec.weights.get("base_wrench", 0.0)
                self.row_names[row], self.row_group[row] = f"base_wrench.{subtree.name}.{label}", "base_wrench"
        weight = self.row_weight
        self._linear((self.regressor * weight[None, :, None]).reshape(-1, 10),
                     ((self.known - self.recorded) * weight).ravel())

    def torques(self, theta: np.ndarray) -> np.ndarray:
        return self.known + self.regressor @ body_inertia.dynamic_parameters(self.full(theta))

    def comparisons(self, theta: np.ndarray) -> list[SignalComparison]:
        tau = self.torques(theta)
        return [SignalComparison(self.row_names[row], self.row_group[row], TORQUE_GROUPS[self.row_group[row]],
                                 self.t, tau[:, row], self.recorded[:, row], float(self.row_weight[row]))
                for row in range(tau.shape[1]) if self.row_weight[row] > 0]
