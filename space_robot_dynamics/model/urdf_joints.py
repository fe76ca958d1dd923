"""The joints of a URDF as the URDF states them: parent and child link, origin, axis (what robot_state_publisher
and RViz read; the simulator reads the same file through Pinocchio's parser)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
import pinocchio as pin


@dataclass(frozen=True)
class UrdfJoint:
    """One URDF joint: names (frames prefixed), type, origin (m; rotation as quaternion x, y, z, w) and unit axis,
    all in the parent link's frame."""

    name: str
    kind: str
    parent: str
    child: str
    origin_xyz: np.ndarray
    origin_xyzw: np.ndarray
    axis: np.ndarray


def urdf_joints(urdf: str, prefix: str) -> list[UrdfJoint]:
    """The joints of a URDF text (URDF defaults: zero origin, axis x)."""
    joints = []
    for joint in ET.fromstring(urdf).findall("joint"):
        origin = joint.find("origin")
        xyz = _floats(origin.get("xyz") if origin is not None else None)
        rpy = _floats(origin.get("rpy") if origin is not None else None)
        axis_element = joint.find("axis")
        axis = _floats(axis_element.get("xyz") if axis_element is not None else None, (1.0, 0.0, 0.0))
        joints.append(UrdfJoint(prefix + joint.get("name"), joint.get("type"),
                                prefix + joint.find("parent").get("link"), prefix + joint.find("child").get("link"),
                                xyz, pin.Quaternion(pin.rpy.rpyToMatrix(rpy)).coeffs().copy(),
                                axis / np.linalg.norm(axis)))
    return joints


def _floats(text: str | None, default=(0.0, 0.0, 0.0)) -> np.ndarray:
    return np.array([float(x) for x in text.split()] if text else default, dtype=float)


