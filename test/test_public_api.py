"""The public API: the names each package exports, imported on first use, and scenarios by the names the CLI takes.

The examples of docs/python_api.md are run by test_python_api_doc.py.
"""
import pytest

from space_robot_dynamics.errors import ConfigError
from space_robot_nodes.scenario import find_scenario, load_scenario
from space_robot_runtime.cli import scenario_path


@pytest.mark.parametrize("text", ["servicer_pregrasp", "servicer_pregrasp.yaml",
                                  "config/scenarios/servicer_pregrasp.yaml"])
def test_load_scenario_takes_the_names_the_cli_takes(text):
    assert find_scenario(text) == scenario_path(text)
    assert load_scenario(text).name == "servicer_pregrasp"


def test_load_scenario_takes_a_path_in_the_working_directory(tmp_path, monkeypatch):
    (tmp_path / "mine.yaml").write_text(find_scenario("sawyer_lab").read_text())
    monkeypatch.chdir(tmp_path)
    assert find_scenario("mine.yaml") == scenario_path("mine.yaml") == tmp_path / "mine.yaml"
    assert load_scenario("mine.yaml").name == "sawyer_lab"
    with pytest.raises(ConfigError, match="scenario: 'nothing_here': no such file"):
        load_scenario("nothing_here")
