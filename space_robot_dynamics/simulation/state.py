"""Simulation state on the Pinocchio configuration manifold, plus named auxiliary states.

x = (q, v, z): q (nq) and v (nv) follow `SystemModel.ordering()`; z is a flat vector of auxiliary
states integrated alongside (the energy dissipated by joint damping now; flexible-link modal
coordinates, motor angles of flexible joints later). Each auxiliary block is registered by name in an
`AuxLayout`, so adding one does not reshape the public API: `state.aux("dissipated_energy")`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class AuxLayout:
    """Name -> slice of the auxiliary state vector z."""

    def __init__(self):
        self._slices: dict[str, slice] = {}
        self.size = 0

    def add(self, name: str, size: int) -> slice:
        if name in self._slices:
            raise ValueError(f"auxiliary state {name!r} registered twice")
        block = slice(self.size, self.size + size)
        self._slices[name] = block
        self.size += size
        return block

    def __getitem__(self, name: str) -> slice:
        return self._slices[name]

    def names(self) -> list[str]:
        return list(self._slices)

    def __contains__(self, name: str) -> bool:
        return name in self._slices

    def extended(self, name: str, size: int) -> AuxLayout:
        """A new layout: this one's blocks, then `name` (states made with this layout keep it unchanged)."""
        layout = AuxLayout()
        for existing, block in self._slices.items():
            layout.add(existing, block.stop - block.start)
        layout.add(name, size)
        return layout


@dataclass
class SimState:
    """t (s), q (nq), v (nv), z (auxiliary). Arrays are owned by the state: copy() before keeping one."""

    t: float
    q: np.ndarray
    v: np.ndarray
    z: np.ndarray
    layout: AuxLayout = field(repr=False, default_factory=AuxLayout)

    def aux(self, name: str) -> np.ndarray:
        return self.z[self.layout[name]]

    def copy(self) -> SimState:
        return SimState(self.t, self.q.copy(), self.v.copy(), self.z.copy(), self.layout)
