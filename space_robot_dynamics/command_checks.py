"""Validation of numeric vectors that arrive at run time (commands, states, setpoints).

One place for the rule "wrong length, NaN/inf or non-numeric input is rejected with a message that
names the field": `checked_vector(x, size, "arm_torque")`.
"""
from __future__ import annotations

import numpy as np

from .errors import CommandError


def checked_vector(x, size: int | None, field: str) -> np.ndarray:
    """`x` as a float64 vector of `size` finite entries (any size if None), or CommandError naming `field`."""
    if not (type(x) is np.ndarray and x.dtype == np.float64):   # fast path for the usual caller
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as exc:
            raise CommandError(field, f"not a numeric vector: {exc}") from exc
    if x.ndim != 1 or (size is not None and x.shape[0] != size):
        expected = "a vector" if size is None else f"{size} values"
        raise CommandError(field, f"expected {expected}, got shape {x.shape}")
    if not np.isfinite(x).all():
        bad = np.flatnonzero(~np.isfinite(x)).tolist()
        raise CommandError(field, f"non-finite values at indices {bad}")
    return x
