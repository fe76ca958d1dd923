"""Windows of simulated time [start, end) (s): a sensor's outages, a pose sensor's dropouts."""
from __future__ import annotations

from dataclasses import dataclass

from space_robot_dynamics.config_reader import ConfigReader, check_number


@dataclass(frozen=True)
class TimeWindows:
    windows: tuple[tuple[float, float], ...] = ()

    def contains(self, t: float) -> bool:
        return any(start <= t < end for start, end in self.windows)

    def added(self, start: float, end: float) -> TimeWindows:
        return TimeWindows(tuple(sorted((*self.windows, (start, end)))))


def read_windows(reader: ConfigReader, key: str) -> TimeWindows:
    """`key`: a list of [start, end] pairs (s, 0 <= start < end)."""
    items = reader.raw(key, [])
    if not isinstance(items, list):
        raise reader.error(key, f"must be a list of [start, end] pairs (s), got {items!r}")
    windows = []
    for i, item in enumerate(items):
        field = f"{reader.field(key)}[{i}]"
        if not (isinstance(item, list) and len(item) == 2):
            raise reader.error(f"{key}[{i}]", f"must be a pair [start, end] (s), got {item!r}")
        start = check_number(item[0], f"{field}[0]", reader.source, minimum=0.0)
        end = check_number(item[1], f"{field}[1]", reader.source)
        if not end > start:
            raise reader.error(f"{key}[{i}]", f"must end after it starts, got [{start}, {end}]")
        windows.append((start, end))
    return TimeWindows(tuple(sorted(windows)))
