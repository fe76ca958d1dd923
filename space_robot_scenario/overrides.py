"""Dotted-key overrides of YAML configuration (`space-robot-sim --set`, the ROS parameter `overrides`, a
scenario's `overrides:` section, a campaign's parameters), in one place: parsed from KEY=VALUE text, routed to the
file they change, applied to the mapping before validation so an override is checked exactly like the file, and
blamed on where it came from when it is wrong.

A KEY starting with `model.`, `nodes.`, `controller.` or `monitor.` sets an entry of the file the scenario names
under that key; any other KEY sets an entry of the scenario itself.

A key is a dotted path: mapping keys by name; list entries by index (`subtrees.0`) or, for lists of mappings
with a `name`, by that name (`subtrees.servicer.xacro_args.wheel_layout`). Missing mapping levels are
created (validation then rejects unknown keys); a path cannot go below a value that is neither a mapping nor a
list, nor to a list entry that does not exist.
"""
from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from space_robot_dynamics.config_reader import ConfigReader, parse_yaml, yaml_error_text
from space_robot_dynamics.errors import ConfigError

OVERRIDABLE = ("model", "nodes", "controller", "monitor")     # the files a scenario names
SCENARIO = "scenario"                                         # Override.target of the scenario's own entries


@dataclass(frozen=True)
class Override:
    """One override: `key` (dotted) of the file `target` is set to `value`; `origin` says who asked for it,
    e.g. "--set model.gravity=[0, 0, 0]". `field` is the key in the validators' spelling, once applied
    (`subtrees[0].xacro_args.wheel_layout`)."""

    target: str
    key: str
    value: Any
    origin: str
    field: str = ""


def apply_overrides(data: dict, overrides, source: str | None = None) -> dict:
    """A copy of `data` with the overrides applied. `overrides`: Override objects, or a mapping dotted key ->
    value. ConfigError naming the override for a path that cannot be followed."""
    merged, _applied = apply_with_fields(data, _as_overrides(overrides, "", source))
    return merged


def apply_with_fields(data: dict, overrides: list[Override]) -> tuple[dict, list[Override]]:
    """(copy of data with the overrides applied, the overrides with `field` filled in)."""
    merged = copy.deepcopy(data)
    applied = []
    for override in overrides:
        applied.append(replace(override, field=_set(merged, override)))
    return merged, applied


def _set(data: dict, override: Override) -> str:
    node: Any = data
    parts = override.key.split(".")
    field = ""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, dict):
            field = f"{field}.{part}" if field else part
            if last:
                node[part] = override.value
                return field
            child = node.get(part)
            if child is None:
                child = node[part] = {}
            node = child
        elif isinstance(node, list):
            index = _list_index(node, part)
            if index is None:
                names = [e.get("name") for e in node if isinstance(e, dict) and "name" in e]
                raise ConfigError(field, f"has no entry {part!r} (give an index 0..{len(node) - 1}"
                                  + (f" or a name: {names})" if names else ")"), override.origin)
            field = f"{field}[{index}]"
            if last:
                node[index] = override.value
                return field
            node = node[index]
        else:
            raise ConfigError(field or override.key, f"is {node!r}, neither a mapping nor a list: cannot set "
                              f"{'.'.join(parts[i:])!r} below it", override.origin)
    return field


def _list_index(items: list, part: str) -> int | None:
    if part.lstrip("-").isdigit():
        index = int(part)
        return index if 0 <= index < len(items) else None
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get("name") == part:
            return index
    return None


def _as_overrides(overrides, target: str, origin: str | None) -> list[Override]:
    if isinstance(overrides, dict):
        return [Override(target, str(key), value, origin or "overrides") for key, value in overrides.items()]
    return list(overrides)


@contextmanager
def blamed(overrides: list[Override]) -> Iterator[None]:
    """Re-raise a ConfigError about a field an override set (or something below or above it) as the
    override's fault: its message then names the override (e.g. the --set argument) instead of the file."""
    try:
        yield
    except ConfigError as exc:
        culprit = _culprit(exc.field, overrides)
        if culprit is None:
            raise
        where = f" (in {exc.source})" if exc.source else ""
        raise ConfigError(exc.field, f"{exc.problem}{where}", culprit.origin) from exc


def _culprit(field: str, overrides: list[Override]) -> Override | None:
    def within(inner: str, outer: str) -> bool:
        return inner == outer or inner.startswith(outer + ".") or inner.startswith(outer + "[")

    matches = [o for o in overrides if o.field and (within(field, o.field) or within(o.field, field))]
    return max(matches, key=lambda o: len(o.field)) if matches else None


def parse_overrides(items, origin: str = "--set") -> list[Override]:
    """Overrides from KEY=VALUE strings (the syntax of `space-robot-sim --set` and of the ROS parameter
    `overrides`); VALUE is YAML. A KEY starting with `model.`, `nodes.`, `controller.` or `monitor.` sets an
    entry of that file (controller.controller.modes=[joint_tracking]); any other KEY sets an entry of the
    scenario itself (simulation.dt=0.0005, duration=3, model=my_model.yaml, initial_state.target.
    angular_velocity=[0, 0, 0.05]). Keys are dotted paths; list entries by index or by `name`
    (model.subtrees.servicer.xacro_args.wheel_layout=pyramid). `origin` names the source in error messages.
    """
    import yaml

    out = []
    for item in items:
        text = str(item)
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not key or any(not part for part in key.split(".")):
            raise ConfigError("overrides", f"{text!r} is not KEY=VALUE (e.g. simulation.dt=0.0005 or "
                              f"FILE.KEY=VALUE with FILE one of {list(OVERRIDABLE)})")
        try:
            parsed = parse_yaml(value)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{origin} {text}", f"the value is not YAML: {yaml_error_text(exc)}") from exc
        target, dot, dotted = key.partition(".")
        if target in OVERRIDABLE and dot:
            out.append(Override(target, dotted, parsed, f"{origin} {text}"))
        else:
            out.append(Override(SCENARIO, key, parsed, f"{origin} {text}"))
    return out


def normalized(overrides) -> list[Override]:
    """Override objects from parse_overrides, or the older mapping {file: {dotted key: value}}."""
    if overrides is None:
        return []
    if isinstance(overrides, dict):
        return [Override(target, str(key), value, f"override {target}.{key}")
                for target, entries in overrides.items() for key, value in (entries or {}).items()]
    return list(overrides)


def scenario_overrides(given: list[Override]) -> list[Override]:
    """The overrides of the scenario's own entries; a file named on the command line (--set model=my_model.yaml) is
    where the user stands: made absolute."""
    own = [o for o in given if o.target == SCENARIO]
    return [replace(o, value=str(Path(o.value).resolve()))
            if o.key in OVERRIDABLE and isinstance(o.value, str) and Path(o.value).is_file() else o for o in own]


def file_overrides(reader: ConfigReader, given: list[Override]) -> dict[str, list[Override]]:
    """Per file the scenario names: the scenario's own `overrides:` entries, then the given ones (which win)."""
    sub = reader.sub("overrides", {})
    out: dict[str, list[Override]] = {}
    for name in OVERRIDABLE:
        section = sub.raw(name, {}) or {}
        if not isinstance(section, dict):
            raise sub.error(name, "must be a mapping of dotted keys to values")
        out[name] = [Override(name, str(key), value, f"{reader.source}: overrides.{name}.{key}")
                     for key, value in section.items()]
        out[name] += [o for o in given if o.target == name]
    sub.reject_unknown()
    return out
