"""visualization_msgs/Marker of the deformed flexible links (docs/flexibility.md sec. 7): one LINE_LIST in the world
frame through points of each beam's axis r(x) = x e_x + m (w_y(x) e_y + w_z(x) e_z) (eq. 1), the deflection magnified
by m (a 1 mm deflection is 10 cm at the default m = 100), placed with the link frame's pose from Pinocchio's forward
kinematics at the published state.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from space_robot_dynamics.model.system_model import SystemModel

from . import conversions as cv
from .message_types import MessageTypes

MARKER = "visualization_msgs/msg/Marker"
COLOUR = (1.0, 0.45, 0.0, 1.0)          # orange, opaque


class DeformationMarkerBuilder:
    def __init__(self, types: MessageTypes, system: SystemModel, world_frame: str, magnification: float,
                 points_per_link: int, line_width: float):
        self.types, self.system, self.world_frame = types, system, world_frame
        self.magnification = float(magnification)
        self.data = system.model.createData()
        self._xi = np.linspace(0.0, 1.0, points_per_link)
        flexibility = system.flexibility
        self._links = []
        for link in flexibility.links:
            rows = {direction: [m.q for m in flexibility.modal if m.link == link.name and m.direction == direction]
                    for direction in ("bending_y", "bending_z")}
            scales = {direction: np.array([m.scale for m in flexibility.modal if m.link == link.name
                                           and m.direction == direction]) for direction in rows}
            self._links.append((link, system.model.getFrameId(link.name), rows, scales))
        marker_class = types.cls(MARKER)
        self._fields = dict(ns="flexible_links", id=0, type=int(marker_class.LINE_LIST), action=int(marker_class.ADD),
                            pose=types.make("geometry_msgs/msg/Pose", position=cv.point(types, (0.0, 0.0, 0.0)),
                                            orientation=cv.quaternion(types, (0.0, 0.0, 0.0, 1.0))),
                            scale=cv.vector3(types, (line_width, 0.0, 0.0)),
                            color=types.make("std_msgs/msg/ColorRGBA", r=COLOUR[0], g=COLOUR[1], b=COLOUR[2],
                                             a=COLOUR[3]))
        self._point = types.constructor("geometry_msgs/msg/Point", ("x", "y", "z"))

    def points(self, q: np.ndarray) -> np.ndarray:
        """(n, 3) world points, consecutive pairs being the segments of the LINE_LIST (m)."""
        model, data = self.system.model, self.data
        pin.framesForwardKinematics(model, data, q)
        segments = []
        for link, frame, rows, scales in self._links:
            deltas = {d: self.magnification * q[rows[d]] / scales[d] for d in rows if rows[d]}
            local = link.deflection(self._xi, deltas)
            placement = data.oMf[frame]
            world = local @ placement.rotation.T + placement.translation
            segments.append(np.repeat(world, 2, axis=0)[1:-1])          # p0 p1 p1 p2 ... p_{n-1}
        return np.concatenate(segments) if segments else np.zeros((0, 3))

    def build(self, t: float, q: np.ndarray):
        point = self._point
        return self.types.new(MARKER, header=cv.header(self.types, t, self.world_frame),
                              points=[point(*p) for p in self.points(q).tolist()], **self._fields)
