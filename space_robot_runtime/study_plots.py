"""Figures of the thesis studies (study_run.py), drawn like run_plots.py's: matplotlib's object API on the Agg
canvas, no display, no version string in the files (identical bytes across runs)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

_WIDTH, _ROW_HEIGHT, _DPI = 8.0, 2.6, 100


def _figure(rows: int, title: str):
    figure = Figure(figsize=(_WIDTH, _ROW_HEIGHT * rows + 0.6), dpi=_DPI)
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]
    figure.suptitle(title)
    return figure, axes


def _lines(ax, t, values, labels, ylabel):
    for k, label in enumerate(labels):
        ax.plot(t, values[:, k], label=label, linewidth=1.0)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize="small", ncol=min(len(labels), 6))


def _settling(axes, summary):
    for ax in axes:
        if summary.get("settling_time_s") is not None:
            ax.axvline(summary["settling_time_s"], color="k", linestyle="--", linewidth=0.8)
        ax.axvline(summary["thesis_settling_time_s"], color="r", linestyle=":", linewidth=0.8)


def _save(figure: Figure, axes, path: Path) -> Path:
    axes[-1].set_xlabel("time (s)   [dashed: settling time; dotted red: the thesis's]")
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})
    return path


def plot_force_motion(result, out: Path, name: str, summary: dict) -> list[Path]:
    """tracking_errors.png (joints, base attitude), contact_force.png (force error, contact torque),
    inputs.png (joint torques, base thrust and torque), velocities.png (base and target, world axes, linear ones
    relative to the initial common translation: the thesis's Figs. 6.1, 6.2, 6.6, 6.7)."""
    s, t = result.series, result.series["t"]
    joints = [f"joint {i + 1}" for i in range(s["joint_error"].shape[1])]
    paths = []
    figure, axes = _figure(2, f"{name}: tracking errors")
    _lines(axes[0], t, s["joint_error"], joints, "q_d - q (rad; m)")
    _lines(axes[1], t, s["attitude_error"], ["x", "y", "z"], "base attitude (rad)")
    _settling(axes, summary)
    paths.append(_save(figure, axes, out / "tracking_errors.png"))
    figure, axes = _figure(2, f"{name}: contact wrench on the target (hand frame)")
    _lines(axes[0], t, s["force_error"], ["x", "y", "z"], "f - f_d (N)")
    _lines(axes[1], t, s["contact_torque"], ["x", "y", "z"], "torque (N m)")
    _settling(axes, summary)
    paths.append(_save(figure, axes, out / "contact_force.png"))
    figure, axes = _figure(3, f"{name}: realized inputs")
    _lines(axes[0], t, s["joint_torque"], joints, "joint (N m; N)")
    _lines(axes[1], t, s["base_force"], ["x", "y", "z"], "base force (N)")
    _lines(axes[2], t, s["base_torque"], ["x", "y", "z"], "base torque (N m)")
    paths.append(_save(figure, axes, out / "inputs.png"))
    figure, axes = _figure(4, f"{name}: base and target velocities (world axes)")
    xyz = ["x", "y", "z"]
    _lines(axes[0], t, s["base_velocity"] - s["base_velocity"][0], xyz, "base v - v(0) (m/s)")
    _lines(axes[1], t, s["base_angular_velocity"], xyz, "base w (rad/s)")
    _lines(axes[2], t, s["target_velocity"] - s["target_velocity"][0], xyz, "target v - v(0) (m/s)")
    _lines(axes[3], t, s["target_angular_velocity"], xyz, "target w (rad/s)")
    _settling(axes, summary)
    paths.append(_save(figure, axes, out / "velocities.png"))
    return paths


def plot_adaptive(result, out: Path, name: str, summary: dict) -> list[Path]:
    """plot_force_motion's figures plus estimates.png (each estimated parameter over its true value) and
    lyapunov.png (V of eq. 7.12)."""
    paths = plot_force_motion(result, out, name, summary)
    s, t = result.series, result.series["t"]
    ratio = s["estimate_ratio"]
    figure, axes = _figure(2, f"{name}: estimates of the target's parameters and Lyapunov function")
    # "target/target_base_joint.I_xx" -> "I_xx": the body is in the title, the legend must fit the axes
    _lines(axes[0], t, ratio, [label.rsplit(".", 1)[-1] for label in result.summary["estimated_parameters"]],
           "estimate / true")
    axes[1].semilogy(t, np.maximum(s["lyapunov"], 1e-300), linewidth=1.0)
    axes[1].set_ylabel("V (eq. 7.12)")
    axes[1].grid(True, alpha=0.3)
    _settling(axes, summary)
    paths.append(_save(figure, axes, out / "estimates.png"))
    return paths
