"""The few Pinocchio calls whose signatures differ between Pinocchio 3.x (ROS distributions) and 4.x (PyPI `pin`).

Everything else in the package calls `pinocchio` directly. Keep this module small: a function here
exists only because the two major versions disagree.
"""
import pinocchio as pin

PINOCCHIO_VERSION = tuple(int(p) for p in pin.__version__.split(".")[:2])
PINOCCHIO_4 = PINOCCHIO_VERSION >= (4, 0)


def build_model_from_urdf_string(urdf_xml: str, root_joint, root_joint_name: str, model=None):
    """Parse URDF text into `model` (or a new model) below `root_joint` (None: the URDF root is fixed).

    Pinocchio 4 added a `mimic` flag to these overloads; the positional forms used here exist in both.
    """
    if root_joint is None:
        return pin.buildModelFromXML(urdf_xml) if model is None else pin.buildModelFromXML(urdf_xml, model)
    if model is None:
        return pin.buildModelFromXML(urdf_xml, root_joint, root_joint_name)
    return pin.buildModelFromXML(urdf_xml, root_joint, root_joint_name, model)
