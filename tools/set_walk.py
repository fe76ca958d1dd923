"""Follow a `--set` value by its calls, from space-robot-sim's main() to the simulator that uses it.

    .venv/bin/python tools/set_walk.py [--set KEY=VALUE] [--verbose]

Runs `space-robot-sim servicer_pregrasp --set KEY=VALUE` in this process (0.002 s simulated, no plots, into a
temporary directory) under a profiler hook that records every call into this repository's packages until the first
physics step. It prints the walk a reader makes following the value with "go to definition": our files in the order
they are first entered, the package (layer) of each, and

- files: how many files the walk enters;
- packages per layer: the packages entered in each architectural layer (test_code_layout.LAYERS);
- climbs back up: calls, among those, from a file of one layer into a file of a *higher* layer (towards the glue):
  the value, already down in a core, is handed back up to glue code by a call, not by returning to its caller.
  A reader following the calls has to climb back up the layers there (a callback, or an object of a higher layer
  passed down and called).

A walk that only descends has none; returning to a caller is not a climb. The figures compare layouts; they are
not a test.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "test"))

from test_code_layout import LAYERS  # noqa: E402


class _ReachedSimulator(BaseException):     # not an Exception: the CLI's last resort must let it through
    pass


def layer_of(path: Path) -> tuple[int, str]:
    package = path.relative_to(ROOT).parts[0]
    return (LAYERS.index(package) if package in LAYERS else -1), package


def _leaves(value) -> list:
    """The objects a parsed value is made of that keep their identity through copies: floats and strings (small
    ints, booleans and None are shared by every use, so they cannot be followed)."""
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value] if isinstance(value, (float, str)) or (isinstance(value, int) and not -5 <= value <= 256
                                                         and not isinstance(value, bool)) else []


def _holds(obj, values: list, depth: int = 5) -> bool:
    """Whether `obj` is one of `values` or holds one within `depth` levels of mappings, sequences and attributes."""
    if any(obj is value for value in values):
        return True
    if depth == 0 or isinstance(obj, (str, bytes, int, float, bool, type(None))):
        return False
    if isinstance(obj, dict):
        children = obj.values()
    elif isinstance(obj, (list, tuple, set, frozenset)):
        children = obj
    else:
        children = getattr(obj, "__dict__", {}).values()
    return any(_holds(child, values, depth - 1) for child in list(children)[:200])


def walk(set_value: str, scenario: str = "servicer_pregrasp") -> list[tuple[Path, str, Path | None]]:
    """(file, function) of every call that receives the --set value (or an object holding it, 5 levels deep), in
    first-entry order, from main() to the Simulator's construction. The value is the very object the --set text parses
    to: copies of a configuration mapping keep it (floats are immutable), and so do the settings built from it."""
    from space_robot_runtime.cli import sim_main

    ours = tuple(str(ROOT / p) for p in LAYERS)
    seen: dict[tuple[Path, str, Path | None], None] = {}
    text = "".join(["--set=", set_value])[len("--set="):]      # a string object of its own, followed from argv
    tracked: list = [text]    # then the leaves of the parsed value, once parse_yaml has returned it

    def profile(frame, event, arg):
        code = frame.f_code
        if code.co_name == "parse_yaml" and event == "return" and len(tracked) == 1 and \
                frame.f_locals.get("text", "").strip() == set_value.partition("=")[2].strip():
            tracked.extend(_leaves(arg))
            return
        if event != "call" or not code.co_filename.startswith(ours) or code.co_name == "<module>":
            return
        if code.co_name == "step" and code.co_filename.endswith("simulation/simulator.py"):
            raise _ReachedSimulator         # the first physics step: the value has arrived wherever it goes
        arguments = [frame.f_locals[name] for name in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
                     if name in frame.f_locals]
        if any(_holds(a, tracked) for a in arguments):
            caller = frame.f_back
            while caller is not None and not caller.f_code.co_filename.startswith(ours):
                caller = caller.f_back
            seen.setdefault((Path(code.co_filename), code.co_qualname if hasattr(code, "co_qualname")
                             else code.co_name, Path(caller.f_code.co_filename) if caller else None), None)
            if code.co_name == "__init__" and code.co_filename.endswith("simulation/simulator.py"):
                raise _ReachedSimulator

    with tempfile.TemporaryDirectory() as out:
        sys.setprofile(profile)
        try:
            sim_main([scenario, "--set", text, "--duration", "0.002", "--no-plots",
                      "--no-progress", "--out", str(Path(out) / "run")])
        except _ReachedSimulator:
            pass
        finally:
            sys.setprofile(None)
    return list(seen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="simulation.dt=0.0005", dest="set_value")
    parser.add_argument("--scenario", default="servicer_pregrasp")
    parser.add_argument("--verbose", action="store_true", help="print every file of the walk")
    args = parser.parse_args()
    calls = walk(args.set_value, args.scenario)
    files = list(dict.fromkeys(path for path, _, _ in calls))
    climbs = list(dict.fromkeys((caller, path) for path, _, caller in calls
                                if caller is not None and layer_of(path)[0] > layer_of(caller)[0]))
    per_layer: dict[int, set] = {}
    for path in files:
        rank, package = layer_of(path)
        per_layer.setdefault(rank, set()).add(package)
    if args.verbose:
        for path, function, caller in calls:
            print(f"  {str(path.relative_to(ROOT)):<58} {function:<40} <- {caller.relative_to(ROOT) if caller else ''}")
    functions = len({(path, function) for path, function, _ in calls})
    print(f"--set {args.set_value}: {len(files)} files ({functions} functions), {len(climbs)} climbs back up")
    for rank in sorted(per_layer):
        print(f"  layer {rank}: {', '.join(sorted(per_layer[rank]))}")
    for caller, path in climbs:
        print(f"  climb: {caller.relative_to(ROOT)} calls {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
