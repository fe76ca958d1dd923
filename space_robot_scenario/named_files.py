"""The configuration files a scenario names (`model:`, `nodes:`, `controller:`, `monitor:`), each read with its
overrides applied, before any is validated. A name is looked up next to the scenario first, then in the package
share; `controller: null` and `monitor: null` mean no controller node and no holonomy monitor."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from space_robot_dynamics.config_reader import ConfigReader, load_yaml_file
from space_robot_dynamics.errors import ConfigError

from .overrides import OVERRIDABLE, Override, apply_with_fields

DEFAULT_FILES = {"model": "config/models/servicer_target.yaml", "nodes": "config/nodes.yaml",
                 "controller": "config/controller.yaml", "monitor": "config/monitor.yaml"}
MAY_BE_NULL = ("controller", "monitor")


@dataclass(frozen=True)
class NamedFile:
    """One named file: its mapping with the overrides applied (None: `null` in the scenario), its path, and the
    overrides with the fields they set (to blame them for an error there)."""

    reader: ConfigReader | None
    path: Path | None
    overrides: tuple = ()


def read_named_files(reader: ConfigReader, overrides: dict[str, list[Override]]) -> dict[str, NamedFile]:
    """Every file the scenario `reader` names, by key (OVERRIDABLE), with `overrides[key]` applied."""
    files = {}
    for key in OVERRIDABLE:
        if key in MAY_BE_NULL and reader.has(key) and reader.raw(key) is None:
            if overrides[key]:
                raise ConfigError(key, f"is null (no {key}), so {overrides[key][0].key!r} cannot be set in it",
                                  overrides[key][0].origin)
            files[key] = NamedFile(None, None)
            continue
        path = reader.file_path(key, DEFAULT_FILES[key])
        file_reader = load_yaml_file(path)
        applied: list[Override] = []
        if overrides[key]:
            data, applied = apply_with_fields(file_reader.data, overrides[key])
            file_reader = ConfigReader(data, file_reader.source, directory=file_reader.directory)
        files[key] = NamedFile(file_reader, path, tuple(applied))
    return files
