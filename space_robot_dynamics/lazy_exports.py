"""Public names of a package imported on first use (PEP 562 module __getattr__).

`import space_robot_dynamics` must stay cheap (tools and the ROS launch files import the packages for one
name), while `space_robot_dynamics.Simulator` should work without knowing the submodule: each package's
__init__ maps its public names to the submodules that define them, and the first access imports that submodule
(Pinocchio, SciPy and the rest come with it) and keeps the name on the package.
"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """(__getattr__, __dir__) for `package`, whose public names `exports` maps to the submodules defining them,
    relative to the package (".simulation.simulator")."""

    def __getattr__(name: str) -> object:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)      # later accesses are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(exports))

    return __getattr__, __dir__
