"""URDF text for one subtree: xacro expansion, name prefixing, and checks before Pinocchio sees it.

Pinocchio's URDF parser accepts some malformed files silently (e.g. a negative mass); this module
rejects them first with a message that names the link or joint.
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from ..errors import ConfigError


def expand(path: Path, xacro_args: dict[str, str] | None = None) -> str:
    """URDF text of `path`; files ending in .xacro are expanded with the `xacro` package (no ROS needed)."""
    if not path.is_file():
        raise ConfigError("urdf", f"file not found: {path}")
    if path.suffix != ".xacro":
        return path.read_text()
    import xacro  # imported here: only xacro files need it

    mappings = {str(k): str(v) for k, v in (xacro_args or {}).items()}
    try:
        document = xacro.process_file(str(path), mappings=mappings)
    except Exception as exc:  # xacro raises XacroException, ExpatError, NameError... all mean a bad file
        raise ConfigError("urdf", f"xacro failed on {path}: {exc}") from exc
    return document.toprettyxml(indent="  ")


def declared_arguments(path: Path) -> set[str] | None:
    """Names of the `<xacro:arg>` a xacro file declares, with those of the files it includes by a relative
    name (resolved next to the including file); None when an include cannot be followed that way (e.g.
    `$(find pkg)/...`), so the caller cannot tell an undeclared argument from one declared there."""
    names: set[str] = set()
    pending, seen = [Path(path)], set()
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            root = ET.parse(current).getroot()
        except (OSError, ET.ParseError):
            return None
        for element in root.iter():
            if element.tag == f"{{{_XACRO_NS}}}arg" and element.get("name"):
                names.add(element.get("name"))
            elif element.tag == f"{{{_XACRO_NS}}}include":
                filename = element.get("filename", "")
                if "$" in filename or not filename:
                    return None
                pending.append(current.parent / filename)
    return names


_XACRO_NS = "http://www.ros.org/wiki/xacro"


def prefix_names(urdf_xml: str, prefix: str) -> str:
    """Prefix every link and joint name (and the references to them) with `prefix`, like tf's frame_prefix."""
    if not prefix:
        return urdf_xml
    root = _parse(urdf_xml, "urdf")
    for element in root:  # top-level <link>/<joint> only: <joint><parent link=...> is handled below
        if element.tag in ("link", "joint") and "name" in element.attrib:
            element.set("name", prefix + element.get("name"))
    for element in root.iter():
        if element.tag in ("parent", "child") and "link" in element.attrib:
            element.set("link", prefix + element.get("link"))
        if element.tag == "mimic" and "joint" in element.attrib:
            element.set("joint", prefix + element.get("joint"))
    return ET.tostring(root, encoding="unicode")


def validate(urdf_xml: str, source: str) -> ET.Element:
    """Check the structure and the physics of a URDF; return its root element.

    Rejected with the offending element named: not XML, no <robot>, links with non-positive mass or an
    inertia tensor that is not positive definite or violates the triangle inequality, joints whose
    parent/child links do not exist, revolute joints without limits, non-finite numbers.
    """
    root = _parse(urdf_xml, source)
    if root.tag != "robot":
        raise ConfigError("urdf", f"root element is <{root.tag}>, expected <robot>", source)
    links = {link.get("name") for link in root.findall("link")}
    if not links:
        raise ConfigError("urdf", "has no <link>", source)
    for link in root.findall("link"):
        _check_inertial(link, source)
    for joint in root.findall("joint"):
        name = joint.get("name")
        for tag in ("parent", "child"):
            element = joint.find(tag)
            if element is None or element.get("link") not in links:
                raise ConfigError(f"joint[{name}].{tag}", f"names an unknown link "
                                  f"{None if element is None else element.get('link')!r}", source)
        if joint.get("type") in ("revolute", "prismatic") and joint.find("limit") is None:
            raise ConfigError(f"joint[{name}].limit", "a revolute/prismatic joint needs <limit>", source)
        for tag, attribute in (("limit", "effort"), ("limit", "velocity"), ("dynamics", "damping"),
                               ("dynamics", "friction")):
            element = joint.find(tag)
            if element is not None and element.get(attribute) is not None:
                value = _number(element.get(attribute), f"joint[{name}].{tag}.{attribute}", source)
                if value < 0:
                    raise ConfigError(f"joint[{name}].{tag}.{attribute}", f"must be >= 0, got {value}", source)
    return root


def _parse(urdf_xml: str, source: str) -> ET.Element:
    try:
        return ET.fromstring(urdf_xml)
    except ET.ParseError as exc:
        raise ConfigError("urdf", f"not well-formed XML: {exc}", source) from exc


def _number(text: str, field: str, source: str) -> float:
    try:
        value = float(text)
    except (TypeError, ValueError) as exc:
        raise ConfigError(field, f"not a number: {text!r}", source) from exc
    if not math.isfinite(value):
        raise ConfigError(field, f"must be finite, got {text}", source)
    return value


def _check_inertial(link: ET.Element, source: str) -> None:
    name = link.get("name")
    inertial = link.find("inertial")
    if inertial is None:
        return  # massless frame links (tool frames, grapple fixtures) are legitimate
    mass_el = inertial.find("mass")
    inertia_el = inertial.find("inertia")
    if mass_el is None or inertia_el is None:
        raise ConfigError(f"link[{name}].inertial", "needs both <mass> and <inertia>", source)
    mass = _number(mass_el.get("value"), f"link[{name}].inertial.mass", source)
    if mass <= 0:
        raise ConfigError(f"link[{name}].inertial.mass", f"must be > 0, got {mass}", source)
    keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
    i = {k: _number(inertia_el.get(k, "0"), f"link[{name}].inertial.inertia.{k}", source) for k in keys}
    tensor = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]],
                       [i["ixz"], i["iyz"], i["izz"]]])
    principal = np.linalg.eigvalsh(tensor)
    scale = max(abs(principal).max(), 1e-300)
    # Relative tolerance: the published Sawyer inertias are rounded to 5 significant digits.
    if principal[0] <= 0 or principal[2] > principal[0] + principal[1] + 1e-6 * scale:
        raise ConfigError(f"link[{name}].inertial.inertia", f"is not a physical inertia tensor "
                          f"(principal moments {principal})", source)
