"""Fit-versus-data and residual plots of an identification (PNG, matplotlib's object API on the Agg canvas).

fit_<problem>_<case>.png: per matched signal group, the data and the model at the start values and at the
estimate; residuals_<problem>_<case>.png: model minus data at the estimate, in the signals' units.
For the main method, on one dataset of each case: the first noisy one (noise seed), else the noise-free one.
"""
from __future__ import annotations

import re
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from space_robot_identification.identification_study import FittedProblem

_WIDTH, _ROW_HEIGHT, _DPI = 8.0, 2.8, 100
_MAX_LEGEND = 8          # components named in a panel's legend


def _groups(comparisons: list) -> dict:
    groups: dict[str, list] = {}
    for c in comparisons:
        groups.setdefault(c.group, []).append(c)
    return groups


def _figure(rows: int) -> tuple[Figure, list]:
    figure = Figure(figsize=(_WIDTH, _ROW_HEIGHT * rows + 0.6), dpi=_DPI)
    FigureCanvasAgg(figure)
    return figure, list(figure.subplots(rows, 1, sharex=True, squeeze=False)[:, 0])


def _save(figure: Figure, path: Path) -> Path:
    figure.tight_layout()
    figure.savefig(path, metadata={"Software": None})
    return path


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)


def plot_fit(fitted: FittedProblem, out_dir: Path) -> list[Path]:
    start = _groups(fitted.problem.comparisons(fitted.start))
    estimate = _groups(fitted.problem.comparisons(fitted.estimate))
    noise = "noise-free" if fitted.noise_seed is None else f"noise seed {fitted.noise_seed}"
    title = f"{fitted.role} {fitted.case} ({noise}, {fitted.method})"
    stem = f"{_safe(fitted.role)}_{_safe(fitted.case)}"

    figure, axes = _figure(len(estimate))
    for ax, (group, items) in zip(axes, estimate.items()):
        colours = [f"C{i % 10}" for i in range(len(items))]
        for colour, item, first in zip(colours, items, start[group]):
            label = item.name if len(items) <= _MAX_LEGEND else None
            ax.plot(item.t, item.data, color=colour, linestyle="none", marker=".", markersize=2, alpha=0.5)
            ax.plot(first.t, first.model, color=colour, linestyle="--", linewidth=0.8)
            ax.plot(item.t, item.model, color=colour, linewidth=1.2, label=label)
        ax.set_ylabel(f"{group} [{items[0].unit}]")
        ax.grid(True)
        if len(items) <= _MAX_LEGEND:
            ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
    axes[0].set_title(f"{title}: data (dots), model at the start (dashed) and at the estimate (solid)",
                      fontsize="small")
    axes[-1].set_xlabel("t [s]")
    fit_path = _save(figure, out_dir / f"fit_{stem}.png")

    figure, axes = _figure(len(estimate))
    for ax, (group, items) in zip(axes, estimate.items()):
        for i, item in enumerate(items):
            ax.plot(item.t, item.residual, color=f"C{i % 10}", linewidth=0.8,
                    label=item.name if len(items) <= _MAX_LEGEND else None)
        ax.set_ylabel(f"{group} [{items[0].unit}]")
        ax.grid(True)
        if len(items) <= _MAX_LEGEND:
            ax.legend(fontsize="x-small", loc="center left", bbox_to_anchor=(1.0, 0.5))
    axes[0].set_title(f"{title}: residual, model minus data, at the estimate", fontsize="small")
    axes[-1].set_xlabel("t [s]")
    return [fit_path, _save(figure, out_dir / f"residuals_{stem}.png")]
