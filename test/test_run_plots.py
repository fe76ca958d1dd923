"""The run's plots say what they show: limits labelled with short numbers, exact zeros explained rather than
drawn at an arbitrary floor, legends outside the curves, plots that do not apply left out."""
from __future__ import annotations

import numpy as np

from space_robot_runtime import run_plots
from space_robot_runtime.run_trace import RunTrace, TopicRoles


def trace_with(wheels: bool, drift: bool) -> RunTrace:
    trace = RunTrace(TopicRoles(), ("j1", "j2"), ("w1",) if wheels else ())
    for k in range(50):
        t = 0.01 * k
        trace.arm_positions.add(t, np.array([0.1 * t, -0.2 * t]))
        if wheels:
            trace.wheel_speeds.add(t, np.array([3.0 * t]))
        trace.bus_orientation.add(t, np.array([0.0, 0.0, np.sin(1e-4 * t), np.cos(1e-4 * t)]))
        trace.momentum_linear.add(t, np.array([1e-15 * k if drift else 0.0, 0.0, 0.0]))
        trace.momentum_angular.add(t, np.zeros(3))
    return trace


def figures_of(monkeypatch, tmp_path, trace, **kwargs) -> dict:
    kept = {}

    def keep(figure, path):
        kept[path.name] = figure
        return path
    monkeypatch.setattr(run_plots, "_save", keep)
    run_plots.plot_run(trace, tmp_path, "demo", **kwargs)
    return kept


def test_a_huge_limit_keeps_titles_short_and_limits_are_labelled(monkeypatch, tmp_path):
    figures = figures_of(monkeypatch, tmp_path, trace_with(wheels=True, drift=True), attitude_limit=1e-3,
                         wheel_max_speed=1e300)
    title = figures["wheel_speeds.png"].axes[0].get_title()
    assert "1e+300" in title and len(title) < 120
    labels = figures["base_attitude.png"].axes[0].get_legend_handles_labels()[1]
    assert "requirement (0.0573 deg)" in labels


def notes(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in ax.texts] + ([t.get_text() for t in legend.get_texts()] if legend else [])


def test_exact_zero_drift_is_said_not_drawn_at_a_floor(monkeypatch, tmp_path):
    figures = figures_of(monkeypatch, tmp_path, trace_with(wheels=False, drift=False))
    linear, angular = figures["momentum_drift.png"].axes
    assert notes(angular) == ["exactly 0 at every sample"]
    assert not angular.lines                              # nothing drawn at 1e-18 pretending to be data
    figures = figures_of(monkeypatch, tmp_path, trace_with(wheels=False, drift=True))
    linear = figures["momentum_drift.png"].axes[0]
    assert notes(linear) == ["exactly 0 at 1 of 50 samples (not drawn on the log axis)"]


def test_the_zero_count_note_does_not_cover_the_curve(monkeypatch, tmp_path):
    """The note sat at the top left of the axes, over a drift that starts high (momentum_drift.png of the demo)."""
    trace = trace_with(wheels=False, drift=False)
    trace.momentum_linear = type(trace.momentum_linear)()
    for k in range(50):
        trace.momentum_linear.add(0.01 * k, np.array([0.0 if k % 7 == 0 else 1e-12 / (1 + k), 0.0, 0.0]))
    figure = figures_of(monkeypatch, tmp_path, trace)["momentum_drift.png"]
    figure.canvas.draw()
    linear = figure.axes[0]
    note = linear.get_legend().get_window_extent()
    points = linear.lines[0].get_transform().transform(linear.lines[0].get_xydata())
    assert not note.count_contains(points), "the note covers the curve"


def test_the_joint_legend_is_outside_the_axes(monkeypatch, tmp_path):
    figures = figures_of(monkeypatch, tmp_path, trace_with(wheels=True, drift=True))
    legend = figures["joint_angles.png"].axes[0].get_legend()
    anchor = legend.get_bbox_to_anchor().transformed(figures["joint_angles.png"].axes[0].transAxes.inverted())
    assert anchor.x0 >= 1.0                                # to the right of the plotting area


def test_plots_that_do_not_apply_are_not_drawn(monkeypatch, tmp_path):
    figures = figures_of(monkeypatch, tmp_path, trace_with(wheels=False, drift=True), momentum_conserved=False)
    assert sorted(figures) == ["base_attitude.png", "joint_angles.png"]
