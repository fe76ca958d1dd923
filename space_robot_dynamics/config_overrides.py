"""Dotted-key overrides of YAML configuration (`space-robot-sim --set`, the ROS parameter `overrides`, a
scenario's `overrides:` section), applied to the mapping before validation so an override is checked
exactly like the file, and blamed on where it came from when it is wrong.

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
from typing import Any

from .errors import ConfigError


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
