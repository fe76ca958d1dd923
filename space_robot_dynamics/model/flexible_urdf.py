"""The expanded URDF of a subtree with flexible links and elastic joints (docs/flexibility.md secs. 1, 3-5, 7).

From the (prefixed, validated) URDF of a subtree:
- per elastic joint J (revolute): a rotor joint `J/rotor` on J's parent link, at J's origin and about J's axis,
  and its massless link `J/rotor_link` carrying I_r a a^T (eq. 11);
- per flexible link L: its <inertial> replaced by the residual of eq. 8; per bending mode index i a modal body:
  prismatic joints `L/bending_y_i` (along e_y) and/or `L/bending_z_i` (along e_z) at x_i e_x carrying the point
  mass m_i (link `L/modal_mass_i`), per torsion mode k a rotor `L/torsion_k` about e_x (eq. 7); the tip chain
  `L/tip_y`, `L/tip_z` (prismatic), `L/tip_rz`, `L/tip_ry`, `L/tip_rx` (revolute) at the undeformed tip with the
  beam frame's axes (eq. 4), ending in the massless link `L/deformed_tip`, which carries every joint of L whose
  origin is at the tip (with its origin re-expressed in the tip frame).
`dynamics=False` gives the robot description for robot_state_publisher: the tip chains only (the links beyond a
flexible link follow its deformation from joint_states), original inertias, no modal bodies or rotors.
Errors name the model file's field (flexible_links[i].tip, elastic_joints[j].joint, ...).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from ..errors import ConfigError
from .elastic_joint import ElasticJoint
from .flexibility_config import ElasticJointConfig, FlexibleLinkConfig
from .flexible_link import FlexibleLink, InertiaParameters

TIP_LINK_SUFFIX = "/deformed_tip"
TIP_TOLERANCE = 1e-6          # m: a joint of the flexible link this close to the tip is carried by the tip frame
UNBOUNDED = "1e9"             # rad or m: the position limits of the generated joints (never reached)
_TIP_AXES = {"tip_y": ("prismatic", "0 1 0"), "tip_z": ("prismatic", "0 0 1"), "tip_rz": ("revolute", "0 0 1"),
             "tip_ry": ("revolute", "0 1 0"), "tip_rx": ("revolute", "1 0 0")}


@dataclass(frozen=True)
class ExpandedUrdf:
    xml: str
    flexible_links: tuple     # FlexibleLink, in the order of the model file
    elastic_joints: tuple     # ElasticJoint


def expand(urdf_xml: str, flexible: list[FlexibleLinkConfig], elastic: list[ElasticJointConfig],
           source: str | None = None, dynamics: bool = True) -> ExpandedUrdf:
    """The expanded URDF (see the module docstring) and the link and joint objects it was built from."""
    root = ET.fromstring(urdf_xml)
    urdf = _Urdf(root)
    joints = tuple(_add_rotor(urdf, config, source) for config in elastic) if dynamics else ()
    links = tuple(_make_flexible(urdf, config, source, dynamics) for config in flexible)
    return ExpandedUrdf(ET.tostring(root, encoding="unicode"), links, joints)


class _Urdf:
    """Name lookups on a URDF element tree (kept current as elements are added)."""

    def __init__(self, root: ET.Element):
        self.root = root
        self.links = {e.get("name"): e for e in root.findall("link")}
        self.joints = {e.get("name"): e for e in root.findall("joint")}

    def parent_joint(self, link: str) -> ET.Element | None:
        for joint in self.joints.values():
            if joint.find("child").get("link") == link:
                return joint
        return None

    def child_joints(self, link: str) -> list[ET.Element]:
        return [j for j in self.joints.values() if j.find("parent").get("link") == link]

    def add_joint(self, name: str, kind: str, parent: str, child: str, placement: pin.SE3, axis: str | None,
                  velocity: float = 0.0) -> None:
        joint = ET.SubElement(self.root, "joint", name=name, type=kind)
        ET.SubElement(joint, "parent", link=parent)
        ET.SubElement(joint, "child", link=child)
        _set_origin(joint, placement)
        if axis is not None:
            ET.SubElement(joint, "axis", xyz=axis)
            ET.SubElement(joint, "limit", lower="-" + UNBOUNDED, upper=UNBOUNDED, effort="0", velocity=repr(velocity))
        self.joints[name] = joint

    def add_link(self, name: str, inertia: InertiaParameters | None = None) -> None:
        link = ET.SubElement(self.root, "link", name=name)
        if inertia is not None:
            _set_inertial(link, inertia)
        self.links[name] = link


def _add_rotor(urdf: _Urdf, config: ElasticJointConfig, source: str | None) -> ElasticJoint:
    field = f"{config.field}.joint"
    joint = urdf.joints.get(config.joint)
    if joint is None:
        raise ConfigError(field, f"no joint {config.joint!r} in this subtree", source)
    if joint.get("type") != "revolute":
        raise ConfigError(field, f"joint {config.joint!r} is {joint.get('type')}; an elastic joint must be a revolute "
                                 "joint with limits (a continuous joint has no unwrapped angle for its spring)", source)
    axis_element = joint.find("axis")
    axis = np.array([float(x) for x in (axis_element.get("xyz") if axis_element is not None else "1 0 0").split()])
    axis = axis / np.linalg.norm(axis)
    elastic = ElasticJoint(config, axis)
    limit = joint.find("limit")
    speed = float(limit.get("velocity", "0")) * config.gear_ratio if limit is not None else 0.0
    urdf.add_link(elastic.rotor_link, InertiaParameters(0.0, np.zeros(3), elastic.rotor_inertia()))
    urdf.add_joint(elastic.rotor_joint, "revolute", joint.find("parent").get("link"), elastic.rotor_link,
                   _origin(joint), " ".join(repr(float(a)) for a in axis), velocity=speed)
    return elastic


def _make_flexible(urdf: _Urdf, config: FlexibleLinkConfig, source: str | None, dynamics: bool) -> FlexibleLink:
    name = config.link
    link = urdf.links.get(name)
    if link is None:
        raise ConfigError(f"{config.field}.link", f"no link {name!r} in this subtree", source)
    parent = urdf.parent_joint(name)
    if parent is None:
        raise ConfigError(f"{config.field}.link", f"link {name!r} is the subtree's base link: a flexible link needs a "
                                                  "joint to a parent link", source)
    inertial = link.find("inertial")
    if inertial is None:
        raise ConfigError(f"{config.field}.link", f"link {name!r} has no <inertial>: a flexible link needs mass",
                          source)
    tip_joint = _tip_joint(urdf, config, source)
    axis = None
    if parent.get("type") != "fixed":
        element = parent.find("axis")
        axis = np.array([float(x) for x in (element.get("xyz") if element is not None else "1 0 0").split()])
        axis = axis / np.linalg.norm(axis)
    flexible = FlexibleLink(config, _inertia_of(inertial), axis, _origin(tip_joint).translation, source)
    beam = pin.SE3(flexible.rotation, np.zeros(3))
    if dynamics:
        link.remove(inertial)
        _set_inertial(link, flexible.residual)
        _add_modal_bodies(urdf, flexible, beam)
    tip0 = pin.SE3(flexible.rotation, flexible.tip_position)
    carried = [j for j in urdf.child_joints(name)
               if np.linalg.norm(_origin(j).translation - flexible.tip_position) <= TIP_TOLERANCE]
    parent_name, placement = name, tip0
    chain = [key.split("/")[-1] for key in flexible.tip_rows()]
    for k, key in enumerate(chain):
        kind, axis_text = _TIP_AXES[key]
        child = name + TIP_LINK_SUFFIX if k == len(chain) - 1 else f"{name}/{key}_link"
        urdf.add_link(child)
        urdf.add_joint(f"{name}/{key}", kind, parent_name, child, placement, axis_text)
        parent_name, placement = child, pin.SE3.Identity()
    for joint in carried:
        joint.find("parent").set("link", name + TIP_LINK_SUFFIX)
        _set_origin(joint, tip0.actInv(_origin(joint)))
    return flexible


def _tip_joint(urdf: _Urdf, config: FlexibleLinkConfig, source: str | None) -> ET.Element:
    children = [j for j in urdf.child_joints(config.link) if not j.get("name").endswith("/rotor")]
    field = f"{config.field}.tip"
    if config.tip is None:
        if len(children) != 1:
            raise ConfigError(field, f"link {config.link!r} has {len(children)} child joints "
                                     f"({[j.get('name') for j in children]}): name the joint at the beam's free end",
                              source)
        return children[0]
    for joint in children:
        if config.tip in (joint.get("name"), joint.find("child").get("link")):
            return joint
    raise ConfigError(field, f"{config.tip!r} is not a joint of link {config.link!r} nor the link it carries "
                             f"(child joints: {[j.get('name') for j in children]})", source)


def _add_modal_bodies(urdf: _Urdf, flexible: FlexibleLink, beam: pin.SE3) -> None:
    name = flexible.name
    e_x = flexible.rotation[:, 0]
    for body in flexible.bodies:
        placement = pin.SE3(flexible.rotation, body.position * e_x)
        mass = InertiaParameters(body.mass, np.zeros(3), np.zeros((3, 3)))
        mass_link = f"{name}/modal_mass_{body.index}"
        parent = name
        if body.y_name is not None:
            child = mass_link if body.z_name is None else f"{body.y_name}_link"
            urdf.add_link(child, mass if body.z_name is None else None)
            urdf.add_joint(body.y_name, "prismatic", parent, child, placement, "0 1 0")
            parent, placement = child, pin.SE3.Identity()
        if body.z_name is not None:
            urdf.add_link(mass_link, mass)
            urdf.add_joint(body.z_name, "prismatic", parent, mass_link, placement, "0 0 1")
    for body in flexible.torsion_bodies:
        rotor = f"{body.name}_rotor"
        urdf.add_link(rotor, InertiaParameters(0.0, np.zeros(3), np.diag([body.inertia, 0.0, 0.0])))
        urdf.add_joint(body.name, "revolute", name, rotor, beam, "1 0 0")


def _origin(element: ET.Element) -> pin.SE3:
    origin = element.find("origin")
    xyz = [float(x) for x in origin.get("xyz", "0 0 0").split()] if origin is not None else [0.0] * 3
    rpy = [float(x) for x in origin.get("rpy", "0 0 0").split()] if origin is not None else [0.0] * 3
    return pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz))


def _set_origin(element: ET.Element, placement: pin.SE3) -> None:
    origin = element.find("origin")
    if origin is None:
        origin = ET.Element("origin")
        element.insert(0, origin)
    origin.set("xyz", " ".join(repr(float(x)) for x in placement.translation))
    origin.set("rpy", " ".join(repr(float(x)) for x in pin.rpy.matrixToRpy(placement.rotation)))


def _inertia_of(inertial: ET.Element) -> InertiaParameters:
    placement = _origin(inertial)
    mass = float(inertial.find("mass").get("value"))
    i = {k: float(inertial.find("inertia").get(k, "0")) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}
    tensor = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])
    rotation = placement.rotation
    return InertiaParameters(mass, placement.translation.copy(), rotation @ tensor @ rotation.T)


def _set_inertial(link: ET.Element, inertia: InertiaParameters) -> None:
    inertial = ET.SubElement(link, "inertial")
    ET.SubElement(inertial, "origin", xyz=" ".join(repr(float(x)) for x in inertia.com), rpy="0 0 0")
    ET.SubElement(inertial, "mass", value=repr(float(inertia.mass)))
    t = inertia.inertia
    ET.SubElement(inertial, "inertia", ixx=repr(float(t[0, 0])), ixy=repr(float(t[0, 1])), ixz=repr(float(t[0, 2])),
                  iyy=repr(float(t[1, 1])), iyz=repr(float(t[1, 2])), izz=repr(float(t[2, 2])))
