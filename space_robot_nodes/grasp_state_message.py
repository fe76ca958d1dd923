"""The grasp/state message: the contacts of the dynamics node as a std_msgs/Float64MultiArray whose entries are
named in layout.dim[0].label (comma-separated), as holonomy/status (docs/contact.md sec. 10).

Entries (SI; EE = the grasp's end-effector frame, about its origin):
- holding (1: the grasp holds the target), gripper_closed (1 closed, also on nothing), mode (0 free, 1 grasp,
  2 surface contact), grasp_time_s (when the grasp now holding closed; -1 none), events (contact events so far),
  last_event_time_s (-1 none);
- drift_position_m, drift_angle_rad: the held constraint's pose error (loop_closure.py eq. 1; a surface: |Phi|);
- peak_force_n, peak_torque_nm: the largest grasp force and torque since the grasp closed, over every physics
  step (a surface contact: the largest normal force since touchdown);
- axial_force_n, twist_torque_nm, shear_force_n, bending_torque_nm: the grasp wrench now split into its normal and
  tangential parts (seed 004 sec. 5.3, constraint_wrench.py): the force along the approach axis (positive: the
  hand presses on the fixture), the torque about it, the force across it and the torque about the axes across it
  (zero when nothing is held);
- impulse_force_{x,y,z} (N s), impulse_torque_{x,y,z} (N m s): the last grasp's impulse on the hand, EE frame
  (touchdown: the normal impulse in impulse_force_x); impact_energy_loss_j: the kinetic energy it took;
  momentum_change_across_grasp: the largest relative change of total linear or angular momentum across it
  (contact_events.MomentumJump, zero to round-off).
"""
from __future__ import annotations

import numpy as np

from space_robot_dynamics.contact.contact_events import GRASP, TOUCHDOWN

from . import conversions as cv

MODES = {"free": 0.0, "grasp": 1.0, "surface": 2.0}
GRASP_STATE_FIELDS = (
    "holding", "gripper_closed", "mode", "grasp_time_s", "events", "last_event_time_s",
    "drift_position_m", "drift_angle_rad", "peak_force_n", "peak_torque_nm",
    "axial_force_n", "twist_torque_nm", "shear_force_n", "bending_torque_nm",
    "impulse_force_x", "impulse_force_y", "impulse_force_z", "impulse_torque_x", "impulse_torque_y",
    "impulse_torque_z", "impact_energy_loss_j", "momentum_change_across_grasp")
GRASP_STATE_LABEL = ",".join(GRASP_STATE_FIELDS)


def grasp_state_values(state, events, parts=None) -> list[float]:
    """The entries for a simulator's ContactState, its contact events and the grasp wrench's parts now
    (constraint_wrench.WrenchParts; None: nothing held)."""
    impulse, loss, change = np.zeros(6), 0.0, 0.0
    for event in reversed(events):
        if event.kind in (GRASP, TOUCHDOWN):
            impulse[:len(event.impulse)] = event.impulse
            loss = event.energy_loss
            change = event.momentum.relative_change
            break
    return [float(state.holding), float(state.gripper_closed), MODES[state.mode],
            -1.0 if state.grasp_time is None else state.grasp_time, float(state.events),
            events[-1].t if events else -1.0, state.drift_position, state.drift_angle, state.peak_force,
            state.peak_torque, *(_part_figures(parts) if parts is not None else (0.0,) * 4), *impulse.tolist(),
            loss, change]


def _part_figures(parts) -> tuple:
    return parts.axial_force, parts.twist_torque, parts.shear_force, parts.bending_torque


def grasp_state_message(types, state, events, parts=None):
    return cv.float64_multi_array(types, grasp_state_values(state, events, parts), GRASP_STATE_LABEL)


def read_grasp_state(msg, field: str = "grasp_state") -> dict:
    """name -> value of a grasp/state message; CommandError naming `field` when it is not one."""
    labels = msg.layout.dim[0].label.split(",") if len(msg.layout.dim) else []
    values = np.asarray(msg.data, dtype=float)
    if tuple(labels) != GRASP_STATE_FIELDS or len(values) != len(labels):
        raise cv.CommandError(field, f"not a grasp/state message (labels {labels[:3]}...)")
    return dict(zip(labels, values.tolist()))
