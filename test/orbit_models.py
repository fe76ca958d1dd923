"""Small models for the orbit tests: rigid bodies, each its own free-flying subtree (written to a temporary folder)."""
from __future__ import annotations

import textwrap

import numpy as np

from space_robot_dynamics.model.system_model import build_model


def body_urdf(mass: float, inertia) -> str:
    ixx, iyy, izz = inertia
    return textwrap.dedent(f"""\
        <robot name="body">
          <link name="base_link"><inertial><mass value="{mass}"/>
            <inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>
        </robot>""")


def free_bodies(tmp_path, count: int = 2, mass: float = 1.0, inertia=(1e-4, 1e-4, 1e-4), thrusters=None):
    """A model of `count` identical rigid bodies (body0, body1, ...), each on a free flyer, principal axes along its
    base link's; `thrusters`: (max_force N, max_torque N m) on body0 (model/base_thrusters.py), None: none."""
    urdf = tmp_path / "body.urdf"
    urdf.write_text(body_urdf(mass, inertia))
    subtrees = [{"name": f"body{k}", "urdf": str(urdf), "base_joint": "free_flyer", "base_link": "base_link",
                 "frame_prefix": f"body{k}/"} for k in range(count)]
    config = {"name": "free_bodies", "subtrees": subtrees}
    if thrusters is not None:
        config["base_thrusters"] = {"subtree": "body0", "max_force": thrusters[0], "max_torque": thrusters[1]}
    return build_model(config)


def base_state(system, poses: dict) -> tuple[np.ndarray, np.ndarray]:
    """(q, v) with each named body at (position, quaternion xyzw, linear velocity, angular velocity), the
    velocities in the body's axes (Pinocchio's LOCAL), as a scenario's initial_state gives them."""
    q, v = system.neutral(), np.zeros(system.nv)
    for name, (position, quaternion, linear, angular) in poses.items():
        qs, vs = system.q_slice(system.subtree(name).config.root_joint_name), \
            system.v_slice(system.subtree(name).config.root_joint_name)
        q[qs] = np.concatenate((position, quaternion))
        v[vs] = np.concatenate((linear, angular))
    return q, v
