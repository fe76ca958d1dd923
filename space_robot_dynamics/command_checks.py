"""Validation of numeric vectors that arrive at run time (commands, states, setpoints).

One place for the rule "wrong length, NaN/inf or non-numeric input is rejected with a message that
names the field": `checked_vector(x, size, "arm_torque")`, or its two halves where a caller screens several
vectors at once (`numeric_vector` for type and length, `require_finite` for NaN/inf).
"""
from __future__ import annotations

import math

import numpy as np

from .errors import CommandError


def numeric_vector(x, size: int | None, field: str) -> np.ndarray:
    """`x` as a float64 vector of `size` entries (any size if None), finiteness not yet checked; CommandError
    naming `field` otherwise. A float64 ndarray is taken as it is (the usual caller's case: no copy)."""
    if not (type(x) is np.ndarray and x.dtype == np.float64):
        try:
            x = np.asarray(x, dtype=float)
        except (TypeError, ValueError) as exc:
            raise CommandError(field, f"not a numeric vector: {exc}") from exc
    if x.ndim != 1 or (size is not None and x.shape[0] != size):
        expected = "a vector" if size is None else f"{size} values"
        raise CommandError(field, f"expected {expected}, got shape {x.shape}")
    return x


def all_finite(x: np.ndarray) -> bool:
    """True if every entry of the float vector x is finite. A NaN or an infinity makes the sum of the entries as
    Python floats NaN or infinite (nothing finite cancels it), so a finite sum proves x finite at the cost of one
    dot product; only a non-finite sum (a bad entry, or huge finite entries whose sum overflows) needs numpy's
    element test. Python floats overflow silently: huge values raise no RuntimeWarning on the way."""
    return (x.ndim == 1 and math.isfinite(sum(x.tolist()))) or bool(np.isfinite(x).all())


def require_finite(*named: tuple[np.ndarray, str]) -> None:
    """CommandError naming the first of the (vector, field) pairs that holds a NaN or an infinity."""
    for x, field in named:
        if not all_finite(x):
            raise CommandError(field, f"non-finite values at indices {np.flatnonzero(~np.isfinite(x)).tolist()}")


def checked_vector(x, size: int | None, field: str) -> np.ndarray:
    """`x` as a float64 vector of `size` finite entries (any size if None), or CommandError naming `field`."""
    x = numeric_vector(x, size, field)
    require_finite((x, field))
    return x
