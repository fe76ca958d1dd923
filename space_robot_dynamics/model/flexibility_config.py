"""The `flexible_links` and `elastic_joints` sections of a model file (docs/flexibility.md), validated at load.

    flexible_links:
      - link: link_2                       # (prefixed) URDF link name
        tip: end_effector_joint            # joint (or child link) at the beam's free end; default: the only child joint
        boundary_condition: clamped_free   # or pinned_free (bending_y only)
        mass_per_length: 1.0               # kg/m of the uniform beam; default: link mass / length
        bending_y_axis: [0, 1, 0]          # link frame; default: joint axis x beam axis
        bending_y: {modes: 1, frequencies_hz: [5.0], damping_ratios: [0.03]}    # or EI: N m^2 instead of frequencies
        bending_z: {modes: 1, EI: 1.3, damping_ratios: 0.03}
        torsion: {modes: 1, GJ: 2.0, polar_inertia_per_length: 0.01, damping_ratios: 0.02}
    elastic_joints:
      - joint: joint_1
        gear_ratio: 100.0                  # motor turns per output turn (N)
        motor_inertia: 5.6e-4              # kg m^2, the rotor about its axis, motor side (I_r)
        stiffness: 8.1                     # N m/rad
        damping: 0.5                       # N m s/rad
        spring_offset: 0.0                 # rad, lambda_0 of eq. 12

This module checks what the file alone can tell (types, ranges, one of EI / frequencies_hz, list lengths);
what needs the URDF (the link exists, its tip, the residual inertia is physical...) is checked when the model
is built (flexible_urdf.py), with the same field names.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..config_reader import ConfigReader
from .beam_modes import BOUNDARY_CONDITIONS, MAX_MODES

DIRECTIONS = ("bending_y", "bending_z", "torsion")


@dataclass(frozen=True)
class ModeFamilyConfig:
    """The modes of one direction: count, stiffness as `rigidity` (EI or GJ, N m^2) or `frequencies_hz` (the
    beam's own natural frequencies, eq. 9), damping ratios per mode (eq. 10), and for torsion the polar mass
    moment per length (kg m; None: from the link's inertia about the beam axis)."""

    modes: int
    rigidity: float | None
    frequencies_hz: tuple | None
    damping_ratios: tuple
    polar_inertia_per_length: float | None = None


@dataclass(frozen=True)
class FlexibleLinkConfig:
    link: str
    field: str                               # e.g. "flexible_links[0]", for errors found at build time
    tip: str | None = None
    boundary_condition: str = "clamped_free"
    mass_per_length: float | None = None     # kg/m
    bending_y_axis: tuple | None = None
    bending_y: ModeFamilyConfig | None = None
    bending_z: ModeFamilyConfig | None = None
    torsion: ModeFamilyConfig | None = None

    def family(self, direction: str) -> ModeFamilyConfig | None:
        return getattr(self, direction)


@dataclass(frozen=True)
class ElasticJointConfig:
    joint: str
    field: str
    gear_ratio: float           # N
    motor_inertia: float        # kg m^2, rotor, motor side
    stiffness: float            # N m/rad
    damping: float = 0.0        # N m s/rad
    spring_offset: float = 0.0  # rad


def read_flexible_links(reader: ConfigReader) -> tuple:
    if not reader.has("flexible_links") or reader.raw("flexible_links") is None:
        reader.raw("flexible_links", None)
        return ()
    out = []
    for i, item in enumerate(reader.sub_list("flexible_links")):
        boundary = item.string("boundary_condition", "clamped_free", choices=BOUNDARY_CONDITIONS)
        families = {}
        for direction in DIRECTIONS:
            families[direction] = _family(item, direction) if item.raw(direction, None) is not None else None
        if not any(f is not None and f.modes for f in families.values()):
            raise item.error("bending_y", "a flexible link needs at least one mode (bending_y, bending_z or torsion)")
        if boundary == "pinned_free":
            for direction in ("bending_z", "torsion"):
                if families[direction] is not None and families[direction].modes:
                    raise item.error(direction, "boundary_condition pinned_free pins the beam on its joint axis: "
                                     "bending in the joint's plane (bending_y) only")
        axis = None
        if item.has("bending_y_axis"):
            axis = tuple(item.vector("bending_y_axis", 3))
        mass = item.number("mass_per_length", exclusive_minimum=0.0) if item.has("mass_per_length") else None
        out.append(FlexibleLinkConfig(
            link=item.string("link"), field=f"{reader.field('flexible_links')}[{i}]",
            tip=item.string("tip") if item.has("tip") else None, boundary_condition=boundary,
            mass_per_length=mass, bending_y_axis=axis, **families))
        item.reject_unknown()
    names = [f.link for f in out]
    if len(set(names)) != len(names):
        raise reader.error("flexible_links", f"a link is listed twice: {names}")
    return tuple(out)


def _family(item: ConfigReader, direction: str) -> ModeFamilyConfig:
    sub = item.sub(direction)
    modes = sub.integer("modes", minimum=0)
    if modes > MAX_MODES:
        raise sub.error("modes", f"at most {MAX_MODES} modes per direction, got {modes}")
    stiffness_key = "GJ" if direction == "torsion" else "EI"
    has_rigidity, has_frequencies = sub.has(stiffness_key), sub.has("frequencies_hz")
    if modes and has_rigidity == has_frequencies:
        raise sub.error(stiffness_key, f"give either {stiffness_key} (N m^2) or frequencies_hz (one per mode)")
    rigidity = sub.number(stiffness_key, exclusive_minimum=0.0) if has_rigidity else None
    frequencies = None
    if has_frequencies:
        frequencies = tuple(sub.vector("frequencies_hz", modes, exclusive_minimum=0.0))
    ratios = sub.raw("damping_ratios", 0.0)
    if isinstance(ratios, (int, float)) and not isinstance(ratios, bool):
        ratios = tuple([sub.number("damping_ratios", 0.0, minimum=0.0)] * modes)
    else:
        ratios = tuple(sub.vector("damping_ratios", modes, minimum=0.0))
    polar = None
    if direction == "torsion" and sub.has("polar_inertia_per_length"):
        polar = sub.number("polar_inertia_per_length", exclusive_minimum=0.0)
    sub.reject_unknown()
    return ModeFamilyConfig(modes, rigidity, frequencies, ratios, polar)


def read_elastic_joints(reader: ConfigReader) -> tuple:
    if not reader.has("elastic_joints") or reader.raw("elastic_joints") is None:
        reader.raw("elastic_joints", None)
        return ()
    out = []
    for i, item in enumerate(reader.sub_list("elastic_joints")):
        out.append(ElasticJointConfig(
            joint=item.string("joint"), field=f"{reader.field('elastic_joints')}[{i}]",
            gear_ratio=item.number("gear_ratio", exclusive_minimum=0.0),
            motor_inertia=item.number("motor_inertia", exclusive_minimum=0.0),
            stiffness=item.number("stiffness", exclusive_minimum=0.0),
            damping=item.number("damping", 0.0, minimum=0.0),
            spring_offset=item.number("spring_offset", 0.0)))
        item.reject_unknown()
    names = [j.joint for j in out]
    if len(set(names)) != len(names):
        raise reader.error("elastic_joints", f"a joint is listed twice: {names}")
    return tuple(out)
