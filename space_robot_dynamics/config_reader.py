"""Validated reading of YAML configuration: every error names the file and the dotted field path.

A small reader instead of a schema library keeps the error messages in our words, e.g.
``config/scenarios/demo.yaml: simulation.dt: must be > 0, got -0.001``.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .errors import ConfigError

_MISSING = object()


def load_yaml_file(path: str | Path) -> ConfigReader:
    """Read a YAML mapping from `path`; a missing file or a syntax error raises ConfigError."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError("<file>", f"cannot read: {exc.strerror}", str(path)) from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError("<yaml>", f"not valid YAML: {exc}", str(path)) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("<root>", f"must be a mapping, got {type(data).__name__}", str(path))
    return ConfigReader(data, source=str(path))


class ConfigReader:
    """A view on one YAML mapping that reads typed, range-checked fields and rejects unknown keys."""

    def __init__(self, data: dict, source: str | None = None, path: str = ""):
        if not isinstance(data, dict):
            raise ConfigError(path or "<root>", f"must be a mapping, got {type(data).__name__}", source)
        self.data = data
        self.source = source
        self.path = path
        self._read: set[str] = set()

    # ---- plumbing -------------------------------------------------------------------------
    def field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(self.field(key), problem, self.source)

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        self._read.add(key)
        if key not in self.data:
            if default is _MISSING:
                raise self.error(key, "is required")
            return default
        return self.data[key]

    def reject_unknown(self) -> None:
        """Raise on keys nobody read: a typo in a YAML key must not be silently ignored."""
        unknown = sorted(set(self.data) - self._read)
        if unknown:
            raise self.error(unknown[0], f"unknown key (known here: {', '.join(sorted(self._read)) or 'none'})")

    # ---- typed readers --------------------------------------------------------------------
    def sub(self, key: str, default: Any = _MISSING) -> ConfigReader:
        value = self.raw(key, {} if default is _MISSING else default)
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise self.error(key, f"must be a mapping, got {type(value).__name__}")
        return ConfigReader(value, self.source, self.field(key))

    def sub_list(self, key: str) -> list[ConfigReader]:
        items = self.raw(key)
        if not isinstance(items, list) or not items:
            raise self.error(key, "must be a non-empty list of mappings")
        return [ConfigReader(item, self.source, f"{self.field(key)}[{i}]") if isinstance(item, dict)
                else _raise(self.error(f"{key}[{i}]", "must be a mapping")) for i, item in enumerate(items)]

    def string(self, key: str, default: Any = _MISSING, choices: Iterable[str] | None = None) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, got {value!r}")
        if choices is not None and value not in choices:
            raise self.error(key, f"must be one of {sorted(choices)}, got {value!r}")
        return value

    def boolean(self, key: str, default: Any = _MISSING) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, got {value!r}")
        return value

    def number(self, key: str, default: Any = _MISSING, *, minimum: float | None = None,
               maximum: float | None = None, exclusive_minimum: float | None = None) -> float:
        value = self.raw(key, default)
        return check_number(value, self.field(key), self.source, minimum=minimum, maximum=maximum,
                            exclusive_minimum=exclusive_minimum)

    def integer(self, key: str, default: Any = _MISSING, *, minimum: int | None = None) -> int:
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"must be an integer, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.error(key, f"must be >= {minimum}, got {value}")
        return value

    def vector(self, key: str, size: int | None = None, default: Any = _MISSING, **bounds) -> np.ndarray:
        value = self.raw(key, default)
        if not isinstance(value, (list, tuple)):
            raise self.error(key, f"must be a list of numbers, got {value!r}")
        if size is not None and len(value) != size:
            raise self.error(key, f"must have {size} entries, got {len(value)}")
        return np.array([check_number(v, f"{self.field(key)}[{i}]", self.source, **bounds)
                         for i, v in enumerate(value)], dtype=float)

    def string_list(self, key: str, default: Any = _MISSING) -> list[str]:
        value = self.raw(key, default)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.error(key, f"must be a list of strings, got {value!r}")
        if len(set(value)) != len(value):
            raise self.error(key, f"has duplicate entries: {value}")
        return list(value)

    def number_map(self, key: str, default: Any = _MISSING) -> dict[str, float]:
        value = self.raw(key, default)
        if not isinstance(value, dict):
            raise self.error(key, f"must be a mapping name -> number, got {value!r}")
        return {str(k): check_number(v, f"{self.field(key)}.{k}", self.source) for k, v in value.items()}


def _raise(exc: Exception):
    raise exc


def check_number(value: Any, field: str, source: str | None = None, *, minimum: float | None = None,
                 maximum: float | None = None, exclusive_minimum: float | None = None) -> float:
    """A finite real number within bounds, or ConfigError naming `field`."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(field, f"must be a number, got {value!r}", source)
    value = float(value)
    if not math.isfinite(value):
        raise ConfigError(field, f"must be finite, got {value}", source)
    if minimum is not None and value < minimum:
        raise ConfigError(field, f"must be >= {minimum}, got {value}", source)
    if maximum is not None and value > maximum:
        raise ConfigError(field, f"must be <= {maximum}, got {value}", source)
    if exclusive_minimum is not None and value <= exclusive_minimum:
        raise ConfigError(field, f"must be > {exclusive_minimum}, got {value}", source)
    return value
