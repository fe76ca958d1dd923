"""The system state (q, v), and its acceleration, at each recorded instant, rebuilt from recorded signals.

Sources (recorded_signals.py names): the joint angles and rates of every one-degree-of-freedom joint from a
JointState topic, and the pose (world frame) and twist (base-link frame) of each floating subtree's base link
from its Odometry topic, as the runtime's dynamics node publishes them (space_robot_nodes/robot_state.py).
Free-flyer bases only: q = [position, quaternion] of the base joint relative to its mount,
M_joint = M_mount^-1 M_world M_base^-1 (as space_robot_dynamics.simulation.initial_state), v = the twist.
The instants are the JointState samples within the time window; odometry is interpolated onto them where its
stamps differ (exact where they coincide, as in the runtime's bags), quaternions renormalised.
Accelerations (for the equations of motion) are the Savitzky-Golay derivative of the rates (scipy.signal), on
a uniform grid.

Optional `filter: {window: S, order: K}`: every signal is smoothed by a Savitzky-Golay filter of S seconds
before the state is built, and the problems keep one instant per window (`SystemSamples.decimated`). Noise in
the rates enters the regressors themselves (errors in variables): least squares then shrinks the estimates by
about the noise's share of the rates' variance, a bias that more samples do not remove. Smoothing cuts that
share by the filter's variance reduction; keeping one instant per window keeps the residuals nearly
independent, as the Cramer-Rao covariance assumes (docs/identification.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel

from .recorded_signals import RecordedSignals, window_times

_UNIFORM_TOLERANCE = 1e-6    # relative spread of the sample intervals accepted as a uniform grid


@dataclass(frozen=True)
class StateSignals:
    """Where the state is recorded: the JointState topic and one Odometry topic per floating subtree."""

    joint_states: str
    odometry: dict
    field: str = "problem.state"
    source: str | None = None
    filter_window: float | None = None     # s; None: the signals as recorded
    filter_order: int = 3


def read_state_signals(reader: ConfigReader, system: SystemModel) -> StateSignals:
    """problem.state: {joint_states: TOPIC, odometry: {SUBTREE: TOPIC}} checked against the model."""
    joint_states = reader.string("joint_states", "joint_states")
    odometry_reader = reader.sub("odometry", {})
    odometry = {}
    floating = [s for s in system.subtrees if s.root_joint_id != 0]
    for subtree in floating:
        if subtree.base_joint_type != "free_flyer":
            raise odometry_reader.error(subtree.name, f"subtree {subtree.name!r} has a {subtree.base_joint_type} "
                                                      "base: only free-flyer bases are rebuilt from odometry")
        odometry[subtree.name] = odometry_reader.string(subtree.name)
    odometry_reader.reject_unknown()
    window, order = None, 3
    if reader.has("filter"):
        smoothing = reader.sub("filter")
        window = smoothing.number("window", exclusive_minimum=0.0)
        order = smoothing.integer("order", 3, minimum=1)
        smoothing.reject_unknown()
    reader.reject_unknown()
    return StateSignals(joint_states, odometry, reader.path, reader.source, window, order)


@dataclass(frozen=True)
class SystemSamples:
    t: np.ndarray       # (N,) s from the start of the recording
    q: np.ndarray       # (N, nq)
    v: np.ndarray       # (N, nv), Pinocchio's v order

    def __len__(self) -> int:
        return len(self.t)

    def decimated(self, step: int) -> SystemSamples:
        """Every `step`-th instant, the first one included."""
        return SystemSamples(self.t[::step], self.q[::step], self.v[::step])


def system_samples(system: SystemModel, state: StateSignals, signals: RecordedSignals, start: float,
                   end: float) -> SystemSamples:
    """(q, v) at the JointState instants within [start, end] s. ConfigError naming the state field for a
    missing signal or a window the data does not cover."""
    joints = system.actuated_joint_names()
    field_js = f"{state.field}.joint_states"
    first = f"{state.joint_states}.position.{joints[0]}"
    signals.require(first, field_js, state.source)
    times = window_times(signals.times(first), start, end, first, state.source)
    if len(times) < 2:
        raise ConfigError("window", f"holds {len(times)} samples of {first!r} in [{start}, {end}] s (the data "
                                    f"covers [0, {signals.end_time():.6g}] s)", state.source)
    n = len(times)
    smooth = _smoother(state, times)
    q = np.tile(system.neutral(), (n, 1))
    v = np.zeros((n, system.nv))
    for name in joints:
        angle = smooth(signals.sampled(f"{state.joint_states}.position.{name}", times, field_js, state.source))
        rate = smooth(signals.sampled(f"{state.joint_states}.velocity.{name}", times, field_js, state.source))
        qs = system.q_slice(name)
        if qs.stop - qs.start == 2:          # continuous joint: (cos, sin)
            q[:, qs.start], q[:, qs.start + 1] = np.cos(angle), np.sin(angle)
        else:
            q[:, qs.start] = angle
        v[:, system.v_index(name)] = rate
    for subtree_name, topic in state.odometry.items():
        field_odom = f"{state.field}.odometry.{subtree_name}"
        read = {key: np.column_stack([smooth(signals.sampled(f"{topic}.{key}.{axis}", times, field_odom,
                                                             state.source)) for axis in axes])
                for key, axes in (("position", "xyz"), ("orientation", "xyzw"), ("linear_velocity", "xyz"),
                                  ("angular_velocity", "xyz"))}
        subtree = system.subtree(subtree_name)
        qs, vs = system.q_slice(subtree.base_joint), system.v_slice(subtree.base_joint)
        mount = system.model.jointPlacements[subtree.root_joint_id]
        base = system.model.frames[subtree.base_frame_id].placement
        for k in range(n):
            x, y, z, w = read["orientation"][k] / np.linalg.norm(read["orientation"][k])
            world = pin.SE3(pin.Quaternion(w, x, y, z).toRotationMatrix(), read["position"][k].copy())
            joint = mount.actInv(world) * base.inverse()
            q[k, qs] = np.concatenate((joint.translation, pin.Quaternion(joint.rotation).coeffs()))
        v[:, vs] = np.hstack((read["linear_velocity"], read["angular_velocity"]))
    return SystemSamples(times, q, v)


def filter_length(state: StateSignals, step: float) -> int:
    """Samples (odd) in the state filter's window at sample interval `step` (s)."""
    return int(round(state.filter_window / step)) // 2 * 2 + 1


def _smoother(state: StateSignals, times: np.ndarray):
    """The state filter as a function of one signal's samples (the identity without a filter)."""
    if state.filter_window is None:
        return lambda values: values
    from scipy.signal import savgol_filter

    step = sample_interval(times, f"{state.field}.filter", state.source)
    length = filter_length(state, step)
    if length < state.filter_order + 2 or length > len(times):
        raise ConfigError(f"{state.field}.filter.window", f"{state.filter_window} s is {length} samples of "
                          f"{step:.6g} s: needs {state.filter_order + 2} to {len(times)}", state.source)
    return lambda values: savgol_filter(values, length, state.filter_order, mode="interp")


def sample_interval(times: np.ndarray, field_name: str = "window", source: str | None = None) -> float:
    """The interval (s) of a uniform sample grid; ConfigError when the grid is not uniform."""
    steps = np.diff(times)
    step = float(np.median(steps))
    if np.abs(steps - step).max() > _UNIFORM_TOLERANCE * step:
        raise ConfigError(field_name, f"the samples are not evenly spaced (intervals {steps.min():.6g} to "
                                      f"{steps.max():.6g} s): differentiating the rates needs a uniform grid",
                          source)
    return step


def accelerations(samples: SystemSamples, window: float, order: int, source: str | None = None) -> np.ndarray:
    """dv/dt (N, nv) by a Savitzky-Golay filter of `order` over `window` s (an odd number of samples, at least
    order + 2), on the uniform grid of `samples`."""
    from scipy.signal import savgol_filter

    step = sample_interval(samples.t, "problem.acceleration", source)
    length = int(round(window / step)) // 2 * 2 + 1
    if length < order + 2 or length > len(samples):
        raise ConfigError("problem.acceleration.window", f"{window} s is {length} samples of {step:.6g} s: needs "
                                                         f"{order + 2} to {len(samples)} (odd)", source)
    return savgol_filter(samples.v, length, order, deriv=1, delta=step, axis=0, mode="interp")
