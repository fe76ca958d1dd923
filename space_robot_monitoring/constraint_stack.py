"""Velocity constraints C(q) v = 0 stacked from several sources (seed 004 eq. 2.34: [J; B] theta_dot = [0; c0]).

A constraint source has `rows` (int), `matrix(q)` -> (rows x nv), `derivative(q, u)` -> (rows x nv),
the derivative d/de C(q (+) e u) along the Pinocchio velocity u, and `kernel_derivative(q, u)`, a matrix
that equals derivative(q, u) when u and the vectors it is applied to satisfy the whole stack's constraint
(what the mechanical connection needs; it may be cheaper), and `kernel_derivatives(q, directions)`, the same
for every column u_i of directions (nv x k), side by side -> (rows, k nv), block i = kernel_derivative(q, u_i).
See momentum_matrices.CentroidalMomentum, contact_constraint.WeldConstraint and contact_constraint.MomentumAndWeld.
"""
from __future__ import annotations

import numpy as np


class ConstraintStack:
    """Rows of several constraint sources, in the order given."""

    def __init__(self, sources: list):
        if not sources:
            raise ValueError("a constraint stack needs at least one source")
        self.sources = list(sources)
        self.rows = sum(s.rows for s in self.sources)
        if len(self.sources) == 1:      # the source's own methods, bound: no stacking, one call less per use
            self.matrix = self.sources[0].matrix
            self.derivative = self.sources[0].derivative
            self.kernel_derivatives = self.sources[0].kernel_derivatives

    def matrix(self, q: np.ndarray) -> np.ndarray:
        return np.vstack([s.matrix(q) for s in self.sources])

    def derivative(self, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        return np.vstack([s.derivative(q, u) for s in self.sources])

    def kernel_derivatives(self, q: np.ndarray, directions: np.ndarray) -> np.ndarray:
        return np.concatenate([s.kernel_derivatives(q, directions) for s in self.sources])
