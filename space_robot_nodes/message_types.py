"""Message-class providers: the same node code builds rclpy messages (ROS 2) or rosbags typestore messages.

Type names are the ROS 2 interface names, e.g. ``sensor_msgs/msg/JointState``. `new(typename, **fields)`
behaves like an rclpy constructor on both providers: omitted fields take their default (zero, empty,
false; a `geometry_msgs/msg/Quaternion` defaults to w = 1 as in its ROS 2 definition).
Numeric sequences (``float64[]``) differ between the two libraries (array.array in rclpy, numpy in rosbags):
build them with `float64_sequence` (a copy) or `float64_owned` (no copy where the provider allows: for arrays
the caller hands over and never touches again). `string_sequence` gives a ``string[]`` value that may be
shared between messages (a tuple under rosbags, so nobody can mutate it).
"""
from __future__ import annotations

import array
import importlib
from typing import Any

import numpy as np

# Fields whose ROS 2 .msg definition gives a non-zero default value (rosbags does not carry defaults).
_FIELD_DEFAULTS = {("geometry_msgs/msg/Quaternion", "w"): 1.0}

_NUMPY_DTYPES = {
    "bool": np.bool_, "byte": np.uint8, "char": np.uint8, "int8": np.int8, "uint8": np.uint8, "int16": np.int16,
    "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
    "float32": np.float32, "float64": np.float64,
}

# The Intera SDK command message (ROS 1 package intera_core_msgs); a ROS 2 build of the package has the same
# fields with a ROS 2 header. Registered in the rosbags typestore so the standalone runtime can record it.
INTERA_JOINT_COMMAND = "intera_core_msgs/msg/JointCommand"
INTERA_JOINT_COMMAND_DEFINITION = """\
std_msgs/Header header
int32 mode
string[] names
float64[] position
float64[] velocity
float64[] acceleration
float64[] effort
int32 POSITION_MODE=1
int32 VELOCITY_MODE=2
int32 TORQUE_MODE=3
int32 TRAJECTORY_MODE=4
"""


class MessageTypes:
    """Interface of a provider: message classes by ROS 2 interface name."""

    def cls(self, typename: str) -> type:
        raise TypeError(f"{type(self).__name__} does not provide message classes")

    def new(self, typename: str, **fields: Any) -> Any:
        raise TypeError(f"{type(self).__name__} does not build messages")

    def make(self, typename: str, **fields: Any) -> Any:
        """Like new(), for callers that pass every field (no defaults to fill: the fast path)."""
        return self.cls(typename)(**fields)

    def constructor(self, typename: str, fields: tuple[str, ...]):
        """A callable building `typename` from the values of `fields` (every field, in definition order) given
        positionally: the fastest way to build the same message many times."""
        cls = self.cls(typename)
        return lambda *values: cls(**dict(zip(fields, values)))

    def float64_sequence(self, values) -> Any:
        raise TypeError(f"{type(self).__name__} does not build sequences")

    def float64_owned(self, values) -> Any:
        """A float64[] field value from an array handed over to the message (copied only if needed)."""
        return self.float64_sequence(values)

    def string_sequence(self, values) -> Any:
        return [str(v) for v in values]

    def has(self, typename: str) -> bool:
        try:
            self.cls(typename)
        except (KeyError, ImportError, AttributeError, TypeError):
            return False
        return True


def typename_of(msg: Any) -> str:
    """ROS 2 interface name of a message object from either provider."""
    name = getattr(msg, "__msgtype__", None)
    if isinstance(name, str):
        return name
    module = type(msg).__module__.split(".")          # rclpy: sensor_msgs.msg._joint_state
    return f"{module[0]}/{module[1]}/{type(msg).__name__}"


class RosbagsMessageTypes(MessageTypes):
    """Messages from a rosbags typestore (default: ros_distributions.MESSAGE_DEFINITIONS, ROS 2 Humble's, which are
    Jazzy's too for every type the nodes use, plus Intera's JointCommand)."""

    def __init__(self, typestore=None):
        if typestore is None:
            from rosbags.typesys import Stores, get_types_from_msg, get_typestore

            from .ros_distributions import MESSAGE_DEFINITIONS

            typestore = get_typestore(Stores(MESSAGE_DEFINITIONS))   # a fresh store: registering is local to it
            typestore.register(get_types_from_msg(INTERA_JOINT_COMMAND_DEFINITION, INTERA_JOINT_COMMAND))
        self.typestore = typestore
        self._types = typestore.types
        self._entries: dict[str, tuple] = {}
        self._constructors: dict[tuple, type] = {}
        self._missing: dict[tuple, tuple] = {}

    def cls(self, typename: str) -> type:
        return self._types[typename]

    def prepare_codecs(self, typenames) -> None:
        """Generate now the CDR (de)serialisers of `typenames` (and their nested types), which rosbags otherwise
        generates on a type's first message: ~20-30 ms per type on a quiet 2-core VM, far more on a loaded one.
        A node does it before simulated time starts, so that its first message of a type is not that late (the
        scenario's trajectory, sent START_DELAY = 50 ms before its start, arrived after it)."""
        generate = self.typestore.get_msgdef          # rosbags >= 0.10 (setup.py's lower bound)
        for typename in sorted(set(typenames)):
            generate(typename)

    def make(self, typename: str, **fields: Any) -> Any:
        return self._types[typename](**fields)

    def constructor(self, typename: str, fields: tuple[str, ...]):
        # rosbags classes are dataclasses whose positional order is the definition order: the class itself
        key = (typename, fields)
        found = self._constructors.get(key)
        if found is None:
            _consts, fielddefs = self.typestore.fielddefs[typename]
            declared = tuple(name for name, _ in fielddefs)
            if tuple(fields) != declared:
                raise TypeError(f"{typename} fields are {declared}, not {tuple(fields)}")
            found = self._constructors[key] = self._types[typename]
        return found

    def float64_sequence(self, values) -> np.ndarray:
        return np.array(values, dtype=np.float64)

    def float64_owned(self, values) -> np.ndarray:
        # the CDR serialiser needs a contiguous float64 buffer; a fresh one passes through untouched
        return np.ascontiguousarray(values, dtype=np.float64)

    def string_sequence(self, values) -> tuple:
        return tuple(str(v) for v in values)

    def new(self, typename: str, **fields: Any) -> Any:
        entry = self._entries.get(typename)
        if entry is None:
            entry = self._entry(typename)
        cls, names, factories = entry
        if len(fields) != len(names):        # fill omitted fields (the hot paths pass every field)
            given = tuple(fields)
            missing = self._missing.get((typename, given))
            if missing is None:              # which factories a call with these fields needs, found once
                unknown = set(fields) - set(names)
                if unknown:
                    raise TypeError(f"{typename} has no field(s) {sorted(unknown)}")
                missing = self._missing[(typename, given)] = tuple(
                    (name, factory) for name, factory in zip(names, factories) if name not in fields)
            for name, factory in missing:
                fields[name] = factory()
        return cls(**fields)

    def _entry(self, typename: str) -> tuple:
        _consts, fielddefs = self.typestore.fielddefs[typename]
        names = tuple(name for name, _ in fielddefs)
        factories = tuple(self._factory(typename, name, desc) for name, desc in fielddefs)
        entry = self._entries[typename] = (self._types[typename], names, factories)
        return entry

    def _factory(self, typename: str, field: str, desc):
        from rosbags.interfaces import Nodetype

        kind, detail = desc
        if kind == Nodetype.BASE:
            base = detail[0]
            value = _FIELD_DEFAULTS.get((typename, field),
                                        "" if base in ("string", "wstring") else False if base == "bool" else 0)
            if base in ("float32", "float64"):
                value = float(value)
            return lambda: value
        if kind == Nodetype.NAME:
            return lambda: self.new(detail)
        (element_kind, element), length = detail
        if element_kind == Nodetype.BASE and element[0] in _NUMPY_DTYPES:
            dtype = _NUMPY_DTYPES[element[0]]
            size = length if kind == Nodetype.ARRAY else 0
            return lambda: np.zeros(size, dtype=dtype)
        if kind == Nodetype.SEQUENCE:
            return list
        if element_kind == Nodetype.BASE:           # fixed array of strings
            return lambda: [""] * length
        return lambda: [self.new(element) for _ in range(length)]


class RosMessageTypes(MessageTypes):
    """Messages from the ROS 2 Python packages (``sensor_msgs.msg.JointState`` ...), imported on first use."""

    def __init__(self):
        self._classes: dict[str, type] = {}

    def cls(self, typename: str) -> type:
        found = self._classes.get(typename)
        if found is None:
            package, kind, name = typename.split("/")
            found = getattr(importlib.import_module(f"{package}.{kind}"), name)
            self._classes[typename] = found
        return found

    def new(self, typename: str, **fields: Any) -> Any:
        return self.cls(typename)(**fields)

    make = new

    def float64_sequence(self, values) -> array.array:
        # rclpy's generated setters take array.array('d') for float64[] without a per-element check.
        return array.array("d", np.asarray(values, dtype=np.float64).ravel().tobytes())
