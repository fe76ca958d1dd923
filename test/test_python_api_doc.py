"""docs/python_api.md runs: its ```python blocks are executed in order in one namespace, so every example and
every assertion on the page (momentum conservation, Newton, energy, the meaning of K) is checked by the suite;
and every name its table lists is exported by that package."""
import importlib
import re
from pathlib import Path

from test_public_api import PACKAGES

DOC = Path(__file__).resolve().parents[1] / "docs" / "python_api.md"


def test_the_python_api_page_runs():
    blocks = re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), flags=re.S | re.M)
    assert len(blocks) >= 8
    namespace: dict = {}
    for number, block in enumerate(blocks, start=1):
        exec(compile(block, f"{DOC.name} block {number}", "exec"), namespace)


def test_the_names_in_the_table_are_exported():
    rows = re.findall(r"^\| `(space_robot_\w+)` \| (.*) \|$", DOC.read_text(), flags=re.M)
    assert {package for package, _ in rows} == set(PACKAGES)     # one row per package, none left out
    for package, names in rows:
        exported = importlib.import_module(package).__all__
        listed = re.findall(r"`(\w+)`", names)
        assert listed and not [name for name in listed if name not in exported], package
