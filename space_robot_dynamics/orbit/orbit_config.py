"""A scenario's `orbit:` section, validated at load (docs/orbit.md sec. 1).

orbit:
  central_body:                       # default: the Earth (EGM2008 / WGS-84 values, Vallado 2013 app. D)
    gravitational_parameter: 3.986004418e14   # mu, m^3/s^2
    equatorial_radius: 6378137.0              # R_e, m
    j2: 1.08262668e-3                         # J2, dimensionless
  altitude: 770000.0            # m above R_e, for a circular orbit (a = R_e + altitude); or:
  semi_major_axis: 7148137.0    # m (either this or altitude, not both)
  eccentricity: 0.0             # [0, 0.5); the perigee must clear the central body by PERIGEE_MARGIN
  inclination_deg: 98.5         # [0, 180]
  raan_deg: 0.0                 # right ascension of the ascending node
  argument_of_perigee_deg: 0.0
  argument_of_latitude_deg: 0.0 # u = argument of perigee + true anomaly, at t = 0
  j2: false                     # the J2 zonal term on every body and on the reference orbit

Angles are given in degrees, as orbital elements are published, and named so; they are kept in radians.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..config_reader import ConfigReader

EARTH_MU = 3.986004418e14          # m^3/s^2 (EGM2008)
EARTH_RADIUS = 6378137.0           # m (WGS-84 equatorial)
EARTH_J2 = 1.08262668e-3           # (EGM2008 C20 unnormalized, sign changed)
# m: the perigee must be at least this far above the equatorial radius (below ~100 km the atmosphere, which the model
# does not have, would decide the motion)
PERIGEE_MARGIN = 100000.0
MAX_ECCENTRICITY = 0.5             # elliptical orbits to 0.5: far beyond servicing orbits, still well conditioned


@dataclass(frozen=True)
class OrbitConfig:
    """The reference orbit (SI; angles in rad) and the central body. `j2`: whether the J2 term acts."""

    semi_major_axis: float                 # m
    eccentricity: float = 0.0
    inclination: float = 0.0               # rad
    raan: float = 0.0                      # rad
    argument_of_perigee: float = 0.0       # rad
    argument_of_latitude: float = 0.0      # rad, at t = 0
    j2: bool = False
    gravitational_parameter: float = EARTH_MU
    equatorial_radius: float = EARTH_RADIUS
    j2_coefficient: float = EARTH_J2

    @property
    def mean_motion(self) -> float:
        """n = sqrt(mu / a^3) (rad/s)."""
        return math.sqrt(self.gravitational_parameter / self.semi_major_axis ** 3)

    @property
    def period(self) -> float:
        """2 pi / n (s)."""
        return 2.0 * math.pi / self.mean_motion


def read_orbit(reader: ConfigReader) -> OrbitConfig:
    """OrbitConfig from an `orbit:` mapping; ConfigError naming the field otherwise."""
    body = reader.sub("central_body", {})
    mu = body.number("gravitational_parameter", EARTH_MU, exclusive_minimum=0.0)
    radius = body.number("equatorial_radius", EARTH_RADIUS, exclusive_minimum=0.0)
    j2_coefficient = body.number("j2", EARTH_J2, minimum=0.0, maximum=0.1)
    body.reject_unknown()
    if reader.has("altitude") == reader.has("semi_major_axis"):
        raise reader.error("altitude", "give the orbit's size as exactly one of `altitude` (m above the central "
                                       "body's equatorial radius) and `semi_major_axis` (m)")
    if reader.has("altitude"):
        a = radius + reader.number("altitude", minimum=PERIGEE_MARGIN, maximum=1.0e9)
        size_key = "altitude"
    else:
        a = reader.number("semi_major_axis", exclusive_minimum=radius, maximum=1.0e10)
        size_key = "semi_major_axis"
    e = reader.number("eccentricity", 0.0, minimum=0.0, maximum=MAX_ECCENTRICITY)
    if a * (1.0 - e) < radius + PERIGEE_MARGIN:
        raise reader.error(size_key, f"the perigee, {a * (1.0 - e) - radius:.6g} m above the equatorial radius, "
                                     f"must be at least {PERIGEE_MARGIN:.6g} m above it (a = {a:.6g} m, e = {e:g})")
    angles = {key: math.radians(reader.number(f"{key}_deg", 0.0, minimum=low, maximum=high))
              for key, low, high in (("inclination", 0.0, 180.0), ("raan", -360.0, 360.0),
                                     ("argument_of_perigee", -360.0, 360.0), ("argument_of_latitude", -360.0, 360.0))}
    config = OrbitConfig(semi_major_axis=a, eccentricity=e, j2=reader.boolean("j2", False),
                         gravitational_parameter=mu, equatorial_radius=radius, j2_coefficient=j2_coefficient,
                         **angles)
    reader.reject_unknown()
    return config
