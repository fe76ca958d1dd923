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


def append_model_at_universe(model, part, placement):
    """`pin.appendModel(model, part, 0, placement)` with every moving body's inertia as its source model has it.

    Pinocchio 3.x before the fix of stack-of-tasks/pinocchio#2805 (PR #2807, Nov. 2025; 3.4 is affected, 4.1 is
    not) re-applies the placement of links merged through fixed joints when appending, on both models: e.g. the
    Sawyer head's centre of mass lands 0.2965 m too high per append. The source models' inertias are right, so
    they are copied back by joint name (the universe's inertia plays no part in the dynamics).
    """
    combined = pin.appendModel(model, part, 0, placement)
    for source in (model, part):
        for j in range(1, source.njoints):
            combined.inertias[combined.getJointId(source.names[j])] = source.inertias[j].copy()
    return combined


def append_model_at_frame(model, part, frame_id: int, placement):
    """`pin.appendModel(model, part, frame_id, placement)` for a `part` without joints (a fixed-base URDF), whose
    bodies are merged into the body of the joint carrying `frame_id`.

    Every joint keeps its inertia from `model`, and that joint's is its own plus the part's (the part's universe
    inertia, placed by the frame's placement on its joint times `placement`): Pinocchio 3.x before
    stack-of-tasks/pinocchio#2805 (3.4 is affected, 4.1 is not) applies the placement twice when merging, e.g. a
    1500 kg target mounted 0.9245 m from Sawyer's wrist joint lands 1.849 m from it, and re-applies the placement
    of the links `model` itself merged (as for append_model_at_universe). The frames' own inertias
    (Frame.inertia) are right in both.
    """
    if part.njoints != 1:
        raise ValueError("append_model_at_frame merges a part without joints (a fixed-base URDF)")
    frame = model.frames[frame_id]
    combined = pin.appendModel(model, part, frame_id, placement)
    for j in range(1, model.njoints):
        combined.inertias[combined.getJointId(model.names[j])] = model.inertias[j].copy()
    joint = combined.getJointId(model.names[frame.parentJoint])
    combined.inertias[joint] = model.inertias[frame.parentJoint] + (frame.placement * placement).act(part.inertias[0])
    return combined


def rigid_constraint_6d(model, joint1: int, placement1, joint2: int, placement2, kp: float, kd: float):
    """A 6D rigid constraint (CONTACT_6D, LOCAL: errors and forces in frame c1 = placement1 on joint1) with
    Baumgarte gains (kp 1/s^2, kd 1/s) on all six rows: Pinocchio 3.x holds them as 6-vectors in
    `corrector`, 4.x as scalars set through setBaumgarteCorrectorParameters."""
    constraint = pin.RigidConstraintModel(pin.ContactType.CONTACT_6D, model, joint1, placement1, joint2, placement2,
                                          pin.ReferenceFrame.LOCAL)
    if hasattr(constraint, "setBaumgarteCorrectorParameters"):
        constraint.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(kp, kd))
    else:
        constraint.corrector.Kp[:] = kp
        constraint.corrector.Kd[:] = kd
    return constraint


def init_constraint_dynamics(model, data, constraint_models, constraint_datas) -> None:
    """pin.initConstraintDynamics: Pinocchio 4 also takes the constraint datas."""
    if PINOCCHIO_4:
        pin.initConstraintDynamics(model, data, constraint_models, constraint_datas)
    else:
        pin.initConstraintDynamics(model, data, constraint_models)
