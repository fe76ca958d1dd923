"""The reference orbit: the point the LVLH frame follows, in Earth-centred inertial (ECI) axes (docs/orbit.md sec. 2).

- From the elements (a, e, i, RAAN, argument of perigee omega, argument of latitude u at t = 0): the perifocal
  position p / (1 + e cos nu) (cos nu, sin nu, 0) and velocity sqrt(mu / p) (-sin nu, e + cos nu, 0), nu = u - omega,
  p = a (1 - e^2), turned to ECI by R3(-RAAN) R1(-i) R3(-omega) (Vallado 2013, algorithm 10, COE2RV).
- Without J2, at any t by Kepler's equation: M = M0 + n t, E - e sin E = M (Newton's iteration to round-off),
  then the perifocal state at the true anomaly of E (Vallado 2013, algorithm 8 and eq. 2-xx of sec. 2.2).
- With J2, by numerical integration (SciPy's DOP853, rtol 1e-13) of the central body's gravity
  (central_body_gravity.py), carried forward between calls.
The simulator does not call state(t) on its step path: it integrates the reference orbit with the multibody state,
by the same integrator (simulation/orbital_environment.py); state(t) serves the other places that need the frame at
an instant (the monitor, tests) and checks that integration.
"""
from __future__ import annotations

import math

import numpy as np

from .central_body_gravity import j2_acceleration, point_mass
from .orbit_config import OrbitConfig

POLE = np.array([0.0, 0.0, 1.0])        # the central body's spin axis, ECI
KEPLER_TOLERANCE = 1e-15                # rad, Newton's iteration on E stops below this correction
_J2_RTOL, _J2_ATOL = 1e-13, 1e-9        # DOP853 tolerances (relative; m and m/s)


def _rotation_z(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _rotation_x(angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def gravity(config: OrbitConfig, r: np.ndarray, pole: np.ndarray = POLE) -> np.ndarray:
    """The central body's gravity at r (point mass, plus J2 when the config turns it on), axes of r and pole."""
    a = point_mass(r, config.gravitational_parameter)
    if config.j2:
        a = a + j2_acceleration(r, config.gravitational_parameter, config.equatorial_radius, config.j2_coefficient,
                                pole)
    return a


class ReferenceOrbit:
    """The reference orbit of an OrbitConfig: initial state, state(t), and its LVLH frame."""

    def __init__(self, config: OrbitConfig):
        self.config = config
        a, e = config.semi_major_axis, config.eccentricity
        self._perifocal_to_eci = _rotation_z(config.raan) @ _rotation_x(config.inclination) @ \
            _rotation_z(config.argument_of_perigee)
        self._p = a * (1.0 - e * e)
        nu0 = config.argument_of_latitude - config.argument_of_perigee
        big_e0 = 2.0 * math.atan2(math.sqrt(1.0 - e) * math.sin(0.5 * nu0), math.sqrt(1.0 + e) * math.cos(0.5 * nu0))
        self._mean_anomaly0 = big_e0 - e * math.sin(big_e0)
        self.r0, self.v0 = self._at_true_anomaly(nu0)
        self._j2_state = (0.0, np.concatenate((self.r0, self.v0)))    # (t, [r, v]) the J2 integration reached

    def _at_true_anomaly(self, nu: float) -> tuple[np.ndarray, np.ndarray]:
        e, mu, p = self.config.eccentricity, self.config.gravitational_parameter, self._p
        radius = p / (1.0 + e * math.cos(nu))
        r = radius * np.array([math.cos(nu), math.sin(nu), 0.0])
        v = math.sqrt(mu / p) * np.array([-math.sin(nu), e + math.cos(nu), 0.0])
        return self._perifocal_to_eci @ r, self._perifocal_to_eci @ v

    def state(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        """(r, v) of the reference point at time t (s), ECI (m, m/s)."""
        if self.config.j2:
            return self._integrated(t)
        e = self.config.eccentricity
        mean = self._mean_anomaly0 + self.config.mean_motion * t
        big_e = mean if e < 0.8 else math.pi
        for _ in range(50):
            step = (big_e - e * math.sin(big_e) - mean) / (1.0 - e * math.cos(big_e))
            big_e -= step
            if abs(step) < KEPLER_TOLERANCE:
                break
        nu = 2.0 * math.atan2(math.sqrt(1.0 + e) * math.sin(0.5 * big_e), math.sqrt(1.0 - e) * math.cos(0.5 * big_e))
        return self._at_true_anomaly(nu)

    def _integrated(self, t: float) -> tuple[np.ndarray, np.ndarray]:
        t0, y0 = self._j2_state
        if t < t0:                          # backwards: from the start again (the state is kept only forwards)
            t0, y0 = 0.0, np.concatenate((self.r0, self.v0))
        if t > t0:
            # imported here: scipy.integrate costs every run's start-up ~0.15 s, and only J2 needs it
            from scipy.integrate import solve_ivp

            config = self.config
            solution = solve_ivp(lambda _t, y: np.concatenate((y[3:], gravity(config, y[:3]))), (t0, t), y0,
                                 method="DOP853", rtol=_J2_RTOL, atol=_J2_ATOL)
            y0 = solution.y[:, -1]
            self._j2_state = (t, y0)
        return y0[:3].copy(), y0[3:].copy()


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b of two 3-vectors: numpy.cross's arithmetic (the same products and differences, bit for bit) without its
    generality, which costs ~10 us a call (this ~1 us; the LVLH view runs at every published instant)."""
    return np.array((a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]))


def lvlh_axes(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The LVLH (Hill) axes of the state (r, v) as the columns of a rotation matrix, in the axes of r and v:
    x radial (away from the central body), z along the orbit's angular momentum r x v, y = z x x (along the velocity
    for a circular orbit). docs/orbit.md sec. 2."""
    x = r / np.linalg.norm(r)
    h = cross(r, v)
    z = h / np.linalg.norm(h)
    return np.column_stack((x, cross(z, x), z))


def lvlh_rate(r: np.ndarray, v: np.ndarray, a: np.ndarray, axes: np.ndarray | None = None) -> np.ndarray:
    """Angular velocity (rad/s) of the LVLH axes of (r, v) under the acceleration a, in the axes of r:
    omega = (|h| / |r|^2) z + (|r| (a.z) / |h|) x (Casotto 1993, eq. 24): a central force turns the frame about its
    orbit normal only; J2's out-of-plane pull also turns it about the radial axis (the plane's precession). `axes`:
    lvlh_axes(r, v) when the caller has them."""
    axes = lvlh_axes(r, v) if axes is None else axes
    h = np.linalg.norm(cross(r, v))
    radius = np.linalg.norm(r)
    return (h / radius ** 2) * axes[:, 2] + (radius * float(a @ axes[:, 2]) / h) * axes[:, 0]
