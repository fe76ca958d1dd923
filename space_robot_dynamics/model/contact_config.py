"""The `grasp` and `contact_surfaces` sections of a model file, validated at load (docs/contact.md).

    grasp:                                   # the capture mechanism on the hand (absent: nothing can be grasped)
      end_effector_frame: right_hand         # the hand's frame: the grasp wrench is given in it, about its origin
      approach_axis: [0, 0, 1]               # end-effector frame: out of the flange, into the fixture
      target_frame: target/grapple_frame     # the fixture's frame, on a floating subtree other than the hand's
      target_axis: [1, 0, 0]                 # fixture frame: out of the target's face
      tolerances:                            # the capture envelope: all four must hold when the gripper closes
        position: 0.02                       # m, hand origin to fixture origin
        angle: 0.05                          # rad, between approach_axis and -target_axis
        linear_velocity: 0.02                # m/s, of the hand origin relative to the fixture (world frame)
        angular_velocity: 0.02               # rad/s, of the hand relative to the fixture
      stabilization: {natural_frequency: 20.0, damping_ratio: 1.0}   # Baumgarte: Kp = wn^2, Kd = 2 zeta wn
    contact_surfaces:                        # surfaces the end effector can be kept on (unilateral, frictionless)
      - name: target_face
        frame: target/base_link              # the body the surface is fixed on (a link or frame)
        shape: plane                         # plane: point, normal; cylinder: point, axis, radius
        point: [-0.55, 0.0, 0.0]             # m, in `frame`
        normal: [-1.0, 0.0, 0.0]             # outward, in `frame`
        contact_frame: right_hand            # the point of the robot that touches (its origin)
        stabilization: {natural_frequency: 20.0, damping_ratio: 1.0}   # Baumgarte on the normal distance

What the file alone can tell is checked here (types, signs, unit vectors); the frames are checked against the
model when it is built (SystemModel), with the same field names.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config_reader import ConfigReader

SHAPES = ("plane", "cylinder")


@dataclass(frozen=True)
class GraspTolerances:
    """The capture envelope (m, rad, m/s, rad/s): a grasp closes only within all four."""

    position: float
    angle: float
    linear_velocity: float
    angular_velocity: float


@dataclass(frozen=True)
class Stabilization:
    """Baumgarte drift control of a closed constraint: e'' + 2 zeta wn e' + wn^2 e = 0 on its error e."""

    natural_frequency: float      # rad/s
    damping_ratio: float

    @property
    def kp(self) -> float:
        return self.natural_frequency ** 2

    @property
    def kd(self) -> float:
        return 2.0 * self.damping_ratio * self.natural_frequency


@dataclass(frozen=True)
class GraspConfig:
    end_effector_frame: str
    approach_axis: tuple          # unit, end-effector frame
    target_frame: str
    target_axis: tuple            # unit, target frame
    tolerances: GraspTolerances
    stabilization: Stabilization


@dataclass(frozen=True)
class SurfaceConfig:
    """A surface fixed on the body of `frame`: a plane (point, outward normal) or a circular cylinder (point on
    its axis, axis direction, radius), all in `frame`'s coordinates (m). `contact_frame` is the robot's point."""

    name: str
    frame: str
    shape: str
    point: tuple
    normal: tuple | None          # plane
    axis: tuple | None            # cylinder
    radius: float | None          # cylinder, m
    contact_frame: str
    stabilization: Stabilization
    field: str                    # e.g. "contact_surfaces[0]", for errors found when the model is built


def _unit(reader: ConfigReader, key: str, default=None) -> tuple:
    vector = reader.vector(key, 3, default)
    norm = float(np.linalg.norm(vector))
    if norm < 1e-9:
        raise reader.error(key, "must be a non-zero vector")
    return tuple(float(x) for x in vector / norm)


def read_stabilization(reader: ConfigReader, key: str = "stabilization") -> Stabilization:
    sub = reader.sub(key, {})
    stabilization = Stabilization(sub.number("natural_frequency", 20.0, exclusive_minimum=0.0),
                                  sub.number("damping_ratio", 1.0, exclusive_minimum=0.0))
    sub.reject_unknown()
    return stabilization


def read_grasp(reader: ConfigReader) -> GraspConfig | None:
    """The model's `grasp` section, None when absent or null."""
    if reader.raw("grasp", None) is None:
        return None
    grasp = reader.sub("grasp")
    tol = grasp.sub("tolerances")
    tolerances = GraspTolerances(
        position=tol.number("position", exclusive_minimum=0.0),
        angle=tol.number("angle", exclusive_minimum=0.0, maximum=np.pi),
        linear_velocity=tol.number("linear_velocity", exclusive_minimum=0.0),
        angular_velocity=tol.number("angular_velocity", exclusive_minimum=0.0),
    )
    tol.reject_unknown()
    config = GraspConfig(
        end_effector_frame=grasp.string("end_effector_frame"),
        approach_axis=_unit(grasp, "approach_axis"),
        target_frame=grasp.string("target_frame"),
        target_axis=_unit(grasp, "target_axis"),
        tolerances=tolerances,
        stabilization=read_stabilization(grasp),
    )
    grasp.reject_unknown()
    return config


def read_contact_surfaces(reader: ConfigReader) -> tuple:
    """The model's `contact_surfaces` list (empty when absent)."""
    if reader.raw("contact_surfaces", None) is None:
        return ()
    surfaces = []
    for sub in reader.sub_list("contact_surfaces"):
        shape = sub.string("shape", choices=SHAPES)
        plane = shape == "plane"
        surfaces.append(SurfaceConfig(
            name=sub.string("name"),
            frame=sub.string("frame"),
            shape=shape,
            point=tuple(float(x) for x in sub.vector("point", 3)),
            normal=_unit(sub, "normal") if plane else None,
            axis=None if plane else _unit(sub, "axis"),
            radius=None if plane else sub.number("radius", exclusive_minimum=0.0),
            contact_frame=sub.string("contact_frame"),
            stabilization=read_stabilization(sub),
            field=sub.path,
        ))
        sub.reject_unknown()
    names = [s.name for s in surfaces]
    if len(set(names)) != len(names):
        raise reader.error("contact_surfaces", f"surface names must be unique, got {names}")
    return tuple(surfaces)
