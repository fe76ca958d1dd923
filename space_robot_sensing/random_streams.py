"""One random stream per sensor, from the suite's seed and the sensor's name.

A stream keyed by name (not by the order sensors are built in) keeps a sensor's noise the same when another sensor
is added, removed or reordered in the YAML, and two sensors never share draws. NumPy's SeedSequence spawn keys
give statistically independent PCG64 streams; CRC-32 of the name is a stable key (Python's hash() is salted per
process).
"""
from __future__ import annotations

import zlib

import numpy as np


def sensor_stream(seed: int, name: str) -> np.random.Generator:
    """The generator of sensor `name` under suite seed `seed` (an integer >= 0)."""
    key = zlib.crc32(name.encode("utf-8"))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(key,))))
