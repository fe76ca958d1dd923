"""The shipped seed 003 study (config/identification/seed003_study.yaml) run end to end by space-robot-identify,
shortened to keep the suite fast: its main case (2.8 deg offset) only, the first 4 s of the test sampled at 25 Hz
(instead of 10 s at 100 Hz), one noise seed (instead of 10), one start per fit. Everything else is the shipped
file's: the model, the trajectory, the parameters' bounds and starts, the noise, both methods and their stopping
rules, the headline. The full study's figures are in docs/identification.md.

Tolerances: noise-free, both methods recover every parameter to 1e-6 relative (their stopping rules: least
squares' relative step 1e-12, Nelder-Mead's simplex 1e-9 wide in u = theta / bound width, left a few times wider
along the flat I_m-k valley; test_identification_fitting.py); noisy, every estimate lies within 3 of its own
Cramer-Rao sigma of the truth (a 0.3 % chance for each of the 8 estimates if the sigma is right).
"""
from __future__ import annotations

import json

import pytest
import yaml

from space_robot_dynamics.package_share import resolve
from space_robot_identification.identification_config import load_identification_config
from space_robot_identification.tool.cli import identify_main

PARAMETERS = ("joint_1.motor_inertia", "joint_1.stiffness", "joint_1.damping", "joint_1.spring_offset")


def test_the_shipped_study_loads_with_its_parameters_methods_and_headline():
    """Without running it (the fast lane's check of the file; the run below is `slow`)."""
    config = load_identification_config("config/identification/seed003_study.yaml")
    assert config.space.names == PARAMETERS and config.methods == ("nelder_mead", "least_squares")
    assert config.synthetic.main_case.name == "offset_2.8deg"
    assert [h.key for h in config.headline] == ["mean_relative_error_I_m", "mean_relative_error_k",
                                                "mean_relative_error_b"]


@pytest.fixture(scope="module")
def summary(tmp_path_factory):
    data = yaml.safe_load(resolve("config/identification/seed003_study.yaml").read_text())
    assert data["problem"]["kind"] == "elastic_joint" and set(data["parameters"]) == set(PARAMETERS)
    data["window"]["end"] = 4.0
    data["multi_start"] = {"count": 1}
    synthetic = data["synthetic_data"]
    synthetic["sample_rate"] = 25.0
    synthetic["cases"] = [c for c in synthetic["cases"] if c.get("main")]
    synthetic["noise"]["seeds"] = [1]
    folder = tmp_path_factory.mktemp("seed003")
    config = folder / "seed003_short.yaml"
    config.write_text(yaml.safe_dump(data, sort_keys=False))
    status = identify_main([str(config), "--out", str(folder / "out"), "--no-progress"])
    assert status == 0
    text = (folder / "out" / "summary.json").read_text()
    return folder / "out", json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict JSON constant {c}"))


@pytest.mark.slow
def test_headline_keys_and_plots(summary):
    out, result = summary
    for key in ("mean_relative_error_I_m", "mean_relative_error_k", "mean_relative_error_b"):
        assert isinstance(result[key], float), key
    assert result["headline_case"] == "offset_2.8deg" and result["methods"] == ["nelder_mead", "least_squares"]
    assert set(result["plots"]) == {"fit_problem_offset_2.8deg.png", "residuals_problem_offset_2.8deg.png"}
    assert all((out / p).stat().st_size > 0 for p in result["plots"])


@pytest.mark.parametrize("method", ["nelder_mead", "least_squares"])
@pytest.mark.slow
def test_noise_free_recovery(summary, method):
    record = next(r for r in summary[1]["results"] if r["noise_seed"] is None and r["method"] == method)
    assert record["success"], record["message"]
    for name in PARAMETERS:
        assert record["estimates"][name]["relative_error"] < 1e-6, (name, record["estimates"][name])


@pytest.mark.parametrize("method", ["nelder_mead", "least_squares"])
@pytest.mark.slow
def test_noisy_recovery_within_the_predicted_uncertainty(summary, method):
    record = next(r for r in summary[1]["results"] if r["noise_seed"] == 1 and r["method"] == method)
    assert record["success"], record["message"]
    for name in PARAMETERS:
        estimate = record["estimates"][name]
        assert estimate["sigma"] is not None and abs(estimate["error"]) <= 3.0 * estimate["sigma"], (name, estimate)
        assert estimate["within_3_sigma"]
