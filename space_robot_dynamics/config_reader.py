"""Validated reading of YAML configuration: every error names the file and the dotted field path.

A small reader instead of a schema library keeps the error messages in our words, e.g.
``config/scenarios/demo.yaml: simulation.dt: must be > 0, got -0.001``.

YAML is read with YAML 1.2's number rules (`parse_yaml`): PyYAML follows YAML 1.1, where `1.0e30`, `1e3`
and `5e-4` (no dot, or no sign in the exponent) are strings, so a user writing them would be told
"must be a number". Relative file names inside a file are looked up next to that file first, then in
the package share (`ConfigReader.file_path`).
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from .errors import ConfigError
from .package_share import resolve, share_directory

_MISSING = object()


class _Yaml12Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """SafeLoader (libyaml's, ~10x faster, where PyYAML has it) with YAML 1.2's float syntax (core schema):
    exponents without a dot or a sign."""


_FLOAT_12 = re.compile(r"""^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$""", re.X)
_Yaml12Loader.yaml_implicit_resolvers = {
    key: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:float"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))


def parse_yaml(text: str):
    """YAML text -> Python data, with YAML 1.2 numbers (`1.0e30` is a float). Raises yaml.YAMLError."""
    return yaml.load(text, Loader=_Yaml12Loader)   # noqa: S506 - a SafeLoader subclass


def yaml_error_text(exc: yaml.YAMLError) -> str:
    """PyYAML's error (3-4 lines: problem, context, each with a mark naming '<unicode string>') as one line:
    `line L, column C: <problem> (<context> at line L', column C')`, lines and columns counted from 1."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is None or problem is None:
        return " ".join(str(exc).split())
    text = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
    context, where = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context:
        text += f" ({context}" + (f" at line {where.line + 1}, column {where.column + 1}" if where else "") + ")"
    return " ".join(text.split())


def load_yaml_file(path: str | Path) -> ConfigReader:
    """Read a YAML mapping from `path`; a missing, unreadable or binary file or a syntax error raises
    ConfigError naming the file."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except IsADirectoryError as exc:
        raise ConfigError("<file>", "is a directory, not a YAML file", str(path)) from exc
    except OSError as exc:
        raise ConfigError("<file>", f"cannot read: {exc.strerror or exc}", str(path)) from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError("<file>", f"is not a UTF-8 text file (byte {exc.start} is 0x{raw[exc.start]:02x}); "
                          "give a YAML file", str(path)) from exc
    if "\x00" in text:
        raise ConfigError("<file>", "is a binary file (it contains NUL bytes); give a YAML file", str(path))
    try:
        data = parse_yaml(text)
    except yaml.YAMLError as exc:
        raise ConfigError("<yaml>", f"not valid YAML: {yaml_error_text(exc)}", str(path)) from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError("<root>", f"must be a mapping, got {type(data).__name__}", str(path))
    return ConfigReader(data, source=str(path), directory=path.resolve().parent)


def load_config_file(path: str | Path) -> ConfigReader:
    """load_yaml_file for a path a user gives: absolute, relative to the working directory, or relative to
    the package share (e.g. 'config/models/servicer_target.yaml'), in that order."""
    try:
        found = find_file(path, Path.cwd())
    except FileNotFoundError as exc:
        raise ConfigError("<file>", str(exc), str(path)) from None
    return load_yaml_file(found)


class ConfigReader:
    """A view on one YAML mapping that reads typed, range-checked fields and rejects unknown keys.

    source: what error messages name (the file, maybe with where its overrides came from); directory: the
    folder of the file, where relative file names inside it are looked up first (None: the share only).
    """

    def __init__(self, data: dict, source: str | None = None, path: str = "", directory: Path | None = None):
        if not isinstance(data, dict):
            raise ConfigError(path or "<root>", f"must be a mapping, got {type(data).__name__}", source)
        self.data = data
        self.source = source
        self.path = path
        self.directory = directory
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
        return ConfigReader(value, self.source, self.field(key), self.directory)

    def sub_list(self, key: str) -> list[ConfigReader]:
        items = self.raw(key)
        if not isinstance(items, list) or not items:
            raise self.error(key, "must be a non-empty list of mappings")
        return [ConfigReader(item, self.source, f"{self.field(key)}[{i}]", self.directory) if isinstance(item, dict)
                else _raise(self.error(f"{key}[{i}]", "must be a mapping")) for i, item in enumerate(items)]

    def file_path(self, key: str, default: Any = _MISSING) -> Path:
        """A file named by `key`: absolute as given; relative, looked up next to this file first, then in
        the package share. ConfigError naming both places when it is in neither."""
        text = self.string(key, default)
        try:
            return find_file(text, self.directory)
        except FileNotFoundError as exc:
            raise self.error(key, str(exc)) from None

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

    def frequency(self, key: str, default: Any = _MISSING, *, maximum: float | None = None) -> float:
        """A rate (Hz): a number > 0 whose period 1 / rate is a finite number of seconds (5e-324 Hz passes
        `> 0` and its period overflows to inf, which whoever counts periods then cannot round)."""
        value = self.number(key, default, exclusive_minimum=0.0, maximum=maximum)
        if not math.isfinite(1.0 / value):
            raise self.error(key, f"must be a rate in Hz whose period 1 / rate is finite, got {value!r}")
        return value

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


def find_file(name: str | Path, directory: Path | None = None) -> Path:
    """`name` if absolute; else the first existing of `directory`/name and <share>/name. FileNotFoundError
    saying where it looked otherwise."""
    path = Path(name)
    if path.is_absolute():
        if path.exists():
            return path
        raise FileNotFoundError(f"no such file {str(path)!r}")
    candidates = ([directory / path] if directory is not None else []) + [resolve(path)]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    places = ([f"next to the file ({directory})"] if directory is not None else []) + \
        [f"in the package share ({share_directory()})"]
    raise FileNotFoundError(f"no file {str(path)!r}: looked {' and '.join(places)}")


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
