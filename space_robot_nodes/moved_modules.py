"""The modules that moved from space_robot_nodes to space_robot_scenario, kept importable from their old paths for
one release: importing an old path warns (DeprecationWarning) and its names come from the new modules."""
from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable

REMOVED_IN = "the release after 0.1"


def forwarding(old: str, new: tuple[str, ...]) -> Callable[[str], object]:
    """Warn that module `old` moved, and return a module __getattr__ that finds each name in the `new` modules."""
    warnings.warn(f"{old} moved to {new[0]}: import from there ({old} will be removed in {REMOVED_IN})",
                  DeprecationWarning, stacklevel=3)

    def __getattr__(name: str) -> object:
        for module in new:
            value = getattr(importlib.import_module(module), name, _MISSING)
            if value is not _MISSING:
                return value
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


_MISSING = object()
