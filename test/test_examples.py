"""Every script in examples/ runs as a newcomer runs it and prints its figures; the physical ones are bounded.

Scripts are discovered (examples/*.py): a new one is run and checked for its figures without editing this file.
Each runs in a subprocess with this suite's Python (the venv's), its working directory and its output folder (the
first argument) in tmp_path, so nothing lands in the repository. A figure is a printed line `name = value ...`;
every script must print at least three, all finite, and every file it says it wrote must exist. Where a script
states a physical figure (momentum drift, impulse, energy loss, ...), CHECKS bounds it, with the reason for the
bound; a bound that names a figure the script no longer prints fails.
"""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
FIGURE = re.compile(r"^(\w+) = (\S+)", re.MULTILINE)
TIMEOUT = 300.0     # s per script: ~15 s of CPU at most, on a 2-core machine shared with other work

# script -> [(figure, relation, bound, why)]; relation "<", ">", "==", or "~" (bound = (value, relative tolerance))
CHECKS = {
    "free_floating_momentum.py": [
        ("relative_linear_momentum_drift", "<", 1e-9, "RK4 at 1 ms, 1e4 steps: ~1e-11 of the largest body momentum "
         "(test_conservation.py); 100x margin for round-off, and a wrong Coriolis term (~1e-7) or frame (O(1)) fails"),
        ("relative_angular_momentum_drift", "<", 1e-9, "as the linear momentum"),
    ],
    "grasp_impulse.py": [
        ("momentum_change_across_grasp", "<", 1e-13, "the impulse is an internal action-reaction pair: momentum "
         "unchanged to round-off (test_contact_impulse.py's bound; the capture scenario requires 1e-12)"),
        ("linear_momentum_change", "<", 1e-12, "kg m/s: 1e-13 of |p| ~ 6 kg m/s, the impulse and one RK4 step"),
        ("angular_momentum_change", "<", 1e-12, "kg m^2/s: as the linear momentum, |L_G| ~ 3 kg m^2/s"),
        ("energy_loss_expected", ">", 1e-6, "J: hand and fixture approach at 8 mm/s, a plastic impact takes energy"),
        ("energy_loss_relative_error", "<", 1e-9, "the simulator's impulse against eq. 2 assembled independently "
         "(CRBA, frame Jacobians): 1e-9 as test_contact_impulse.py, the KKT solve's condition"),
        ("kinetic_energy_drop", "~", ("energy_loss_expected", 1e-6), "T- - T+ over the impulse and 1 ms held "
         "without torques (the weld does no work): equal to eq. 2 to the 7 printed digits"),
    ],
    "flexible_vs_rigid.py": [
        ("max_tip_deflection", "~", (1.72e-3, 0.02), "m, docs/flexibility.md sec. 8 (3 digits; the 0.5 kg/m beam "
         "gives other figures: a wrong mass model or frequency fails)"),
        ("max_end_effector_difference", "~", (0.61e-3, 0.02), "m, docs/flexibility.md sec. 8 (0.5 kg/m: 1.15 mm)"),
        ("max_joint_angle_difference", "~", (1.7e-3, 0.03), "rad, docs/flexibility.md sec. 8 (2 digits)"),
    ],
    "orbit_relative_motion.py": [
        ("radial_drift_m", "~", (0.0175, 0.02), "m: CW's (4 - 3 cos nt) x0 - x0 = 1.5 (n t)^2 x0 for x0 ~ 1.7 m, 80 s"),
        ("cw_error_m", "<", 5e-8, "m: the second-order tidal term, (3/2) d / r of the 1.75 cm drift, ~7e-9 m; a "
         "frame or sign error in the tidal forces is O(1 cm)"),
        ("momentum_balance_linear", "<", 1e-12, "relative: round-off (test_orbit_momentum_balance.py's bound)"),
        ("momentum_balance_angular", "<", 1e-12, "as the linear balance"),
    ],
    "holonomy_monitor_report.py": [
        ("level", "==", "OK", "no external force: momentum conserved, no singularity (docs/holonomy.md sec. 9)"),
        ("constraint_rank", "==", 6, "docs/holonomy.md sec. 2: the base is determined by the joint rates"),
        ("nonholonomy_rank", "==", 3, "docs/holonomy.md sec. 4: 3 for the servicer"),
        ("linear_residual_fraction", "<", 1e-9, "config/monitor.yaml: RK4 keeps it below 1e-9 over 1 s"),
        ("linear_integrability_residual", "<", 1e-12, "docs/holonomy.md sec. 6: zero to round-off (4e-17 measured); "
         "a modelling error is O(1)"),
        ("pushed_level", "==", "WARN", "0.1 N for 1 s is 0.1 N s, ~6e-3 of the 18 N s capacity: between the WARN "
         "(1e-3) and ERROR (1e-2) fractions of config/monitor.yaml"),
        ("mean_external_force_error", "<", 1e-8, "N: p(t) - p(t0) = F (t - t0) holds to round-off under RK4 "
         "(python_api.md sec. 5 checks 1e-9 N s)"),
    ],
    "identify_target_inertia.py": [
        ("converged", "==", "True", "least squares on a linear problem from a 33 % wrong prior"),
        ("mass_relative_error", "<", 1e-9, "noise-free data conserving momentum to ~1e-13, regression condition "
         "~1e3: ~1e-10 (test_identification_target.py's bound)"),
        ("com_error", "<", 1e-9, "m, as the mass"),
        ("inertia_relative_error", "<", 1e-9, "as the mass"),
    ],
    "campaign_in_process.py": [
        ("still_target_pregrasp_distance", "<", 0.01, "m: the scenario's requirement holds with a still target "
         "(docs/campaigns.md: 10/10 at rate 0)"),
        ("fastest_tumble_pregrasp_distance", ">", 0.01, "m: 0.004 rad/s for ~8 s turns the fixture, 0.65 m from "
         "the target's centre, ~2 cm away from the pose planned for a still target"),
        ("max_angular_momentum_drift", "<", 1e-9, "kg m^2/s: at most 1.2 kg m^2/s in the system (300 kg m^2 at "
         "0.004 rad/s), conserved to 1e-9 relative by RK4 (test_conservation.py)"),
    ],
    "controller_by_hand.py": [
        ("wheels_on_max_bus_attitude_error", "<", 1e-6, "rad: the runtime's 1.9e-7 for the same motion "
         "(docs/campaigns.md), the requirement 1e-3"),
        ("wheels_on_final_tracking_error", "<", 1e-4, "rad: the scenario's final_tracking_error requirement"),
        ("wheels_on_angular_momentum", "<", 1e-9, "kg m^2/s: from rest under internal torques (python_api.md sec. 3)"),
        ("wheels_off_max_bus_attitude_error", "~", (6e-3, 0.3), "rad: servicer_pregrasp.yaml says ~6e-3 rad with "
         "the wheels off; the wheels-on figure would fail"),
    ],
}


def figures(stdout: str) -> dict:
    """name -> float, or the text when it is not a number."""
    out = {}
    for name, text in FIGURE.findall(stdout):
        text = text.rstrip(",;:")
        try:
            out[name] = float(text)
        except ValueError:
            out[name] = text
    return out


def holds(value, relation, bound, printed) -> bool:
    if relation == "==":
        return value == bound
    if relation == "<":
        return value < bound
    if relation == ">":
        return value > bound
    reference, tolerance = bound
    reference = printed[reference] if isinstance(reference, str) else reference
    return abs(value - reference) <= tolerance * abs(reference)


def test_every_bound_names_a_script_here():
    assert set(CHECKS) <= {p.name for p in EXAMPLES}, set(CHECKS) - {p.name for p in EXAMPLES}


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_the_script_says_what_it_shows_and_is_listed(script):
    text = script.read_text()
    assert text.startswith('"""'), "starts with a docstring saying what it shows"
    assert f".venv/bin/python examples/{script.name}" in text, "its docstring says how to run it"
    assert f"({script.name})" in (ROOT / "examples" / "README.md").read_text(), "examples/README.md lists it"


@pytest.mark.slow
@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_the_script_runs_and_its_figures_hold(script, tmp_path):
    out = tmp_path / "out"
    # as setup.cfg's `pythonpath = .` does for this suite: the checkout's packages, also those added after the
    # venv's editable install was made
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "MPLBACKEND": "Agg"}
    env.pop("SPACE_ROBOT_EXAMPLES_OUT", None)
    result = subprocess.run([sys.executable, str(script), str(out)], cwd=tmp_path, env=env, capture_output=True,
                            text=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr[-3000:]
    print(result.stdout)
    printed = figures(result.stdout)
    assert len(printed) >= 3, f"prints its figures as `name = value unit`:\n{result.stdout}"
    for name, value in printed.items():
        assert isinstance(value, str) or math.isfinite(value), (name, value)
    for path in re.findall(rf"{re.escape(str(tmp_path))}\S*", result.stdout):
        assert Path(path).exists(), f"says it wrote {path}"
    for name, relation, bound, why in CHECKS.get(script.name, []):
        assert name in printed, f"{name} is no longer printed"
        assert holds(printed[name], relation, bound, printed), \
            f"{name} = {printed[name]}, not {relation} {bound}: {why}"
