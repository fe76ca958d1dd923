"""HolonomyMonitor: configuration, bad input, and what each published figure says in situations whose answer
is known (conserved momentum in a simulation, an external force or impulse, a slipping grasp, a dynamic
singularity)."""
import dataclasses

import numpy as np
import pinocchio as pin
import pytest

from space_robot_dynamics.errors import CommandError, ConfigError
from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator
from space_robot_monitoring import ERROR, OK, WARN, HolonomyMonitor, MonitorReport, load_monitor_settings
from space_robot_monitoring.contact_constraint import WeldConstraint
from space_robot_monitoring.lie_algebra import skew
from space_robot_monitoring.mechanical_connection import Fibre, MechanicalConnection, curvature_figures
from space_robot_monitoring.momentum_matrices import CentroidalMomentum, ThesisMomentumModel
from space_robot_monitoring.monitor_settings import MonitorSettings, TargetSettings
from space_robot_monitoring.system_partition import subtree_partition
from space_robot_monitoring.yh_criterion import thesis_criterion

MONITOR_YAML = "config/monitor.yaml"
SERVICER_POSE = (0.3, -0.6, 0.2, 1.2, -0.3, 0.8, 0.1)       # rad, a bent Sawyer pose away from singularities


@pytest.fixture(scope="module")
def servicer_monitor_inputs(servicer_target):
    """The servicer at a bent pose with the target's grapple on the hand; zero velocity."""
    system = servicer_target
    model = system.model
    q = system.neutral()
    for name, angle in zip(system.arm_joints, SERVICER_POSE):
        system.set_joint_angle(q, name, angle)
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    grapple = model.frames[model.getFrameId("target/grapple_frame")]
    pose = data.oMf[model.getFrameId("right_hand")] * grapple.placement.inverse()
    joint = grapple.parentJoint
    idx = model.joints[joint].idx_q
    q[idx:idx + 7] = pin.SE3ToXYZQUAT(model.jointPlacements[joint].inverse() * pose)
    return system, q


@pytest.fixture(scope="module")
def thesis_system():
    return SystemModel(load_model_config("config/models/thesis_6dof.yaml"))


def _thesis_settings():
    return MonitorSettings(robot_subtree="robot", end_effector_frame="end_effector",
                           target=TargetSettings("target", "target/grapple_frame"))


def _write(tmp_path, text):
    path = tmp_path / "monitor.yaml"
    path.write_text(text)
    return path


BASE_YAML = """holonomy_monitor:
  model: config/models/servicer_target.yaml
  robot_subtree: servicer
  end_effector_frame: right_hand
  target: {subtree: target, grapple_frame: target/grapple_frame}
"""


@pytest.mark.parametrize("extra,field", [
    ("  rank_rtol: -1\n", "holonomy_monitor.rank_rtol"),
    ("  momentum: {warn_fraction: 0.1, error_fraction: 0.01}\n", "holonomy_monitor.momentum.warn_fraction"),
    ("  momentum: {warn_fractoin: 0.1}\n", "holonomy_monitor.momentum.warn_fractoin"),
    ("  generalized_jacobian: {joints: wheels}\n", "holonomy_monitor.generalized_jacobian.joints"),
    ("  generalized_jacobian: {warn_inverse_condition: 1.0e-4, error_inverse_condition: 1.0e-3}\n",
     "holonomy_monitor.generalized_jacobian.error_inverse_condition"),
    ("  thesis_yh_method: svd\n", "holonomy_monitor.thesis_yh_method"),
    ("  length_scale: zero\n", "holonomy_monitor.length_scale"),
])
def test_bad_settings_name_the_field(tmp_path, extra, field):
    with pytest.raises(ConfigError) as info:
        load_monitor_settings(_write(tmp_path, BASE_YAML + extra))
    assert info.value.field == field


@pytest.mark.parametrize("replace,field", [
    (("right_hand", "left_hand"), "holonomy_monitor.end_effector_frame"),
    (("subtree: target,", "subtree: servicer,"), "holonomy_monitor.target.subtree"),
    (("robot_subtree: servicer", "robot_subtree: tug"), "holonomy_monitor.robot_subtree"),
    (("grapple_frame: target/grapple_frame", "grapple_frame: right_hand"), "holonomy_monitor.target.grapple_frame"),
])
def test_bad_model_references_name_the_field(tmp_path, servicer_target, replace, field):
    settings = load_monitor_settings(_write(tmp_path, BASE_YAML.replace(*replace)))
    with pytest.raises(ConfigError) as info:
        HolonomyMonitor(servicer_target, settings)
    assert info.value.field == field


def test_missing_section(tmp_path):
    with pytest.raises(ConfigError) as info:
        load_monitor_settings(_write(tmp_path, "monitor_node: {rate: 10}\n"))
    assert info.value.field == "holonomy_monitor"


def test_bad_input_is_refused_with_the_field_named(servicer_monitor_inputs):
    system, q = servicer_monitor_inputs
    monitor = HolonomyMonitor(system, load_monitor_settings(MONITOR_YAML))
    v = np.zeros(system.model.nv)
    with pytest.raises(CommandError, match="^q:"):
        monitor.update(0.0, q[:-1], v)
    bad = v.copy()
    bad[3] = np.nan
    with pytest.raises(CommandError, match="^v:"):
        monitor.update(0.0, q, bad)
    monitor.update(1.0, q, v)
    with pytest.raises(CommandError, match="^t:"):
        monitor.update(1.0, q, v)
    alone = HolonomyMonitor(system, MonitorSettings(robot_subtree="servicer", end_effector_frame="right_hand"))
    with pytest.raises(CommandError, match="^attached:"):
        alone.update(0.0, q, v, attached=True)


def test_servicer_report(servicer_monitor_inputs):
    """Figures on the servicer (7 arm joints + 3 wheels), free and holding the target."""
    system, q = servicer_monitor_inputs
    monitor = HolonomyMonitor.from_yaml(MONITOR_YAML, system)
    v = np.zeros(system.model.nv)
    free = monitor.update(0.0, q, v)
    held = monitor.update(0.01, q, v, attached=True)
    for report, attached in ((free, False), (held, True)):
        assert report.attached is attached
        assert report.level == OK, report.message
        assert (report.thesis_yh_rank_linear, report.thesis_yh_rank_angular) == (3, 2)
        assert report.constraint_rank == 6
        assert report.nonholonomy_rank == 3
        assert report.linear_integrability_residual < 1e-12
        assert report.jstar.shape == (6, 7)
        assert report.jstar_inverse_condition > monitor.settings.inverse_condition_warn
    assert np.isnan(free.contact_residual) and held.contact_residual == 0.0
    keys = [k for k, _ in held.key_values()]
    assert len(keys) == len(set(keys))
    assert all(isinstance(k, str) and isinstance(val, str) for k, val in held.key_values())
    for key in ("level", "message", "thesis_Yh_rank_angular", "thesis_Yh_note", "nonholonomy_rank",
                "linear_integrability_residual", "jstar_sigma_min [scaled]", "contact_residual"):
        assert key in keys
    assert "does not test integrability" in dict(held.key_values())["thesis_Yh_note"]


def test_deterministic(servicer_monitor_inputs):
    system, q = servicer_monitor_inputs
    rng = np.random.default_rng(0)
    velocities = [rng.normal(scale=0.01, size=system.model.nv) for _ in range(3)]
    runs = []
    for _ in range(2):
        monitor = HolonomyMonitor.from_yaml(MONITOR_YAML, system)
        runs.append([monitor.update(0.1 * k, q, v).key_values() for k, v in enumerate(velocities)])
    assert runs[0] == runs[1]


def test_momentum_conserved_in_simulation(servicer_monitor_inputs):
    """Arm and wheel torques are internal: over 1 s of RK4 simulation the momentum residual stays at the
    integrator's level (~1e-13 of capacity), far below the 1e-3 warning. Torques: sinusoids sized to each
    Sawyer joint plus a PD to the start pose (as test_conservation.py), so rates stay in the arm's range."""
    system, q = servicer_monitor_inputs
    monitor = HolonomyMonitor.from_yaml(MONITOR_YAML, system)
    sim = Simulator(system, SimulationSettings(dt=1e-3), q, np.zeros(system.model.nv))
    amplitude = np.array([2.0, 3.0, 1.0, 1.0, 0.1, 0.1, 0.02])        # N m
    home = np.array(SERVICER_POSE)
    worst = 0.0
    for k in range(1000):
        state = sim.state
        angles = np.array([system.joint_angle(state.q, name) for name in system.arm_joints])
        arm = (amplitude * np.sin(np.arange(1, 8) * 2.0 * state.t) - 4.0 * amplitude * (angles - home)
               - amplitude * state.v[system.arm_v])
        sim.step(arm, 0.1 * np.cos(np.arange(1, 4) * 3.0 * state.t))
        if k % 50 == 49:
            report = monitor.update(sim.state.t, sim.state.q, sim.state.v)
            worst = max(worst, report.linear_residual_fraction, report.angular_residual_fraction)
            assert "momentum conserved" in report.momentum_interpretation
    assert worst < 1e-9


def test_external_force_and_impulse_are_reported(servicer_monitor_inputs):
    """A slow momentum change (an external force) gives WARN with the force named and its mean value; a jump
    within one cycle (an impulse) gives ERROR with an impact/contact event named."""
    system, q = servicer_monitor_inputs
    model = system.model
    monitor = HolonomyMonitor.from_yaml(MONITOR_YAML, system)
    v = np.zeros(model.nv)
    monitor.update(0.0, q, v)
    # A uniform velocity dv of the whole servicer (base twist, joints still) carries p = M dv: the state an
    # external force F would produce after a time t with dv = F t / M. 0.1 N for 10 s in 100 cycles:
    # 0.01 N s per cycle, below the one-cycle jump threshold (1e-3 of the ~19 N s capacity).
    servicer = subtree_partition(system, "servicer")
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    rotation = data.oMi[servicer.root_joint_id].rotation        # base twist is in the base frame
    base_v = servicer.base_v[:3]
    report = None
    for k in range(1, 101):
        v_k = v.copy()
        v_k[base_v] = rotation.T @ np.array([0.1 * 0.1 * k / servicer.mass, 0.0, 0.0])
        report = monitor.update(0.1 * k, q, v_k)
    assert report.level in (WARN, ERROR)
    assert "external force" in report.message
    np.testing.assert_allclose(report.mean_external_force, [0.1, 0.0, 0.0], atol=1e-9)
    assert report.momentum_jump_fraction < monitor.settings.momentum_jump
    assert report.linear_residual_fraction > monitor.settings.momentum_warn
    # an impulse of 5 N s in one cycle
    v_k[base_v] += rotation.T @ np.array([0.0, 5.0 / servicer.mass, 0.0])
    impulse = monitor.update(10.1, q, v_k)
    assert impulse.level == ERROR
    assert "impact or contact event" in impulse.message


def test_slipping_grasp(servicer_monitor_inputs):
    """Attached, with the target turning relative to the hand: the contact residual flags it (fraction of the
    end-effector speed capacity, ~9 rad/s-equivalent here: 0.02 rad/s is 2e-3, 0.2 rad/s 2e-2)."""
    system, q = servicer_monitor_inputs
    model = system.model
    target = system.subtree("target")
    idx = model.joints[target.root_joint_id].idx_v
    results = []
    for rate in (0.02, 0.2):                    # rad/s about the target's z axis
        monitor = HolonomyMonitor.from_yaml(MONITOR_YAML, system)
        v = np.zeros(model.nv)
        assert monitor.update(0.0, q, v, attached=True).level == OK
        v[idx + 5] = rate
        results.append(monitor.update(0.1, q, v))
    slow, fast = results
    assert monitor.settings.contact_warn < slow.contact_residual < monitor.settings.contact_error
    assert fast.contact_residual > monitor.settings.contact_error
    for report in results:
        assert "grasp slipping or contact lost" in report.message
    assert fast.level == ERROR


def test_dynamic_singularity_on_the_thesis_robot(thesis_system):
    """With every joint at zero the thesis arm is stretched along x and joints 2, 3, 5 (all about y) act in
    the same plane: J* loses rank, the monitor says so. A bent pose is clear of it."""
    model = thesis_system.model
    monitor = HolonomyMonitor(thesis_system, _thesis_settings())
    stretched = monitor.update(0.0, thesis_system.neutral(), np.zeros(model.nv))
    assert stretched.jstar_sigma_min < 1e-12 and stretched.jstar_inverse_condition < 1e-12
    assert stretched.level == ERROR and "dynamic singularity" in stretched.message
    q = thesis_system.neutral()
    for name, angle in zip(thesis_system.arm_joints, (0.3, -0.5, 0.9, 0.4, -0.6, 0.1)):
        thesis_system.set_joint_angle(q, name, angle)
    bent = HolonomyMonitor(thesis_system, _thesis_settings()).update(0.0, q, np.zeros(model.nv))
    assert bent.jstar_inverse_condition > monitor.settings.inverse_condition_warn
    assert "dynamic singularity" not in bent.message
    assert bent.nonholonomy_rank == 3 and bent.thesis_yh_rank_angular == 2


def test_attach_resets_the_momentum_reference(servicer_monitor_inputs):
    """Grasping changes the monitored bodies (robot -> robot + target): the reference momentum is retaken."""
    system, q = servicer_monitor_inputs
    model = system.model
    monitor = HolonomyMonitor.from_yaml(MONITOR_YAML, system)
    v = np.zeros(model.nv)
    monitor.update(0.0, q, v)
    target = system.subtree("target")
    idx = model.joints[target.root_joint_id].idx_v
    v[idx] = 0.01                     # the target drifts: not the robot's momentum
    assert monitor.update(0.1, q, v).linear_residual_fraction == 0.0
    held = monitor.update(0.2, q, v, attached=True)
    assert held.linear_residual_fraction == 0.0 and held.attached


def _figures_the_long_way(system, monitor, q, v, attached):
    """The report's figures recomputed from the building blocks one at a time, the way the docs define them:
    B = H T (compute(), with the velocity map), Y_h by the literal eqs. 4.8-4.16, the full curvature from
    separate momentum and weld sources, J* = J_m + J_b K, momentum about the monitored centre of mass."""
    model, s = system.model, monitor.settings
    robot = monitor.robot
    fibres = [robot, monitor.target] if attached else [robot]
    mass, length = sum(f.mass for f in fibres), monitor.length_scale
    ee = monitor.ee_frame
    thesis = ThesisMomentumModel(system, robot, monitor.target, ee).compute(q, attached)
    cols = np.r_[np.full(3, length), np.ones(3), monitor.shape_scale] if not attached else \
        np.r_[np.full(3, length), np.ones(3), monitor.shape_scale, np.ones(3), np.full(3, length)]
    scaled = thesis.B * np.r_[np.full(3, 1 / (mass * length)), np.full(3, 1 / (mass * length ** 2))][:, None] * cols
    yh = [thesis_criterion(a, s.rank_rtol, "augmented_svd") for a in (thesis.linear, thesis.angular)]
    sources = [CentroidalMomentum(model)]
    if attached:
        sources.append(WeldConstraint(model, ee, model.getFrameId(s.target.grapple_frame)))
    connection = MechanicalConnection(model, sources, [Fibre(f.root_joint_id, f.base_v) for f in fibres],
                                      robot.joint_v)
    curvature = connection.compute(q)
    data = model.createData()
    pin.centerOfMass(model, data, q)
    pin.computeJointJacobians(model, data, q)
    g = [f.mass / mass * data.oMi[f.root_joint_id].rotation
         @ np.hstack((np.eye(3), -skew(data.com[f.root_joint_id]))) for f in fibres]
    figures = curvature_figures(curvature, g, monitor.shape_scale, length, s.rank_rtol)
    j_ee = pin.getFrameJacobian(model, data, ee, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
    jstar = (j_ee[:, robot.joint_v] + j_ee[:, robot.base_v] @ curvature.K[:6])[:, monitor.jacobian_columns]
    com = sum(f.mass * data.oMi[f.root_joint_id].act(data.com[f.root_joint_id]) for f in fibres) / mass
    ag = pin.computeCentroidalMap(model, data, q)
    monitored = np.concatenate([f.all_v for f in fibres])
    h = ag[:, monitored] @ v[monitored]
    h[3:] += np.cross(data.com[0] - com, h[:3])
    return dict(b_sv=np.linalg.svd(scaled, compute_uv=False), b_rank=np.linalg.matrix_rank(scaled), yh=yh,
                figures=figures, jstar=jstar, h=h, K=curvature.K, F=curvature.F)


@pytest.mark.parametrize("attached", [False, True])
def test_report_equals_the_building_blocks_one_at_a_time(servicer_monitor_inputs, thesis_system, attached):
    """The per-cycle pass (one Pinocchio data, one inversion, batched singular values, the closed-form Y_h and
    the curvature pairs only) publishes what the building blocks give one at a time: ranks equal, values to
    round-off (1e-10 relative: the Y_h closed form against the literal SVD/augmented-matrix route, which
    agree to 1e-12 in test_thesis_criterion.py; everything else to ~1e-14)."""
    servicer, q_servicer = servicer_monitor_inputs
    rng = np.random.default_rng(11)
    q_thesis = pin.integrate(thesis_system.model, thesis_system.neutral(),
                             rng.normal(scale=0.5, size=thesis_system.model.nv))
    for system, q, monitor in ((servicer, q_servicer, HolonomyMonitor.from_yaml(MONITOR_YAML, servicer)),
                               (thesis_system, q_thesis, HolonomyMonitor(thesis_system, _thesis_settings()))):
        v = rng.normal(scale=0.05, size=system.model.nv)
        report = monitor.update(0.0, q, v, attached=attached)
        long_way = _figures_the_long_way(system, monitor, q, v, attached)
        np.testing.assert_allclose(report.constraint_singular_values, long_way["b_sv"], rtol=1e-12)
        assert report.constraint_rank == long_way["b_rank"] == 6
        for published, rank, literal in ((report.thesis_yh_linear, report.thesis_yh_rank_linear, long_way["yh"][0]),
                                          (report.thesis_yh_angular, report.thesis_yh_rank_angular, long_way["yh"][1])):
            np.testing.assert_allclose(published, literal.Yh, rtol=0, atol=1e-10 * np.abs(literal.Yh).max())
            assert rank == literal.rank
        figures = long_way["figures"]
        assert report.nonholonomy_rank == figures.nonholonomy_rank == 3
        np.testing.assert_allclose(report.attitude_curvature_singular_values, figures.attitude_singular_values,
                                   rtol=1e-12)
        assert report.linear_integrability_residual < 1e-12 and figures.linear_residual < 1e-12
        np.testing.assert_allclose(report.jstar, long_way["jstar"], rtol=0, atol=1e-12 * np.abs(report.jstar).max())
        h = np.concatenate((report.linear_momentum, report.angular_momentum))
        np.testing.assert_allclose(h, long_way["h"], rtol=0, atol=1e-12 * np.abs(h).max())
        np.testing.assert_allclose(report.connection, long_way["K"], rtol=0,
                                   atol=1e-12 * np.abs(long_way["K"]).max())
        np.testing.assert_allclose(report.curvature_tensor(), long_way["F"], rtol=0,
                                   atol=1e-12 * np.abs(long_way["F"]).max())
        assert report.shape_joints == monitor.robot.joint_names


@pytest.mark.parametrize("attached", [False, True])
def test_report_connection_gives_the_allowed_motions(servicer_monitor_inputs, attached):
    """K in the report is what it says: joint rates qdot with base twists K qdot (robot base, then the target's
    while attached) carry zero momentum and, attached, no relative twist at the grasp. References: Pinocchio's
    centroidal map and the weld rows (ee twist minus grapple twist), 1e-10 of the momentum a joint rate
    alone would carry."""
    system, q = servicer_monitor_inputs
    monitor = HolonomyMonitor.from_yaml(MONITOR_YAML, system)
    report = monitor.update(0.0, q, np.zeros(system.nv), attached=attached)
    qdot = np.random.default_rng(3).normal(size=len(report.shape_joints))
    v = np.zeros(system.nv)
    v[[system.v_index(name) for name in report.shape_joints]] = qdot
    fibres = [monitor.robot, monitor.target] if attached else [monitor.robot]
    twists = report.connection @ qdot
    for k, fibre in enumerate(fibres):
        v[fibre.base_v] = twists[6 * k:6 * k + 6]
    model, data = system.model, system.model.createData()
    ag = pin.computeCentroidalMap(model, data, q)
    monitored = np.concatenate([f.all_v for f in fibres])
    joints_only = np.zeros(system.nv)
    joints_only[[system.v_index(name) for name in report.shape_joints]] = qdot
    scale = np.abs(ag @ joints_only).max()
    assert np.abs(ag[:, monitored] @ v[monitored]).max() < 1e-10 * scale
    if attached:
        weld = WeldConstraint(model, monitor.ee_frame, model.getFrameId("target/grapple_frame"))
        assert np.abs(weld.matrix(q) @ v).max() < 1e-10 * np.abs(v).max()
    n_pairs = len(report.shape_joints) * (len(report.shape_joints) - 1) // 2
    assert report.connection.shape == (6 * len(fibres), len(qdot))
    assert report.curvature.shape == (6 * len(fibres), n_pairs)


def test_report_of_is_the_dataclass(servicer_monitor_inputs):
    """MonitorReport.of (the monitor's fast constructor) builds the same report as the dataclass __init__ and
    refuses a missing or unknown field."""
    system, q = servicer_monitor_inputs
    report = HolonomyMonitor.from_yaml(MONITOR_YAML, system).update(0.0, q, np.zeros(system.model.nv))
    values = {f.name: getattr(report, f.name) for f in dataclasses.fields(report)}
    rebuilt = MonitorReport(**values)
    assert rebuilt.key_values() == report.key_values() and vars(rebuilt).keys() == vars(report).keys()
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.level = "OK"
    values.pop("jstar")
    with pytest.raises(TypeError):
        MonitorReport.of(**values)
    with pytest.raises(TypeError):
        MonitorReport.of(**values, jstar=report.jstar, colour="red")
