"""The visualization node draws true quantities: body-group momenta that add up to Pinocchio's centroidal momentum,
the planned end-effector path of the controller's own reference, wheel discs on the spin axes; its text is
readable in RViz 2 (non-zero space width and height), and a fixed base gets a world frame."""
from __future__ import annotations

import tempfile

import numpy as np
import pinocchio as pin
import pytest
from model_states import random_state

from space_robot_nodes import conversions as cv
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario, parse_overrides

MOMENTUM_TOLERANCE = 1e-12     # relative: sums of ~20 body momenta in double precision


@pytest.fixture(scope="module")
def pregrasp_run():
    """The default scenario run past the trajectory goal's arrival (0.5 s), with everything it published."""
    run = SimulationRun(load_scenario("servicer_pregrasp"))
    published = []
    run.graph.tap(lambda topic, msg, time_ns, publisher: published.append((topic, msg, time_ns, publisher)))
    run.run(duration=1.0, plots=False, progress=False)
    return run, published


def test_group_momenta_add_up_to_the_centroidal_momentum(pregrasp_run):
    run, _ = pregrasp_run
    viz, system = run.visualization, run.system
    rng = np.random.default_rng(3)
    for _ in range(5):
        q, v = random_state(system, rng)
        groups, com = viz.group_momenta(q, v)
        data = system.model.createData()
        h = pin.computeCentroidalMomentum(system.model, data, q, v)
        p = sum(g[3] for g in groups)
        l_c = sum(g[4] for g in groups)
        scale = max(np.abs(g[3]).max() for g in groups) + max(np.abs(g[4]).max() for g in groups)
        assert np.abs(p - h.linear).max() < MOMENTUM_TOLERANCE * scale
        assert np.abs(l_c - h.angular).max() < MOMENTUM_TOLERANCE * scale
        assert np.allclose(com, data.com[0], atol=1e-12)
        assert sum(g[1] for g in groups) == pytest.approx(sum(i.mass for i in system.model.inertias), rel=1e-12)
    assert {g.name for g in viz.groups} == {"servicer base", "servicer arm", "servicer wheels", "target base"}


def test_the_planned_path_is_the_controllers_reference(pregrasp_run):
    run, published = pregrasp_run
    paths = [msg for topic, msg, _t, _p in published if topic == "visualization/planned_end_effector_path"]
    assert len(paths) == 1
    poses = paths[0].poses
    goal = run.scenario.trajectory_goal
    # the last point: forward kinematics of the goal's joint positions, bus where it was at the goal's arrival
    q = run.visualization.state.q.copy()
    for name, angle in zip(goal.joint_names, goal.points[-1][1]):
        run.system.set_joint_angle(q, name, angle)
    data = run.system.model.createData()
    pin.framesForwardKinematics(run.system.model, data, q)
    hand = data.oMf[run.system.model.getFrameId("right_hand")]
    end = cv.xyz_of(poses[-1].pose.position)
    assert np.linalg.norm(end - hand.translation) < 0.01       # the bus has moved ~1 mm since the goal arrived
    # the first point: where the hand was when the goal arrived (the reference starts from the measured state)
    path = [msg for topic, msg, _t, _p in published if topic == "visualization/end_effector_path"]
    assert np.linalg.norm(cv.xyz_of(poses[0].pose.position) - cv.xyz_of(path[0].poses[0].pose.position)) < 1e-3


def test_wheel_discs_sit_on_the_spin_axes_locked_to_the_wheels(pregrasp_run):
    run, published = pregrasp_run
    statics = [msg for topic, msg, _t, _p in published if topic == "visualization/static_markers"]
    assert len(statics) == 1             # at start; again every 2 s
    markers = statics[0].markers
    assert len(markers) == 2 * len(run.system.wheel_joints)
    for marker in markers:
        assert marker.frame_locked and marker.header.frame_id in ("rw_x", "rw_y", "rw_z")
        position = cv.xyz_of(marker.pose.position)
        assert np.linalg.norm(position) == pytest.approx(0.65, abs=0.06)    # outside the 1 m bus


def test_every_text_marker_can_be_read(pregrasp_run):
    _run, published = pregrasp_run
    texts = []
    for topic, msg, _t, _p in published:
        for marker in getattr(msg, "markers", [msg] if hasattr(msg, "text") and hasattr(msg, "scale") else []):
            if marker.type == 9 and marker.action == 0:              # TEXT_VIEW_FACING, ADD
                texts.append((topic, marker))
    assert {topic for topic, _ in texts} == {"holonomy/marker", "visualization/markers"}
    for topic, marker in texts:
        assert marker.scale.x > 0 and marker.scale.z > 0, (topic, marker.text)
        assert marker.scale.x < marker.scale.z          # a space narrower than a letter is high
        assert all(len(line) <= 70 for line in marker.text.splitlines()), marker.text


def test_short_arrows_are_deleted_not_drawn(pregrasp_run):
    run, published = pregrasp_run
    first = next(msg for topic, msg, _t, _p in published if topic == "visualization/markers")
    # at t = 0 everything is at rest: no momentum arrow is drawn, each is a DELETE
    arrows = [m for m in first.markers if m.ns == "momentum" and m.type == 0]
    assert arrows and all(m.action == 2 for m in arrows)


def test_a_fixed_base_gets_a_world_frame():
    scenario = load_scenario("sawyer_lab")
    run = SimulationRun(scenario)
    published = []
    run.graph.tap(lambda topic, msg, time_ns, publisher: published.append((topic, msg, publisher)))
    with tempfile.TemporaryDirectory() as out:
        run.run(duration=0.05, out_dir=f"{out}/o", plots=False, progress=False)
    statics = [msg for topic, msg, publisher in published if topic == "tf_static" and publisher == "dynamics"]
    assert len(statics) == 1
    (transform,) = statics[0].transforms
    assert (transform.header.frame_id, transform.child_frame_id) == ("world", "base")


def test_the_visualization_can_be_left_out_of_a_run():
    run = SimulationRun(load_scenario("servicer_pregrasp", parse_overrides(["recording.visualization=false"])))
    assert run.visualization is None
    assert not any(name.startswith("visualization/") for name in run.graph.topics())


def test_a_target_held_by_the_hand_hangs_from_the_hand_in_tf():
    """A subtree mounted on another's frame: its mount goes out as mount frame -> base link, so RViz draws the
    held target at the hand however the arm moves (the placement Pinocchio gives, checked at the neutral pose)."""
    scenario = load_scenario("config/identification/target_excitation_full_arm.yaml")
    run = SimulationRun(scenario)
    published = []
    run.graph.tap(lambda topic, msg, time_ns, publisher: published.append((topic, msg, publisher)))
    run.run(duration=0.01, plots=False, progress=False)
    statics = [msg for topic, msg, publisher in published if topic == "tf_static" and publisher == "dynamics"]
    (transform,) = statics[0].transforms
    assert (transform.header.frame_id, transform.child_frame_id) == ("right_hand", "target/base_link")
    model, data = run.system.model, run.system.model.createData()
    pin.framesForwardKinematics(model, data, run.system.neutral())
    expected = data.oMf[model.getFrameId("right_hand")].actInv(data.oMf[model.getFrameId("target/base_link")])
    assert cv.xyz_of(transform.transform.translation) == pytest.approx(expected.translation, abs=1e-12)
    assert cv.xyz_of(transform.transform.translation) == pytest.approx([0.0, 0.0, 0.65], abs=1e-12)
