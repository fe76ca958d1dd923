"""PNG plots of a run (bus attitude error, arm joint angles, wheel speeds, momentum drift; for a flexible model
its modal coordinates and joint deflections; for a run with a comparison, their differences; for a model with a
grasp (docs/contact.md sec. 11), the relative rates, the grasp wrench, the wheel momentum and the joint torques; for a
run with estimators, their errors against the truth with their 3-sigma bounds).

Drawn with matplotlib's object API on the Agg canvas: no display and no global pyplot state, so plotting
works on a headless machine and inside tests.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from .run_trace import RunTrace

PLOT_NAMES = ("base_attitude.png", "joint_angles.png", "wheel_speeds.png", "momentum_drift.png")
FLEXIBLE_PLOT_NAMES = ("flexible_modes.png", "comparison.png")     # flexible models; runs with a comparison
CAPTURE_PLOT_NAMES = ("relative_rates.png", "grasp_wrench.png", "wheel_momentum.png", "joint_torques.png")
FORCE_MOTION_PLOT_NAME = "force_motion.png"     # runs of the controller's force_motion mode
ESTIMATION_PLOT_NAME = "estimation_errors.png"  # runs with estimators (docs/sensing.md)
_SIZE = (8.0, 4.5)   # inches
_DPI = 100
_SHOW_LIMIT_FRACTION = 0.25   # draw the wheel speed limit when the peak speed exceeds this fraction of it


def _figure(rows: int = 1):
    figure = Figure(figsize=(_SIZE[0], _SIZE[1] * (1 if rows == 1 else 0.75 * rows)), dpi=_DPI)
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return figure, axes


def _save(figure: Figure, path: Path) -> Path:
    """Written aside, then renamed into place: a plot interrupted half-way (space-robot-plot ends at once on a
    signal) leaves the previous file, never half of one."""
    figure.tight_layout()
    aside = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        figure.savefig(aside, format=path.suffix.lstrip(".") or "png",
                       metadata={"Software": None})   # no version string: identical files across runs
        os.replace(aside, path)
    finally:
        aside.unlink(missing_ok=True)
    return path


def _drift_axis(ax, t: np.ndarray, drift: np.ndarray, label: str) -> None:
    """|X - X(0)| on a log axis. Exact zeros (always at t = 0, everywhere for a drift below round-off) have
    no place on a log axis: they are left out and the axis says how many there were."""
    positive = drift > 0
    if positive.any():
        ax.semilogy(t[positive], drift[positive])
    else:
        ax.set_yscale("log")
        ax.set_ylim(1e-18, 1e-15)
    zeros = int(np.count_nonzero(~positive))
    if zeros:
        text = "exactly 0 at every sample" if not positive.any() else \
            f"exactly 0 at {zeros} of {len(drift)} samples (not drawn on the log axis)"
        # as a legend entry placed where the curve is not ("best"): a fixed spot could cover the data
        ax.legend([Line2D([], [], linestyle="none")], [text], loc="best", handlelength=0, handletextpad=0,
                  fontsize="small")
    ax.set_ylabel(label)
    ax.grid(True)


def plot_run(trace: RunTrace, out_dir: str | Path, title: str = "", attitude_limit: float | None = None,
             wheel_max_speed: float | None = None, momentum_conserved: bool = True, comparison=None,
             capture: dict | None = None, force_motion: dict | None = None,
             momentum_axes: dict | None = None) -> list[Path]:
    """Write the plots that apply to the run into out_dir; returns their paths. Limits (rad, rad/s) are
    drawn when given. Not drawn: the bus attitude without a floating bus, the wheels without wheels, the
    momentum drift when momentum is not conserved (momentum_conserved False: a fixed base, gravity), the
    flexible modes of a rigid model, the differences without a comparison (comparison.ComparisonResult), the
    capture plots without grasp/state samples or when the gripper was never used. `capture` (from the run info):
    wheel_spin_inertia (kg m^2, per wheel), grasp_force_limit (N), grasp_torque_limit (N m), wheel_max_momentum
    (N m s), each optional. `force_motion` (from the run info): joint_positions, contact_force, bands (the
    force_motion plot, drawn when the run has a grasp wrench)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    t, angle = trace.attitude_error()
    if len(t):
        figure, (ax,) = _figure()
        # log scale: a held attitude sits orders of magnitude below its requirement
        degrees = np.degrees(angle)
        positive = degrees > 0
        ax.semilogy(t[positive], degrees[positive], label="bus attitude error" if trace.setpoint is not None
                    else "bus rotation from its initial attitude")
        if attitude_limit is not None:
            ax.axhline(np.degrees(attitude_limit), color="r", linestyle="--",
                       label=f"requirement ({_number(np.degrees(attitude_limit))} deg)")
        ax.set_xlabel("time (s)")
        reference = "setpoint" if trace.setpoint is not None else "initial attitude"     # (no setpoint received)
        ax.set_ylabel(f"angle from {reference} (deg)")
        ax.set_title(f"{title}: bus attitude (base_link vs {reference}, world frame)")
        ax.legend(loc="lower right")
        ax.grid(True)
        paths.append(_save(figure, out / PLOT_NAMES[0]))

    if trace.arm_joints:
        figure, (ax,) = _figure()
        t, q = trace.arm_positions.arrays()
        for i, name in enumerate(trace.arm_joints):
            line = ax.plot(t, q[:, i] if len(t) else [], label=name)[0]
            if trace.goal_positions is not None and len(t):
                ax.axhline(trace.goal_positions[i], color=line.get_color(), linestyle=":", linewidth=0.8)
        _finish(ax, "joint angle (rad)", f"{title}: arm joints (dotted: goal)")
        paths.append(_save(figure, out / PLOT_NAMES[1]))

    if trace.wheel_joints:
        figure, (ax,) = _figure()
        t, w = trace.wheel_speeds.arrays()
        for i, name in enumerate(trace.wheel_joints):
            ax.plot(t, w[:, i] if len(t) else [], label=name)
        limit_note = ""
        if wheel_max_speed is not None and np.isfinite(wheel_max_speed):
            peak = float(np.max(np.abs(w))) if w.size else 0.0
            if peak > _SHOW_LIMIT_FRACTION * wheel_max_speed:       # else the limit lines would flatten the curves
                for sign in (1, -1):
                    ax.axhline(sign * wheel_max_speed, color="r", linestyle="--", linewidth=0.8,
                               label="speed limit" if sign > 0 else None)
                limit_note = f" (limit ±{_number(wheel_max_speed)} rad/s, dashed)"
            else:
                limit_note = f" (peak {_number(peak / wheel_max_speed * 100)} % of the ±{_number(wheel_max_speed)} " \
                             "rad/s limit)"
        _finish(ax, "wheel speed relative to the bus (rad/s)", f"{title}: reaction wheels{limit_note}")
        paths.append(_save(figure, out / PLOT_NAMES[2]))

    # the conserved components (momentum_conservation.py; a bag of an older release says only whether all are)
    axes = momentum_axes if momentum_axes is not None else \
        {"linear": None, "angular": None, "components": "all"} if momentum_conserved else None
    t, dp, dl = trace.momentum_drift(axes["linear"], axes["angular"]) if axes else (np.zeros(0),) * 3
    if axes and len(t):
        figure, (ax_p, ax_l) = _figure(2)
        _drift_axis(ax_p, t, dp, "|p - p(0)| (kg m/s)")
        which = "" if axes["components"] == "all" else f"; {axes['components']}"
        ax_p.set_title(f"{title}: total momentum drift (world frame, L about the system CoM{which})")
        _drift_axis(ax_l, t, dl, "|L - L(0)| (kg m^2/s)")
        ax_l.set_xlabel("time (s)")
        paths.append(_save(figure, out / PLOT_NAMES[3]))

    if len(trace.flexible_positions):
        paths.append(_plot_flexible(trace, out / FLEXIBLE_PLOT_NAMES[0], title))
    if comparison is not None and len(comparison.t):
        paths.append(_plot_comparison(comparison, out / FLEXIBLE_PLOT_NAMES[1], title))
    if len(trace.grasp_state) and _gripper_used(trace):
        paths += _plot_capture(trace, out, title, capture or {})
    estimation = trace.estimation_error_series()
    if estimation:
        paths.append(_plot_estimation(estimation, out / ESTIMATION_PLOT_NAME, title))
    if force_motion is not None:
        errors = trace.force_motion_errors(force_motion.get("joint_positions"), force_motion["contact_force"])
        if errors is not None:
            paths.append(_plot_force_motion(trace, errors, force_motion.get("bands", {}), out / FORCE_MOTION_PLOT_NAME,
                                            title))
    return paths


def _plot_force_motion(trace: RunTrace, errors: dict, bands: dict, path: Path, title: str) -> Path:
    """Hybrid force/motion: the errors of eqs. 6.6-6.7 on a log axis with their settling bands (dashed), and the
    thrusters' commanded wrench (the realized base input)."""
    figure, (ax_e, ax_w) = _figure(2)
    t = errors["t"]
    for key, band, label in (("joint", "joint", "max |q_d - q| (rad, m)"),
                             ("attitude", "base_attitude", "base attitude (rad)"),
                             ("force", "force", "max |f - f_d| (N)")):
        line = ax_e.semilogy(t, np.maximum(errors[key], 1e-15), label=label, linewidth=0.9)[0]
        if bands.get(band) is not None:
            ax_e.axhline(bands[band], color=line.get_color(), linestyle="--", linewidth=0.8,
                         label=f"band {_number(bands[band])}")
    ax_e.set_ylabel("error (1e-15 floor)")
    ax_e.set_title(f"{title}: hybrid force/motion errors (dashed: settling bands)")
    tw, wrench = trace.thruster_wrench.arrays()
    if len(tw):
        ax_w.semilogy(tw, np.maximum(np.linalg.norm(wrench[:, :3], axis=1), 1e-12), label="|force| (N)")
        ax_w.semilogy(tw, np.maximum(np.linalg.norm(wrench[:, 3:], axis=1), 1e-12), label="|couple| (N m)")
    ax_w.set_ylabel("thruster command (base link)")
    ax_w.set_xlabel("time (s)")
    for ax in (ax_e, ax_w):
        ax.grid(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0.0)
    return _save(figure, path)


def _gripper_used(trace: RunTrace) -> bool:
    """Whether the run did anything with its grasp (the gripper closed, or a contact event): a model with a gripper
    that nobody used (the pre-grasp scenario) has no capture to plot."""
    return bool(np.any(trace.grasp_entry("gripper_closed")[1] > 0.5) or np.any(trace.grasp_entry("events")[1] > 0))


def _grasp_lines(ax, trace: RunTrace) -> None:
    """Dotted vertical lines at the instants the grasp closed or opened."""
    t, holding = trace.grasp_entry("holding")
    if len(t):
        for k in np.flatnonzero(np.diff(holding > 0.5)):
            ax.axvline(t[k + 1], color="k", linestyle=":", linewidth=0.8)


def _plot_capture(trace: RunTrace, out: Path, title: str, capture: dict) -> list[Path]:
    """The capture plots (CAPTURE_PLOT_NAMES; the wheel momentum only with wheels); dotted vertical lines: the grasp
    closing or opening."""
    paths = []
    figure, (ax,) = _figure()
    t, relative = trace.relative_angular_rate()
    for series, label in ((trace.bus_rate, "|w bus|"), (trace.target_rate, "|w target|")):
        ts, w = series.arrays()
        if len(ts):
            ax.semilogy(ts, np.maximum(np.linalg.norm(w, axis=1), 1e-12), label=label, linewidth=0.9)
    if len(t):
        ax.semilogy(t, np.maximum(relative, 1e-12), label="|w target - w bus|", linewidth=0.9)
    ta, rates = trace.arm_rates.arrays()
    if len(ta):
        ax.semilogy(ta, np.maximum(np.abs(rates).max(axis=1), 1e-12), label="max |arm joint rate|", linewidth=0.9)
    _grasp_lines(ax, trace)
    _finish(ax, "rate (rad/s; 1e-12 floor)", f"{title}: angular rates (world-frame difference; dotted: grasp)")
    paths.append(_save(figure, out / CAPTURE_PLOT_NAMES[0]))

    figure, (ax_f, ax_t) = _figure(2)
    t, wrench = trace.grasp_wrench.arrays()
    for k, axis in enumerate("xyz"):
        ax_f.plot(t, wrench[:, k] if len(t) else [], label=f"f_{axis}", linewidth=0.9)
        ax_t.plot(t, wrench[:, 3 + k] if len(t) else [], label=f"n_{axis}", linewidth=0.9)
    for ax, key, unit in ((ax_f, "grasp_force_limit", "N"), (ax_t, "grasp_torque_limit", "N m")):
        if capture.get(key) is not None:
            ax.axhline(capture[key], color="r", linestyle="--", linewidth=0.8, label=f"limit {_number(capture[key])} "
                                                                                     f"{unit} (norm)")
        _grasp_lines(ax, trace)
        ax.grid(True)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0.0)
    ax_f.set_ylabel("force (N)")
    ax_t.set_ylabel("torque (N m)")
    ax_t.set_xlabel("time (s)")
    ax_f.set_title(f"{title}: grasp wrench on the hand (end-effector frame)")
    paths.append(_save(figure, out / CAPTURE_PLOT_NAMES[1]))

    if trace.wheel_joints:            # (a model without wheels, e.g. thesis_6dof: nothing to draw)
        figure, (ax,) = _figure()
        t, w = trace.wheel_speeds.arrays()
        inertia = np.asarray(capture.get("wheel_spin_inertia") or [], float)
        if len(inertia) == len(trace.wheel_joints):
            for i, name in enumerate(trace.wheel_joints):
                ax.plot(t, inertia[i] * w[:, i] if len(t) else [], label=name)
            limit = capture.get("wheel_max_momentum")
            if limit is not None:
                for sign in (1, -1):
                    ax.axhline(sign * limit, color="r", linestyle="--", linewidth=0.8,
                               label="limit" if sign > 0 else None)
        _grasp_lines(ax, trace)
        _finish(ax, "wheel momentum I_s Omega (N m s)", f"{title}: reaction wheel momentum (dotted: grasp)")
        paths.append(_save(figure, out / CAPTURE_PLOT_NAMES[2]))

    figure, (ax,) = _figure()
    t, tau = trace.arm_efforts.arrays()
    for i, name in enumerate(trace.arm_joints):
        ax.plot(t, tau[:, i] if len(t) else [], label=name, linewidth=0.9)
    _grasp_lines(ax, trace)
    _finish(ax, "joint torque (N m)", f"{title}: arm joint torques applied (dotted: grasp)")
    paths.append(_save(figure, out / CAPTURE_PLOT_NAMES[3]))
    return paths


def _plot_estimation(series: dict, path: Path, title: str) -> Path:
    """The estimators' errors against the truth per world axis, with the +-3 sigma their covariances claim."""
    labels = {"attitude": ("bus attitude error (rad)", "estimated bus attitude: error (log(R_true R_est^T)) "
                                                       "and +-3 sigma"),
              "target_position": ("target position error (m)", "estimated target position: error and +-3 sigma")}
    figure, axes = _figure(len(series))
    for ax, (name, (t, error, sigma)) in zip(axes, series.items()):
        for k, (axis, colour) in enumerate(zip("xyz", ("tab:red", "tab:green", "tab:blue"))):
            ax.plot(t, error[:, k], color=colour, linewidth=0.8, label=f"{axis} (world)")
            ax.plot(t, 3.0 * sigma[:, k], color=colour, linewidth=0.8, linestyle="--", label=f"+-3 sigma {axis}")
            ax.plot(t, -3.0 * sigma[:, k], color=colour, linewidth=0.8, linestyle="--")
        ylabel, heading = labels[name]
        _finish(ax, ylabel, f"{title}: {heading}")
    return _save(figure, path)


def _finish(ax, ylabel: str, title: str) -> None:
    """Labels, grid and a legend outside the axes (inside, a legend of 7 joints always covers a curve)."""
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0.0)
    ax.grid(True)


def _plot_flexible(trace: RunTrace, path: Path, title: str) -> Path:
    """Modal coordinates (mm of tip deflection or mrad of tip twist) and elastic-joint deflections (mrad)."""
    t, positions = trace.flexible_positions.arrays()
    names = trace.flexible_names
    modal = [k for k, n in enumerate(names) if not n.endswith(("/motor", "/deflection"))]
    joints = [k for k, n in enumerate(names) if n.endswith("/deflection")]
    panels = [(columns, label) for columns, label in
              ((modal, "modal coordinate\n(mm of tip deflection, mrad of twist)"),
               (joints, "joint deflection q - theta_m\n(mrad)")) if columns]
    figure, axes = _figure(len(panels))
    for ax, (columns, label) in zip(axes, panels):
        for k in columns:
            ax.plot(t, 1e3 * positions[:, k], label=names[k], linewidth=0.9)
        ax.set_ylabel(label)
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0.0)
        ax.grid(True)
    axes[0].set_title(f"{title}: flexible modes (docs/flexibility.md eqs. 2, 12)")
    axes[-1].set_xlabel("time (s)")
    return _save(figure, path)


def _plot_comparison(comparison, path: Path, title: str) -> Path:
    """End-effector distance (mm), arm joint and bus angle differences (deg) between the run and its comparison."""
    figure, (ax_e, ax_j, ax_b) = _figure(3)
    t = comparison.t
    ax_e.plot(t, 1e3 * comparison.end_effector_difference)
    ax_e.set_ylabel("end effector\n|difference| (mm)")
    ax_e.set_title(f"{title}: this run minus the {comparison.name!r} run (same inputs)")
    for i, name in enumerate(comparison.arm_joints):
        ax_j.plot(t, np.degrees(comparison.joint_angle_difference[:, i]), label=name)
    ax_j.set_ylabel("joint angle\ndifference (deg)")
    ax_j.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0.0)
    ax_b.plot(t, np.degrees(comparison.base_angle_difference))
    ax_b.set_ylabel("bus attitude\ndifference (deg)")
    ax_b.set_xlabel("time (s)")
    for ax in (ax_e, ax_j, ax_b):
        ax.grid(True)
    return _save(figure, path)


def _number(value: float) -> str:
    """A figure for a title or a label: 4 significant digits, never hundreds of them (1e+300 stays short)."""
    return f"{value:.4g}"
