"""The constant linear map between the reduced and the full coordinates of an expanded model
(docs/flexibility.md eqs. 14-15).

Full velocity v_f (the Pinocchio model's nv) = T v_r. The reduced coordinates are every full coordinate but the
dependent ones (the tip chains); T is the identity on them and, on a dependent coordinate d,
v_d = sum_s S[d, s] v_s over a few source coordinates (the modal joints), the same for q (all these joints are
one-DOF Euclidean ones, q = angle or displacement). A model without dependent coordinates has T = 1.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin


class CoordinateMap:
    """`rows`: dependent joint name -> {source joint name: coefficient} (FlexibleLink.tip_rows)."""

    def __init__(self, model: pin.Model, rows: dict):
        def joint(name: str):
            return model.joints[model.getJointId(name)]

        dependent = list(rows)
        sources = sorted({s for row in rows.values() for s in row}, key=lambda n: joint(n).idx_v)
        self.nv = model.nv
        self.dependent_names = tuple(dependent)
        self.dependent_v = np.array([joint(n).idx_v for n in dependent], dtype=int)
        self.dependent_q = np.array([joint(n).idx_q for n in dependent], dtype=int)
        self.source_v = np.array([joint(n).idx_v for n in sources], dtype=int)
        self.source_q = np.array([joint(n).idx_q for n in sources], dtype=int)
        self.S = np.zeros((len(dependent), len(sources)))          # dependent <- sources
        position = {n: k for k, n in enumerate(sources)}
        for d, name in enumerate(dependent):
            for source, coefficient in rows[name].items():
                self.S[d, position[source]] = coefficient
        mask = np.ones(model.nv, dtype=bool)
        mask[self.dependent_v] = False
        self.independent_v = np.flatnonzero(mask)                # reduced coordinate k = full index independent_v[k]
        self.nr = len(self.independent_v)
        self.T = np.zeros((model.nv, self.nr))
        self.T[self.independent_v, np.arange(self.nr)] = 1.0
        reduced_of = np.full(model.nv, -1)
        reduced_of[self.independent_v] = np.arange(self.nr)
        self.T[np.ix_(self.dependent_v, reduced_of[self.source_v])] = self.S

    @property
    def trivial(self) -> bool:
        """True when T is the identity (no dependent coordinates)."""
        return len(self.dependent_v) == 0

    def project(self, q: np.ndarray, v: np.ndarray | None = None) -> None:
        """Set the dependent entries of q (and v) from their sources, in place (eq. 14)."""
        if len(self.dependent_v):
            q[self.dependent_q] = self.S @ q[self.source_q]
            if v is not None:
                v[self.dependent_v] = self.S @ v[self.source_v]

    def expand(self, v_reduced: np.ndarray) -> np.ndarray:
        """T v_r (eq. 15)."""
        return self.T @ v_reduced

    def reduce_force(self, tau_full: np.ndarray) -> np.ndarray:
        """T^T tau_f: the generalized force on the reduced coordinates (eq. 16)."""
        return self.T.T @ tau_full
