"""The multibody system in orbit (docs/orbit.md): checked against Clohessy-Wiltshire, Kepler, the two-body integrals,
a cloud of point masses for the gravity gradient, the pitch libration frequency and the momentum balance.

Scales used by the bounds: r ~ 7.1e6 m (770 km altitude), n = 1.05e-3 rad/s, tidal accelerations n^2 d ~ 1e-6 m/s^2
per metre of separation d. RK4 at dt = 1 s has n dt = 1e-3, local error ~(n dt)^5 relative: ~1e-12 per orbit.
"""
import math

import numpy as np
import pinocchio as pin
import pytest
from orbit_models import base_state, free_bodies

from space_robot_dynamics.config_reader import ConfigReader
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import build_model
from space_robot_dynamics.orbit.lvlh_frame import FreeFlyerTransform, LvlhFrame
from space_robot_dynamics.orbit.orbit_config import EARTH_J2, EARTH_MU, EARTH_RADIUS, OrbitConfig, read_orbit
from space_robot_dynamics.orbit.reference_orbit import ReferenceOrbit
from space_robot_dynamics.orbit.tidal_wrenches import TidalWrenches
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

LEO = OrbitConfig(semi_major_axis=EARTH_RADIUS + 770e3, inclination=math.radians(98.5))
AT_REST = ([0.0, 0.0, 0.0, 1.0], np.zeros(3), np.zeros(3))


def cw_position(n, x0, v0, t):
    """Clohessy-Wiltshire closed form in Hill's frame (x radial, y along-track, z normal): Vallado 2013, eq. 6-66."""
    c, s = math.cos(n * t), math.sin(n * t)
    return np.array([(4 - 3 * c) * x0[0] + s / n * v0[0] + 2 / n * (1 - c) * v0[1],
                     6 * (s - n * t) * x0[0] + x0[1] - 2 / n * (1 - c) * v0[0] + (4 * s - 3 * n * t) / n * v0[1],
                     c * x0[2] + s / n * v0[2]])


def run_pair(system, separation, duration, dt=1.0):
    """Body 0 at the reference point, body 1 at `separation` times a fixed direction with a CW-sized relative
    velocity (both at rest in attitude); returns (CW prediction, simulated LVLH offset) after `duration`."""
    n = LEO.mean_motion
    x0 = separation * np.array([0.6, -0.5, 0.3])
    v0 = separation * n * np.array([0.2, 0.3, -0.4])
    q, v = base_state(system, {"body0": (np.zeros(3), *AT_REST),
                               "body1": (x0, [0.0, 0.0, 0.0, 1.0], v0, np.zeros(3))})
    sim = Simulator(system, SimulationSettings(dt=dt), q, v, orbit=LEO)
    for _ in range(int(round(duration / dt))):
        sim.step()
    bases = sim.observe().bases
    return cw_position(n, x0, v0, sim.state.t), bases["body1"].position - bases["body0"].position


@pytest.mark.slow
def test_relative_motion_matches_clohessy_wiltshire_and_the_error_shrinks_as_the_separation_squared(tmp_path):
    """CW is the first-order expansion of the tidal field in d / r; the neglected term is (3/2) d / r of it, so the
    error relative to d grows as d: ~1e-6 at d = 1 m after a quarter orbit (1500 s), x10 per decade of d. Bounds:
    1e-6 x d / (1 m) x 2, and the decade ratio within 5 % of 10 (it is 10.000 to 4 digits)."""
    system = free_bodies(tmp_path)
    errors = {}
    for d in (1.0, 10.0, 100.0):
        predicted, simulated = run_pair(system, d, 1500.0)
        errors[d] = float(np.linalg.norm(simulated - predicted)) / d
    assert errors[1.0] < 2e-6
    assert errors[10.0] / errors[1.0] == pytest.approx(10.0, rel=0.05)
    assert errors[100.0] / errors[10.0] == pytest.approx(10.0, rel=0.05)


def test_a_body_at_rest_at_the_reference_point_stays_there_and_drifts_as_cw_says_elsewhere(tmp_path):
    """At the reference point the tidal force is zero (to round-off); 1 m radially out, at rest in LVLH, the body
    follows x(t) = (4 - 3 cos nt) x0, y(t) = 6 (sin nt - nt) x0: 1.06 cm further out after 80 s (the centimetre in
    80 s that makes the orbit matter for a 2 cm grasp envelope), 0.6 mm behind. CW's own error, the second-order
    tidal term (3/2) x / r of that drift, is ~2e-9 m (1.5e-9 seen): bound 5e-9 m."""
    system = free_bodies(tmp_path)
    n = LEO.mean_motion
    q, v = base_state(system, {"body0": (np.zeros(3), *AT_REST), "body1": (np.array([1.0, 0.0, 0.0]), *AT_REST)})
    sim = Simulator(system, SimulationSettings(dt=0.1), q, v, orbit=LEO)
    for _ in range(800):
        sim.step()
    bases = sim.observe().bases
    assert np.max(np.abs(bases["body0"].position)) < 1e-12
    expected = cw_position(n, np.array([1.0, 0.0, 0.0]), np.zeros(3), sim.state.t)
    np.testing.assert_allclose(bases["body1"].position, expected, atol=5e-9)
    assert bases["body1"].position[0] - 1.0 == pytest.approx(0.0106, abs=2e-4)


@pytest.mark.slow
def test_each_body_keeps_its_orbital_energy_and_angular_momentum_over_three_orbits(tmp_path):
    """Two point-like bodies 50 m apart, moving relative to each other: each is a Kepler orbit of its own. Their
    specific energy v^2/2 - mu/r and angular momentum r x v (inertial, from the reference orbit's state and the body's
    in W) stay constant to RK4's error at dt = 2 s (n dt = 2e-3: (n dt)^4 ~ 1e-11 per orbit at most; 6e-14 and
    3e-14 seen; bound 1e-11). A tidal force of the wrong sign or size, or a frame mix-up between W and the reference
    orbit, is O(1)."""
    system = free_bodies(tmp_path)
    n = LEO.mean_motion
    q, v = base_state(system, {"body0": (np.array([20.0, -30.0, 10.0]), [0, 0, 0, 1], n * np.array([5.0, -8.0, 3.0]),
                                         np.zeros(3)),
                               "body1": (np.array([-10.0, 25.0, -20.0]), [0, 0, 0, 1], n * np.array([-4.0, 6.0, 9.0]),
                                         np.zeros(3))})
    sim = Simulator(system, SimulationSettings(dt=2.0), q, v, orbit=LEO)

    def integrals():
        s = sim.state
        reference = s.aux("reference_orbit")
        out = []
        for name in ("body0", "body1"):
            joint = system.subtree(name).config.root_joint_name
            qs, vs = s.q[system.q_slice(joint)], s.v[system.v_slice(joint)]
            rotation = pin.Quaternion(qs[3:7]).toRotationMatrix()
            r = sim.orbit.start + reference[:3] + qs[:3]
            velocity = reference[3:] + rotation @ vs[:3]
            out.append((0.5 * velocity @ velocity - EARTH_MU / np.linalg.norm(r), np.cross(r, velocity)))
        return out

    start = integrals()
    for _ in range(int(round(3 * LEO.period / 2.0))):
        sim.step()
    for (e0, h0), (e1, h1) in zip(start, integrals()):
        assert abs(e1 - e0) < 1e-11 * abs(e0)
        assert np.linalg.norm(h1 - h0) < 1e-11 * np.linalg.norm(h0)


@pytest.mark.slow
def test_the_reference_orbit_integrated_with_the_state_follows_keplers_equation(tmp_path):
    """e = 0.1: the simulator's RK4 integration of r_O (dt = 1 s, one orbit) against ReferenceOrbit.state (Kepler's
    equation to 1e-15 rad): RK4's error is at most ~(n dt)^4 r ~ 1e-5 m per orbit (3.5e-8 m and 2.4e-10 m/s seen: the
    error of a smooth orbit's RK4 is far below that bound); bounds 1e-6 m and 1e-8 m/s."""
    system = free_bodies(tmp_path, count=1)
    orbit = OrbitConfig(semi_major_axis=EARTH_RADIUS + 1.5e6, eccentricity=0.1, inclination=0.9, raan=0.3,
                        argument_of_perigee=1.1, argument_of_latitude=2.0)
    sim = Simulator(system, SimulationSettings(dt=1.0), orbit=orbit)
    steps = int(orbit.period)
    for _ in range(steps):
        sim.step()
    state = sim.observe().orbit
    r, v = ReferenceOrbit(orbit).state(float(steps))
    assert np.linalg.norm(state.reference_position - r) < 1e-6
    assert np.linalg.norm(state.reference_velocity - v) < 1e-8


def test_j2_turns_the_orbit_plane_at_the_analytic_nodal_rate():
    """J2's secular node regression, dRAAN/dt = -3/2 n J2 (R_e / p)^2 cos i (Vallado 2013, eq. 9-41), from the
    reference orbit over 10 orbits (the short-period terms, ~J2 of the node, mostly cancel over whole orbits):
    within 1 % (0.26 % seen: the first-order theory's own error is ~J2 = 1e-3, plus what remains of the short-period
    terms after whole orbits)."""
    orbit = OrbitConfig(semi_major_axis=EARTH_RADIUS + 770e3, inclination=math.radians(60.0), j2=True)
    reference = ReferenceOrbit(orbit)

    def node(state):
        h = np.cross(*state)
        return math.atan2(h[0], -h[1])

    span = 10 * orbit.period
    rate = (node(reference.state(span)) - node(reference.state(0.0))) / span
    p = orbit.semi_major_axis
    expected = -1.5 * orbit.mean_motion * EARTH_J2 * (EARTH_RADIUS / p) ** 2 * math.cos(orbit.inclination)
    assert rate == pytest.approx(expected, rel=0.01)


def point_cloud(mass, inertia):
    """Six point masses at +-a_i on the principal axes with the body's mass and principal inertia (I_x =
    (m/3)(a_y^2 + a_z^2), ...): an independent body for the gravity-gradient check."""
    ix, iy, iz = inertia
    half = 1.5 / mass
    a = np.sqrt(half * np.array([iy + iz - ix, ix + iz - iy, ix + iy - iz]))
    points = np.vstack([np.diag(a), -np.diag(a)])
    return points, np.full(6, mass / 6.0)


def test_gravity_gradient_and_tidal_force_against_a_cloud_of_point_masses(tmp_path):
    """A 500 kg body with inertia (100, 300, 350) kg m^2, 3 m from the reference point, turned arbitrarily: the
    torque about its centre of mass 3 mu / R^5 R x (I R) and the tidal force m (g(r_O + c) - g(r_O)) against the
    exact sums over six point masses with the same mass and inertia, in 80-bit floating point (np.longdouble). The
    cloud is symmetric, so the neglected terms are of relative order (size / R)^2 ~ 1e-13 for the torque (1e-12
    seen, round-off); for the force the second-order term is ~ I mu / R^4 ~ 1e-7 of it (2e-8 seen). Bounds 1e-10
    and 1e-6: a torque with the inertia about the wrong point or in the wrong axes is off by O(1)."""
    mass, inertia = 500.0, (100.0, 300.0, 350.0)
    system = free_bodies(tmp_path, count=1, mass=mass, inertia=inertia)
    model, data = system.model, system.model.createData()
    rotation = pin.rpy.rpyToMatrix(0.4, -0.7, 1.2)
    centre = np.array([1.0, -2.0, 2.0])
    q = system.neutral()
    q[:7] = np.concatenate((centre, pin.Quaternion(rotation).coeffs()))
    origin = np.array([EARTH_RADIUS + 770e3, 1200.0, -300.0])
    pin.computeJointJacobians(model, data, q)
    tidal = TidalWrenches(model, LEO, np.array([0.0, 0.0, 1.0]))
    tidal.evaluate(data, origin)

    ld = np.longdouble
    points, masses = point_cloud(mass, inertia)

    def g(x):
        return -ld(EARTH_MU) * x / np.sqrt(np.sum(x * x)) ** 3

    arms = [rotation.astype(ld) @ p.astype(ld) for p in points]
    o, c = origin.astype(ld), centre.astype(ld)
    force = sum(ld(m) * (g(o + c + arm) - g(o)) for m, arm in zip(masses, arms))
    torque = sum(np.cross(arm, ld(m) * g(o + c + arm)) for m, arm in zip(masses, arms))
    np.testing.assert_allclose(tidal.torque[0], torque.astype(float), rtol=0, atol=1e-10 * np.abs(torque).max())
    np.testing.assert_allclose(tidal.force[0], force.astype(float), rtol=0, atol=1e-6 * np.abs(force).max())


@pytest.mark.slow
def test_pitch_libration_about_the_stable_attitude_has_the_analytic_frequency(tmp_path):
    """A body with its smallest inertia axis radial, turned 0.02 rad about the orbit normal, at rest in LVLH:
    I_z theta'' = 3 n^2 (I_x - I_y) sin theta cos theta (the gravity-gradient torque's z component with
    R = |R| (cos theta, -sin theta, 0) in body axes), so theta oscillates at n sqrt(3 (I_y - I_x) / I_z)
    (Hughes 2004, sec. 9.2; Wie 2008, eq. 6.91). Two periods at dt = 2 s; the period from the down-crossings of
    theta, read from the LVLH attitude observe() gives, within 1e-3 (0.99990 of it seen: the amplitude's own shift,
    (2 theta_0)^2 / 16 = 1e-4)."""
    inertia = (100.0, 300.0, 350.0)
    system = free_bodies(tmp_path, count=1, mass=500.0, inertia=inertia)
    theta0 = 0.02
    q, v = base_state(system, {"body0": (np.zeros(3), [0.0, 0.0, math.sin(theta0 / 2), math.cos(theta0 / 2)],
                                         np.zeros(3), np.zeros(3))})
    sim = Simulator(system, SimulationSettings(dt=2.0), q, v, orbit=LEO)
    n = LEO.mean_motion
    omega = n * math.sqrt(3 * (inertia[1] - inertia[0]) / inertia[2])
    times, angles = [], []
    for _ in range(int(2.2 * 2 * math.pi / omega / 2.0)):
        sim.step()
        quaternion = sim.observe().bases["body0"].orientation_xyzw
        times.append(sim.state.t)
        angles.append(2.0 * math.atan2(quaternion[2], quaternion[3]))
    angles = np.array(angles)
    down = [i for i in range(1, len(angles)) if angles[i - 1] > 0.0 >= angles[i]]
    crossings = [times[i - 1] + (times[i] - times[i - 1]) * angles[i - 1] / (angles[i - 1] - angles[i]) for i in down]
    assert len(crossings) >= 2
    assert 2 * math.pi / (crossings[1] - crossings[0]) == pytest.approx(omega, rel=1e-3)
    assert np.max(np.abs(angles)) == pytest.approx(theta0, rel=1e-3)


def test_lvlh_conversion_round_trip_and_the_rate_of_a_body_at_rest_in_lvlh(servicer_target):
    """from_lvlh then to_lvlh gives the state back to round-off; a base at rest in LVLH turns at omega in W and
    its origin moves at omega x p."""
    system = servicer_target
    model = system.model
    transform = FreeFlyerTransform(model, [s.root_joint_id for s in system.subtrees])
    rng = np.random.default_rng(3)
    q = pin.randomConfiguration(model, -np.ones(model.nq), np.ones(model.nq))
    v = rng.normal(size=model.nv)
    axes = pin.rpy.rpyToMatrix(0.3, 0.2, -0.5)
    frame = LvlhFrame(axes, np.array([1e-4, -2e-4, 1.05e-3]))
    q_w, v_w = transform.from_lvlh(q, v, frame)
    q_back, v_back = transform.to_lvlh(q_w, v_w, frame)
    np.testing.assert_allclose(pin.difference(model, q, q_back), 0.0, atol=1e-14)
    np.testing.assert_allclose(v_back, v, atol=1e-15)
    joint = system.subtree("target").config.root_joint_name
    q_rest, v_rest = q.copy(), np.zeros(model.nv)
    q_w, v_w = transform.from_lvlh(q_rest, v_rest, frame)
    placement = pin.XYZQUATToSE3(q_w[system.q_slice(joint)])
    twist = v_w[system.v_slice(joint)]
    np.testing.assert_allclose(placement.rotation @ twist[3:], frame.omega, atol=1e-15)
    np.testing.assert_allclose(placement.rotation @ twist[:3], np.cross(frame.omega, placement.translation),
                               atol=1e-15)


def orbit_reader(**entries):
    return ConfigReader(dict(entries), "s.yaml", "orbit")


@pytest.mark.parametrize("entries, field, words", [
    ({"altitude": 7e5, "semi_major_axis": 7e6}, "orbit.altitude", "exactly one"),
    ({}, "orbit.altitude", "exactly one"),
    ({"semi_major_axis": 7.0e6, "eccentricity": 0.1}, "orbit.semi_major_axis", "perigee"),
    ({"altitude": 7e5, "eccentricity": 0.6}, "orbit.eccentricity", "0.5"),
    ({"altitude": 7e5, "inclination_deg": 200.0}, "orbit.inclination_deg", "180"),
    ({"altitude": float("nan")}, "orbit.altitude", ""),
    ({"altitude": 7e5, "j2": "yes"}, "orbit.j2", "true or false"),
    ({"altitude": 7e5, "inclination": 1.0}, "orbit.inclination", "unknown key"),
    ({"altitude": 7e5, "central_body": {"gravitational_parameter": -1.0}},
     "orbit.central_body.gravitational_parameter", ""),
])
def test_a_bad_orbit_section_is_refused_naming_the_field(entries, field, words):
    with pytest.raises(ConfigError) as error:
        read_orbit(orbit_reader(**entries))
    assert field in str(error.value) and words in str(error.value)


def test_an_orbit_section_reads_into_si_units():
    config = read_orbit(orbit_reader(altitude=770e3, inclination_deg=98.5, j2=True))
    assert config.semi_major_axis == EARTH_RADIUS + 770e3
    assert config.inclination == pytest.approx(math.radians(98.5), rel=1e-15)
    assert config.j2 and config.period == pytest.approx(2 * math.pi * math.sqrt(config.semi_major_axis ** 3 / EARTH_MU))


def test_the_tidal_force_vanishes_only_for_a_model_without_mass(tmp_path):
    """Massless joints carry no body: TidalWrenches keeps the massive ones only."""
    system = build_model("config/models/servicer_target.yaml")
    tidal = TidalWrenches(system.model, LEO, np.array([0.0, 0.0, 1.0]))
    assert len(tidal.joints) == sum(1 for j in range(1, system.model.njoints) if system.model.inertias[j].mass > 0)
    assert tidal.total_mass == pytest.approx(sum(system.model.inertias[j].mass for j in range(system.model.njoints)))
