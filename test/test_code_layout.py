"""The architecture as a test: imports point from glue to core, and the tree lints clean."""
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Layers, core first: a package may import only from layers listed before it (and itself).
LAYERS = ["space_robot_dynamics", "space_robot_control", "space_robot_monitoring", "space_robot_scenario",
          "space_robot_nodes", "space_robot_runtime", "space_robot_identification", "space_robot_campaign"]
# Core packages with a glue subfolder: outside it they may import only these earlier layers.
CORE_WITH_GLUE = {"space_robot_identification": ("tool", {"space_robot_dynamics", "space_robot_control",
                                                          "space_robot_monitoring"})}
ROS_ONLY = ("rclpy", "launch", "launch_ros", "ament_index_python", "tf2_ros")
# The optional extra `campaign` (setup.py): only space_robot_campaign may import these.
CAMPAIGN_ONLY = ("ray", "pyarrow")


def imported_modules(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0], node
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module.split(".")[0], node


def test_imports_point_from_glue_to_core():
    problems = []
    for rank, package in enumerate(LAYERS):
        forbidden = set(LAYERS[rank + 1:])
        for path in sorted((ROOT / package).rglob("*.py")) if (ROOT / package).is_dir() else []:
            glue = "ros" in path.relative_to(ROOT / package).parts
            for module, node in imported_modules(path):
                if module in forbidden:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module} (a later layer)")
                if module in ROS_ONLY and not glue and module != "ament_index_python":
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module} outside ros/ glue")
    assert not problems, "\n".join(problems)


def test_core_parts_stay_out_of_the_glue():
    """space_robot_identification is core (ROS-free, no nodes or runtime) outside its tool/ folder, the glue of
    space-robot-identify (bags, output directory, scenario runs)."""
    problems = []
    layered = set(LAYERS)
    for package, (glue_folder, allowed) in CORE_WITH_GLUE.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            if glue_folder in path.relative_to(ROOT / package).parts:
                continue
            for module, node in imported_modules(path):
                if module in layered and module != package and module not in allowed:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module} outside {glue_folder}/")
                if module in ("rosbags", *ROS_ONLY):
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module} outside {glue_folder}/")
    assert not problems, "\n".join(problems)


def test_only_the_campaign_package_imports_the_campaign_extra():
    problems = []
    for package in LAYERS[:-1]:
        for path in sorted((ROOT / package).rglob("*.py")):
            for module, node in imported_modules(path):
                if module in CAMPAIGN_ONLY:
                    problems.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {module} (extra [campaign])")
    assert not problems, "\n".join(problems)


def test_module_names_say_what_they_hold():
    vague = {"utils.py", "helpers.py", "misc.py", "manager.py", "common.py"}
    ours = [ROOT / d for d in (*LAYERS, "test", "bench", "launch", ".ci")]
    offenders = [str(p.relative_to(ROOT)) for d in ours if d.is_dir() for p in d.rglob("*.py") if p.name in vague]
    assert not offenders


def test_ruff_is_clean():
    ruff = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
    if not Path(ruff).exists():
        pytest.skip("ruff is not installed (it comes with the [test] extra)")
    result = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
