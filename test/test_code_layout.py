"""The architecture as a test: imports point from glue to core, and the tree lints clean."""
import ast
import importlib.util
import re
import shutil
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Layers, core first: a package may import only from layers listed before it (and itself).
LAYERS = ["space_robot_dynamics", "space_robot_control", "space_robot_monitoring", "space_robot_sensing",
          "space_robot_estimation", "space_robot_scenario", "space_robot_nodes", "space_robot_runtime",
          "space_robot_identification", "space_robot_campaign"]
# Core packages with a glue subfolder: outside it they may import only these earlier layers.
CORE_WITH_GLUE = {"space_robot_identification": ("tool", {"space_robot_dynamics", "space_robot_control",
                                                          "space_robot_monitoring"})}
# The folders of space_robot_dynamics, core first: a module may import only from its own folder or earlier ones.
# "" is the package's top-level modules (errors, config_reader, package_share, pinocchio_compat, command_checks),
# which every folder uses; model/ builds the system model, the model file's grasp and contact_surfaces sections and
# their frames included; orbit/ is the orbital environment (reference orbit, LVLH, tidal wrenches on the bodies);
# contact/ is the contact physics on that model; simulation/ steps model, orbit and contacts.
DYNAMICS_FOLDERS = ["", "model", "orbit", "contact", "simulation"]
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


def package_modules(package: str) -> dict[str, Path]:
    """Dotted name -> file of every module of `package` (a package is its __init__.py)."""
    modules = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def lazy_exports_of(path: Path) -> dict[str, str]:
    """A package __init__'s `_EXPORTS`: public name -> the submodule defining it, relative to the package
    (space_robot_dynamics.lazy_exports imports it on first use)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


def module_import_graph(package: str) -> dict[str, dict[str, int]]:
    """module -> {module of the same package it imports: line of the import}, from every import statement of the
    file at any depth (inside functions too), relative imports resolved. Importing a.b.c also runs a/b/__init__.py
    (unless the importer is inside a.b already), and a name a package __init__ exports lazily (`_EXPORTS`) counts
    as an import of the submodule that defines it."""
    modules = package_modules(package)
    exports = {name: lazy_exports_of(path) for name, path in modules.items() if path.name == "__init__.py"}

    def in_package(dotted: str) -> str | None:       # the longest prefix of `dotted` that is a module here
        parts = dotted.split(".")
        return next((m for k in range(len(parts), 0, -1) if (m := ".".join(parts[:k])) in modules), None)

    graph = {}
    for name, path in modules.items():
        own = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges = graph[name] = {}
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets = [in_package(alias.name) for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), own) if node.level \
                    else node.module
                targets = []
                for alias in node.names:
                    target = in_package(f"{base}.{alias.name}")
                    targets.append(target)
                    if target == base and alias.name in exports.get(base, {}):
                        targets.append(in_package(importlib.util.resolve_name(exports[base][alias.name], base)))
            else:
                continue
            for target in filter(None, targets):
                parts = target.split(".")
                for k in range(1, len(parts) + 1):            # the target and the package __init__s it runs
                    module = ".".join(parts[:k])
                    if module in modules and module != name and not (own == module or own.startswith(module + ".")):
                        edges[module] = min(edges.get(module, node.lineno), node.lineno)
    return graph


def import_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The shortest import cycle through each module that is on one (breadth-first), each cycle once, as
    [a, b, ..., a]."""
    cycles, seen = [], set()
    for start in sorted(graph):
        parent, queue, last = {}, deque([start]), None
        while queue and last is None:
            module = queue.popleft()
            for successor in sorted(graph[module]):
                if successor == start:
                    last = module
                    break
                if successor not in parent:
                    parent[successor] = module
                    queue.append(successor)
        if last is None:
            continue
        cycle = [last]
        while cycle[-1] != start:
            cycle.append(parent[cycle[-1]])
        cycle = [*reversed(cycle), start]
        if frozenset(cycle) not in seen:
            seen.add(frozenset(cycle))
            cycles.append(cycle)
    return cycles


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


def test_no_import_cycle_between_modules_of_a_package():
    """Within a package too, imports point one way: no module imports itself back through others."""
    problems = []
    for package in LAYERS:
        graph = module_import_graph(package)
        for cycle in import_cycles(graph):
            steps = [f"{a} (line {graph[a][b]})" for a, b in zip(cycle, cycle[1:])]
            problems.append(" -> ".join([*steps, cycle[-1]]))
    assert not problems, "import cycles:\n" + "\n".join(problems)


def test_dynamics_folders_follow_their_order():
    """A module of space_robot_dynamics imports only from its own folder or folders before it in DYNAMICS_FOLDERS."""
    package = LAYERS[0]

    def folder(module: str) -> str:
        parts = module.split(".")[1:]
        return parts[0] if parts and (ROOT / package / parts[0]).is_dir() else ""

    problems = []
    for module, edges in module_import_graph(package).items():
        if folder(module) not in DYNAMICS_FOLDERS:
            problems.append(f"{module}: folder {folder(module)!r} is not in DYNAMICS_FOLDERS")
            continue
        rank = DYNAMICS_FOLDERS.index(folder(module))
        later = {}                                  # line -> the deepest module of a later folder it imports
        for target, line in sorted(edges.items()):
            if folder(target) in DYNAMICS_FOLDERS and DYNAMICS_FOLDERS.index(folder(target)) > rank:
                later[line] = target
        problems += [f"{package_modules(package)[module].relative_to(ROOT)}:{line} imports {target} "
                     f"({folder(target)}/ comes after {folder(module) or 'the top level'})"
                     for line, target in sorted(later.items())]
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


def test_the_readme_package_table_matches_the_folders():
    """README's *What is in the package* table names every top-level folder and every package folder (a folder with
    an __init__.py), and nothing that does not exist."""
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| folder | what |"):]
    table = table[:table.index("\n\n")]
    listed = {name.rstrip("/") for row in table.splitlines()[2:]
              for name in re.findall(r"`([^`]+/)`", row.split("|")[1])}
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    files = [Path(p) for p in tracked.stdout.splitlines()]
    folders = {p.parts[0] for p in files if len(p.parts) > 1}
    folders |= {str(p.parent) for p in files if p.name == "__init__.py" and len(p.parts) > 2
                and p.parts[0].startswith("space_robot_")}
    assert sorted(folders - listed) == [], "folders missing from the README table"
    assert sorted(listed - folders) == [], "README table rows naming no folder"


def test_nothing_cites_work_item_numbers():
    """Code, configuration and docs say what a thing is and cite the seed, equation, document or design reason: a
    reader of the repository has no work-item numbers (the word "issue" before a number, or a work item's name)."""
    tracked = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.yaml", "*.sh", "*.rviz", "Makefile", "*.cfg"],
                             cwd=ROOT, capture_output=True, text=True)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout")
    pattern = re.compile(r"\bissues? #?\d+|\b\w+ issue's\b", re.IGNORECASE)
    hits = [f"{path}:{number}: {line.strip()}" for path in tracked.stdout.splitlines() if (ROOT / path).is_file()
            for number, line in enumerate((ROOT / path).read_text(errors="replace").splitlines(), start=1)
            if pattern.search(line)]
    assert not hits, "\n".join(hits)
