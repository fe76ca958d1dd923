"""The shipped flexible scenarios run as `space-robot-sim NAME` does (a short stretch each; the seed 000 study runs
in full in test_seed000_flexible_scenario.py): seed 003's flexible joint and the flexible servicer with its
comparison run. The seed 003 run starts with its spring offset of 2.8 deg (Table 3, Test #2) and rings: the
deflection leaves it at once; the flexible servicer records flexible_modes and the deformed beams."""
from __future__ import annotations

import numpy as np
import pytest

from space_robot_dynamics.simulation import compiled_flexible_step
from space_robot_runtime.simulation_run import SimulationRun
from space_robot_scenario import load_scenario, shipped_scenarios


def test_the_flexible_scenarios_are_shipped():
    assert {"seed000_flexible_link", "airbearing_flexible_joint", "servicer_flexible"} <= set(shipped_scenarios())


def test_airbearing_flexible_joint_starts_with_the_spring_offset():
    run = SimulationRun(load_scenario("airbearing_flexible_joint"))
    first = run.simulator.flexible_state()
    assert first.names == ("joint_1/motor", "joint_1/deflection")
    assert first.position[0] == pytest.approx(np.deg2rad(7.5), abs=1e-6)          # q_m1, seed 003 sec. 3.2
    assert first.position[1] == pytest.approx(np.deg2rad(2.8), abs=1e-6)          # lambda1, Table 3 Test #2
    result = run.run(duration=0.5, progress=False)
    deflection = run.simulator.flexible_state().position[1]
    assert abs(deflection) < 0.9 * np.deg2rad(2.8)        # the spring releases: link 1 swings toward its motor
    assert result.summary["flexible"]["max_joint_deflection_rad"]["joint_1"] == pytest.approx(np.deg2rad(2.8),
                                                                                             rel=1e-6)
    # its planar base is not rebuilt by the compiled step (docs/flexibility.md sec. 12): the summary says so
    step = result.summary["flexible_step"]
    assert step["backend"] == "python" and "servicer_base_joint" in step["not_compiled_because"]


@pytest.mark.slow
def test_servicer_flexible_runs_with_its_comparison(tmp_path):
    run = SimulationRun(load_scenario("servicer_flexible"))
    result = run.run(duration=0.3, out_dir=tmp_path / "out", plots=False, progress=False)
    summary = result.summary
    assert summary["complete"] and summary["comparison"]["name"] == "vibration_suppression"
    assert summary["topics"]["flexible_modes"]["recorded"] > 0
    assert summary["topics"]["flexible_links/marker"]["recorded"] > 0
    assert "right_l4/bending_z_1" in summary["flexible"]["max_modal_coordinate"]
    library, missing = compiled_flexible_step.load()          # missing: SPACE_ROBOT_PYTHON_STEP_ONLY=1's machine
    assert summary["flexible_step"] == ({"backend": "compiled", "not_compiled_because": ""} if library else
                                        {"backend": "python", "not_compiled_because": missing})


@pytest.mark.compiled_step
def test_servicer_flexible_steps_compiled():
    """The shipped flexible servicer runs on the compiled step (docs/flexibility.md sec. 12)."""
    simulator = SimulationRun(load_scenario("servicer_flexible")).simulator
    assert (simulator.step_backend, simulator.step_backend_reason) == ("compiled", "")
