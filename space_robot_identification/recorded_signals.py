"""Recorded signals: named time series read from a bag or a CSV file, or made by a simulation.

Names (the same whatever the source, so a configuration works on a bag and on a CSV export of it):
- sensor_msgs/JointState on topic T: `T.position.<joint>` (rad), `T.velocity.<joint>` (rad/s),
  `T.effort.<joint>` (N m);
- nav_msgs/Odometry on T: `T.position.{x,y,z}` (m, world), `T.orientation.{x,y,z,w}` (child -> world),
  `T.linear_velocity.{x,y,z}` (m/s) and `T.angular_velocity.{x,y,z}` (rad/s), both in the child frame;
- geometry_msgs/Vector3Stamped on T: `T.{x,y,z}`;
- a CSV file: one column per signal under these names, and a time column `t` (s).
Times are seconds from the first sample of the recording (any signal), so a time window means the same on a
bag recorded in simulated time (starting at 0) and on one recorded live (stamped in seconds since 1970).
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

import numpy as np

from space_robot_dynamics.errors import ConfigError


@dataclass
class RecordedSignals:
    """series: name -> (t (s, increasing, from the recording's first sample), values); source names the data
    in error messages."""

    series: dict = field(default_factory=dict)
    source: str = "<signals>"

    def names(self) -> list[str]:
        return sorted(self.series)

    def has(self, name: str) -> bool:
        return name in self.series

    def times(self, name: str) -> np.ndarray:
        return self.series[name][0]

    def values(self, name: str) -> np.ndarray:
        return self.series[name][1]

    def end_time(self) -> float:
        """The last sample time of the shortest signal (s): the whole recording covers [0, end_time]."""
        return min((float(t[-1]) for t, _ in self.series.values() if len(t)), default=0.0)

    def require(self, name: str, field_name: str, source: str | None = None) -> None:
        """ConfigError naming `field_name` when the data has no signal `name`."""
        if name in self.series:
            return
        close = difflib.get_close_matches(name, self.names(), n=3, cutoff=0.6)
        hint = f"; close: {close}" if close else f"; it has {len(self.series)} signals, e.g. {self.names()[:6]}"
        raise ConfigError(field_name, f"signal {name!r} is not in the data ({self.source}){hint}", source)

    def sampled(self, name: str, times: np.ndarray, field_name: str, source: str | None = None) -> np.ndarray:
        """`name` at `times` (s): its own values where the times coincide with its samples, linear interpolation
        between samples otherwise; a time outside the signal's span is a ConfigError naming `field_name`."""
        self.require(name, field_name, source)
        t, values = self.series[name]
        times = np.asarray(times, float)
        if len(t) == 0 or times[0] < t[0] - 1e-9 or times[-1] > t[-1] + 1e-9:
            span = f"[{t[0]:.6g}, {t[-1]:.6g}] s" if len(t) else "no samples"
            raise ConfigError(field_name, f"signal {name!r} covers {span}, not [{times[0]:.6g}, {times[-1]:.6g}] s "
                                          f"(the time window)", source)
        if len(t) == len(times) and np.array_equal(t, times):
            return values.copy()
        return np.interp(times, t, values)

    def with_series(self, name: str, t: np.ndarray, values: np.ndarray) -> None:
        self.series[name] = (np.asarray(t, float), np.asarray(values, float))

    def copy(self) -> RecordedSignals:
        return RecordedSignals({k: (t, v.copy()) for k, (t, v) in self.series.items()}, self.source)


def window_times(times: np.ndarray, start: float, end: float, name: str = "", source: str | None = None
                 ) -> np.ndarray:
    """The sample times within [start, end] (s), with a 1e-9 s allowance for round-off in the stamps. The
    samples must reach the window's end: ConfigError naming window.end (and the signal `name`) otherwise."""
    times = np.asarray(times, float)
    if len(times) == 0 or times[-1] < end - 1e-9:
        last = f"{times[-1]:.6g} s" if len(times) else "its start (no samples)"
        raise ConfigError("window.end", f"is {end:.6g} s but the data ends at {last}"
                          + (f" (signal {name!r})" if name else "") + ": shorten the window or give longer data",
                          source)
    return times[(times >= start - 1e-9) & (times <= end + 1e-9)]
