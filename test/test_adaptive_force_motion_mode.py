"""The controller node's force_motion mode with adaptation (space_robot_control/adaptive_force_motion_control.py;
docs/controllers.md sec. 3.4): seed 004 ch. 7 on the Hubble case through the node graph, against the thesis study
(thesis_studies/adaptive_study.py: the same law on its own plant, with the plant's exact acceleration) as the oracle.

What must differ and by how much: the node adapts with the mean acceleration between the last two states and the
previous state's regressor (no accelerometer), and its force loop takes 0.1 of each relaxed step of eq. 7.3 (stable
under ROS 2's latency). V of eq. 7.12 still never rises in the lockstep run (the requirement allows 1e-3 of V at the
grasp). Settling, the estimates, V and the force error at 10 s are compared with the study at the same dt; the
tolerances are stated at each assertion. The V test can fail: with the adaptation's sign reversed V rises by more
than 1e-3 of V(0) within 1 s.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from test_force_motion_mode import ScenarioGraph

from space_robot_control.adaptive_force_motion_control import AdaptiveForceMotionController
from space_robot_control.adaptive_inverse_dynamics import AdaptationLaw
from space_robot_control.thesis_studies.adaptive_study import AdaptiveStudy, read_adaptive_settings
from space_robot_dynamics.config_reader import ConfigReader, parse_yaml
from space_robot_dynamics.errors import ConfigError
from space_robot_dynamics.model.system_model import SystemModel
from space_robot_runtime.cli import sim_main
from space_robot_scenario import load_scenario, parse_overrides

SCENARIO = "hubble_adaptive_graph"
STUDY = "config/studies/hubble_adaptive.yaml"
DURATION = 10.0          # s: past the settling (~8 s); the estimates stop moving after ~3 s


@pytest.fixture(scope="module")
def graph_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("hubble_graph") / "out"
    code = sim_main([SCENARIO, "--out", str(out), "--duration", str(DURATION), "--no-plots"])
    return code, json.loads((out / "summary.json").read_text())


@pytest.fixture(scope="module")
def study_run():
    data = parse_yaml(open(STUDY).read())
    data["simulation"].update(dt=1e-3, record_every=10)
    return AdaptiveStudy(read_adaptive_settings(ConfigReader(data, STUDY))).run(duration=DURATION).summary


@pytest.mark.slow
def test_the_hubble_case_runs_in_the_graph_with_its_requirements(graph_run):
    code, s = graph_run
    assert code == 0, s.get("requirements")
    assert set(s["requirements"]) == {"grasped", "settling_time_s", "final_force_error_n", "max_lyapunov_increase"}
    assert all(r["met"] for r in s["requirements"].values()), s["requirements"]
    assert s["topics"]["force_controller/estimates"]["recorded"] > 0
    assert s["thesis_settling_time_s"] == 40.0


@pytest.mark.slow
def test_the_graph_agrees_with_the_study(graph_run, study_run):
    _code, s = graph_run
    # settling: one control period late at the start, a regressor a period late, a force loop taking 0.1 of each
    # relaxed step: within 20 ms (2 samples of the 10 ms recording the settling is read on)
    assert s["settling_time_s"] == pytest.approx(study_run["settling_time_s"], abs=0.02)
    # V at the grasp is the same state and estimate: equal to round-off; at 10 s within 0.1 % (measured 5e-5)
    assert s["lyapunov_initial"] == pytest.approx(study_run["lyapunov_initial"], rel=1e-9)
    assert s["lyapunov_final"] == pytest.approx(study_run["lyapunov_final"], rel=1e-3)
    # The estimates do not converge in either run (a held pose does not excite them, as in the study); they move
    # where the first second's transient pushes them (Gamma^-1 up to 1e9). The graph's regressor is a period late,
    # so its estimates end a little elsewhere: per parameter group (mass, first moment, inertia) within 5 % of how
    # far the study's moved plus 1e-3 of the group's size (measured: 0.6 of 5500 kg, 1.5 % of the first moment's
    # motion, 0.03 % of the inertia's).
    graph, study = s["final_parameter_estimates"], study_run["final_parameter_estimates"]
    assert set(graph) == set(study)
    for group in (("m",), ("mc_x", "mc_y", "mc_z"), ("I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")):
        names = [n for n in graph if n.rsplit(".", 1)[1] in group]
        assert len(names) == len(group)
        moved = np.linalg.norm([study[n]["estimate"] - study[n]["initial"] for n in names])
        apart = np.linalg.norm([graph[n]["estimate"] - study[n]["estimate"] for n in names])
        assert all(graph[n]["initial"] == pytest.approx(study[n]["initial"], abs=1e-9) for n in names)
        size = np.linalg.norm([study[n]["initial"] for n in names])
        assert moved > 1.0 and apart <= 0.05 * moved + 1e-3 * size, (group, apart, moved)
    # the force error is bounded, not zero (eq. 7.17: the thrust is computed with the estimated mass): as the
    # study's to 1 % (measured 0.4 %)
    assert s["final_force_error_n"] == pytest.approx(study_run["final_force_error_n"], rel=0.01)
    assert 0.0 <= s["max_lyapunov_increase"] < 1e-3


@pytest.mark.slow
def test_a_reversed_adaptation_makes_v_rise(monkeypatch):
    """The V test can fail: eq. 7.11 with its sign reversed."""
    original = AdaptationLaw.rate
    monkeypatch.setattr(AdaptationLaw, "rate", lambda self, *args: -original(self, *args))
    graph = ScenarioGraph(scenario=SCENARIO)
    graph.run(1.0)
    mode = graph.controller.force_motion
    assert isinstance(mode, AdaptiveForceMotionController)
    assert mode.largest_lyapunov_increase > 1e-3 * mode.lyapunov_at_grasp


def test_bad_adaptations_are_named():
    with pytest.raises(ConfigError, match="force_motion.gains.ki.*integral"):
        load_scenario(SCENARIO, parse_overrides(["controller.force_motion.gains.ki=1"]))
    with pytest.raises(ConfigError, match="force_motion.adaptation.gamma_inverse.mass"):
        load_scenario(SCENARIO, parse_overrides(["controller.force_motion.adaptation.gamma_inverse.mass=-1"]))
    with pytest.raises(ConfigError, match="force_motion.adaptation.estimated_joints"):
        ScenarioGraph(["controller.force_motion.adaptation.estimated_joints=[nowhere]"], scenario=SCENARIO)
    with pytest.raises(ConfigError, match="force_motion.gains.kp.*9"):
        ScenarioGraph(["controller.force_motion.gains.kp=[1, 2]"], scenario=SCENARIO)
    with pytest.raises(ConfigError, match="dynamics.rates.odometry.target.*contact rows"):
        load_scenario(SCENARIO, parse_overrides(["nodes.dynamics.rates.odometry={servicer: 1000.0, target: 100.0}"]))
    with pytest.raises(ConfigError, match="dynamics.rates.grasp_wrench.*force loop"):
        load_scenario(SCENARIO, parse_overrides(["nodes.dynamics.rates.grasp_wrench=100.0"]))


def test_only_a_new_state_of_known_instant_adapts():
    """Under ROS 2 a control period may see a state whose parts come from different instants (sample time NaN) or
    no new state: neither adapts; the next new state adapts with the acceleration over its real interval."""
    sc = load_scenario(SCENARIO)
    system = SystemModel(sc.model)
    mode = AdaptiveForceMotionController(system, sc.controller.force_motion, "servicer")
    q, v = sc.initial_state(system)
    mode.start(q, v)
    mode.update(0.0, q, v, None, 0.0)
    start = mode.estimated.estimate()
    moved = v.copy()
    moved += 1e-3          # every body accelerates (the target's regressor columns need its own acceleration)
    mode.update(0.001, q, moved, None, float("nan"))
    mode.update(0.001, q, v, None, 0.0)                           # the first state again
    assert np.array_equal(mode.estimated.estimate(), start)
    mode.update(0.002, q, moved, None, 0.002)
    assert not np.array_equal(mode.estimated.estimate(), start)


def test_a_step_out_of_the_physical_parameters_is_held(monkeypatch):
    """An adaptation step that would make the target's mass negative is not taken (projection onto the
    physically consistent set); the count says so and the node reports it as a WARN."""
    original = AdaptationLaw.rate

    def too_far(self, *args):
        rate = original(self, *args)
        rate[0] = -1e10                           # kg/s: the mass would go negative within one 1 ms step
        return rate

    monkeypatch.setattr(AdaptationLaw, "rate", too_far)
    graph = ScenarioGraph(scenario=SCENARIO)
    graph.run(0.2)
    mode = graph.controller.force_motion
    assert mode.held_steps > 0
    assert mode.estimated.estimate()[0] == pytest.approx(5500.0)      # never taken: the initial half mass
    status = graph.statuses("controller: force_motion")[-1]
    assert "adaptation step(s) held" in status.message and status.level == 1     # WARN
