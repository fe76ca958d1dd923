"""The frames of a model's `grasp` and `contact_surfaces` sections, resolved against the built model.

A frame that does not exist, or a grasp whose fixture is on the hand's own body, is a ConfigError naming the field
of the model file, raised when the model is built (SystemModel), before anything runs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..errors import ConfigError
from .contact_config import GraspConfig, SurfaceConfig


@dataclass(frozen=True)
class GraspSite:
    config: GraspConfig
    ee_frame: int                 # Pinocchio frame ids
    target_frame: int
    approach_axis: np.ndarray     # unit, end-effector frame
    target_axis: np.ndarray       # unit, fixture frame


@dataclass(frozen=True)
class SurfaceSite:
    config: SurfaceConfig
    surface_frame: int
    contact_frame: int


def _frame(model: pin.Model, name: str, field: str, source: str | None) -> int:
    if not model.existFrame(name):
        raise ConfigError(field, f"no link or frame named {name!r} in the model (names carry their subtree's "
                                 "frame_prefix)", source)
    return model.getFrameId(name)


def _moving(model: pin.Model, frame: int, field: str, source: str | None) -> None:
    if model.frames[frame].parentJoint == 0:
        raise ConfigError(field, f"frame {model.frames[frame].name!r} is fixed in the world: a contact needs two "
                                 "moving bodies", source)


def resolve_grasp(model: pin.Model, config: GraspConfig | None, source: str | None) -> GraspSite | None:
    if config is None:
        return None
    ee = _frame(model, config.end_effector_frame, "grasp.end_effector_frame", source)
    target = _frame(model, config.target_frame, "grasp.target_frame", source)
    _moving(model, ee, "grasp.end_effector_frame", source)
    _moving(model, target, "grasp.target_frame", source)
    if model.frames[ee].parentJoint == model.frames[target].parentJoint:
        raise ConfigError("grasp.target_frame", f"{config.target_frame!r} is on the same body as the end effector "
                                                f"{config.end_effector_frame!r}", source)
    return GraspSite(config, ee, target, np.asarray(config.approach_axis, float),
                     np.asarray(config.target_axis, float))


def resolve_surfaces(model: pin.Model, surfaces: tuple, source: str | None) -> dict[str, SurfaceSite]:
    out = {}
    for surface in surfaces:
        frame = _frame(model, surface.frame, f"{surface.field}.frame", source)
        contact = _frame(model, surface.contact_frame, f"{surface.field}.contact_frame", source)
        _moving(model, frame, f"{surface.field}.frame", source)
        if model.frames[frame].parentJoint == model.frames[contact].parentJoint:
            raise ConfigError(f"{surface.field}.contact_frame", f"{surface.contact_frame!r} is on the surface's own "
                                                               "body", source)
        out[surface.name] = SurfaceSite(surface, frame, contact)
    return out
