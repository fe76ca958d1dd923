"""PNG plots of a campaign: a histogram of each figure, and each figure against every numeric parameter.

matplotlib's object API on the Agg canvas (no display, no pyplot state), as space_robot_runtime.run_plots.
Successful runs are drawn in blue, the others in red (the histograms stack them); a figure's `success`
maximum, when the campaign gives one, is a dashed line.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .campaign_config import Campaign
from .result_table import scalar_parameter_columns

_DPI = 100
_PANEL = (3.6, 2.8)        # inches per scatter panel
_COLUMNS = 3               # scatter panels per row
_BINS = 30
_OK, _FAILED = "tab:blue", "tab:red"


def file_stem(figure: str) -> str:
    return figure.replace("/", "_")


def _save(figure: Figure, path: Path) -> Path:
    """Fixed margins instead of tight_layout, which draws every axis once more (half of the plotting time)."""
    figure.savefig(path, metadata={"Software": None})
    return path


def _finite(values) -> np.ndarray:
    return np.array([np.nan if v is None or not math.isfinite(v) else v for v in values], float)


def plot_report(campaign: Campaign, rows: dict, success: list[bool], directory: Path) -> list[Path]:
    """histogram-<figure>.png and scatter-<figure>.png for every figure with at least one value."""
    directory = Path(directory)
    ok = np.array(success, bool)
    columns = scalar_parameter_columns(campaign)
    limits = campaign.success or {}
    paths = []
    for name in campaign.figures:
        values = _finite(rows[name])
        present = np.isfinite(values)
        if not present.any():
            continue
        paths.append(_histogram(name, values, ok, present, limits.get(name), directory))
        if columns:
            paths.append(_scatter(campaign, name, values, ok, present, columns, rows, limits.get(name), directory))
    return paths


def _histogram(name: str, values, ok, present, limit, directory: Path) -> Path:
    figure = Figure(figsize=(6.4, 4.0), dpi=_DPI)
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    data = values[present]
    bins = np.linspace(data.min(), data.max(), _BINS + 1) if data.max() > data.min() else _BINS
    ax.hist([values[present & ok], values[present & ~ok]], bins=bins, stacked=True, color=[_OK, _FAILED],
            label=[f"success ({int((present & ok).sum())})", f"not a success ({int((present & ~ok).sum())})"])
    if limit is not None:
        ax.axvline(limit, color="k", linestyle="--", label=f"maximum {limit:g}")
    ax.set_xlabel(name)
    ax.set_ylabel("runs")
    missing = int((~present).sum())
    ax.set_title(f"{name}: {int(present.sum())} runs" + (f" ({missing} without a value)" if missing else ""))
    ax.legend(fontsize="small")
    figure.subplots_adjust(left=0.11, right=0.97, bottom=0.13, top=0.91)
    return _save(figure, directory / f"histogram-{file_stem(name)}.png")


def _scatter(campaign: Campaign, name: str, values, ok, present, columns, rows, limit, directory: Path) -> Path:
    n = len(columns)
    cols = min(_COLUMNS, n)
    nrows = math.ceil(n / cols)
    figure = Figure(figsize=(_PANEL[0] * cols, _PANEL[1] * nrows), dpi=_DPI)
    FigureCanvasAgg(figure)
    axes = figure.subplots(nrows, cols, squeeze=False, sharey=True).ravel()
    for ax, column in zip(axes, columns):
        x = _finite(rows[column])
        for mask, color, label in ((present & ok, _OK, "success"), (present & ~ok, _FAILED, "not a success")):
            if mask.any():
                ax.scatter(x[mask], values[mask], s=10, color=color, label=label, alpha=0.7)
        if limit is not None:
            ax.axhline(limit, color="k", linestyle="--", linewidth=1)
        base = column.split("[")[0]
        unit = campaign.parameter(base).unit if base in {p.name for p in campaign.parameters} else ""
        ax.set_xlabel(column + (f" ({unit})" if unit else ""), fontsize="small")
        ax.tick_params(labelsize="small")
    for ax in axes[::cols]:
        ax.set_ylabel(name, fontsize="small")
    for ax in axes[n:]:
        ax.set_visible(False)
    axes[0].legend(fontsize="small")
    figure.suptitle(f"{name} against the parameters")
    width, height = figure.get_size_inches()          # margins in inches: labels and title fit whatever the grid
    figure.subplots_adjust(left=0.8 / width, right=1 - 0.15 / width, bottom=0.6 / height, top=1 - 0.45 / height,
                           wspace=0.08, hspace=0.6)
    return _save(figure, directory / f"scatter-{file_stem(name)}.png")
