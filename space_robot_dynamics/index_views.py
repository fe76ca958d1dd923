"""Index sets as slices where they can be: indexing a NumPy array with a slice gives a view, cheaper than the
gather an index array costs, which matters on paths that run at the physics or control rate."""
from __future__ import annotations

import numpy as np


def contiguous_index(indices) -> slice | np.ndarray:
    """Integer indices as a slice when they are consecutive and increasing (or none), else as an index array."""
    indices = np.asarray(indices, dtype=int).reshape(-1)
    if len(indices) == 0:
        return slice(0, 0)
    if np.array_equal(indices, np.arange(indices[0], indices[0] + len(indices))):
        return slice(int(indices[0]), int(indices[0]) + len(indices))
    return indices
