"""A model output next to the data it is matched against, for the fit and residual plots."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SignalComparison:
    """name: the matched signal (e.g. momentum.linear.x); unit: SI; group: the configured signal it belongs to
    (one plot panel per group); t (s); model and data at t; weight: the configured one."""

    name: str
    group: str
    unit: str
    t: np.ndarray
    model: np.ndarray
    data: np.ndarray
    weight: float

    @property
    def residual(self) -> np.ndarray:
        return self.model - self.data
