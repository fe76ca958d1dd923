"""PNG plots of a run (bus attitude error, arm joint angles, wheel speeds, momentum drift).

Drawn with matplotlib's object API on the Agg canvas: no display and no global pyplot state, so plotting
works on a headless machine and inside tests.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .run_trace import RunTrace

PLOT_NAMES = ("base_attitude.png", "joint_angles.png", "wheel_speeds.png", "momentum_drift.png")
_SIZE = (8.0, 4.5)   # inches
_DPI = 100
_LOG_FLOOR = 1e-18   # smallest value drawn on log axes (exact zeros at t = 0)
_SHOW_LIMIT_FRACTION = 0.25   # draw the wheel speed limit when the peak speed exceeds this fraction of it


def _figure(rows: int = 1):
    figure = Figure(figsize=(_SIZE[0], _SIZE[1] * (1 if rows == 1 else 0.75 * rows)), dpi=_DPI)
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    return figure, axes


def _save(figure: Figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})   # no version string: identical files across runs
    return path


def plot_run(trace: RunTrace, out_dir: str | Path, title: str = "", attitude_limit: float | None = None,
             wheel_max_speed: float | None = None) -> list[Path]:
    """Write the four PNGs into out_dir; returns their paths. Limits (rad, rad/s) are drawn when given."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []

    figure, (ax,) = _figure()
    t, angle = trace.attitude_error()
    # log scale: a held attitude sits orders of magnitude below its requirement
    ax.semilogy(t, np.maximum(np.degrees(angle), _LOG_FLOOR), label="bus attitude error")
    if attitude_limit is not None:
        ax.axhline(np.degrees(attitude_limit), color="r", linestyle="--", label="requirement")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("angle from setpoint (deg)")
    ax.set_title(f"{title}: bus attitude (base_link vs setpoint, world frame)")
    ax.legend(loc="best")
    ax.grid(True)
    paths.append(_save(figure, out / PLOT_NAMES[0]))

    figure, (ax,) = _figure()
    t, q = trace.arm_positions.arrays()
    for i, name in enumerate(trace.arm_joints):
        line = ax.plot(t, q[:, i] if len(t) else [], label=name)[0]
        if trace.goal_positions is not None and len(t):
            ax.axhline(trace.goal_positions[i], color=line.get_color(), linestyle=":", linewidth=0.8)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("joint angle (rad)")
    ax.set_title(f"{title}: arm joints (dotted: goal)")
    ax.legend(loc="best", fontsize="small", ncol=2)
    ax.grid(True)
    paths.append(_save(figure, out / PLOT_NAMES[1]))

    figure, (ax,) = _figure()
    t, w = trace.wheel_speeds.arrays()
    for i, name in enumerate(trace.wheel_joints):
        ax.plot(t, w[:, i] if len(t) else [], label=name)
    limit_note = ""
    if wheel_max_speed is not None and np.isfinite(wheel_max_speed):
        peak = float(np.max(np.abs(w))) if w.size else 0.0
        if peak > _SHOW_LIMIT_FRACTION * wheel_max_speed:       # else the limit lines would flatten the curves
            for sign in (1, -1):
                ax.axhline(sign * wheel_max_speed, color="r", linestyle="--", linewidth=0.8)
        limit_note = f" (limit +-{wheel_max_speed:.0f} rad/s)"
    ax.set_xlabel("time (s)")
    ax.set_ylabel("wheel speed relative to the bus (rad/s)")
    ax.set_title(f"{title}: reaction wheels{limit_note}")
    if trace.wheel_joints:
        ax.legend(loc="best")
    ax.grid(True)
    paths.append(_save(figure, out / PLOT_NAMES[2]))

    figure, (ax_p, ax_l) = _figure(2)
    t, dp, dl = trace.momentum_drift()
    ax_p.semilogy(t, np.maximum(dp, _LOG_FLOOR))
    ax_p.set_ylabel("|p - p(0)| (kg m/s)")
    ax_p.set_title(f"{title}: total momentum drift (world frame, L about the system CoM)")
    ax_l.semilogy(t, np.maximum(dl, _LOG_FLOOR))
    ax_l.set_ylabel("|L - L(0)| (kg m^2/s)")
    ax_l.set_xlabel("time (s)")
    for ax in (ax_p, ax_l):
        ax.grid(True)
    paths.append(_save(figure, out / PLOT_NAMES[3]))
    return paths
