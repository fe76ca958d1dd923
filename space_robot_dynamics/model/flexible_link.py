"""One flexible link: its beam, its modal bodies, the rigid residual, its stiffness and its tip map
(docs/flexibility.md sec. 3 and eq. 14).

Inputs are the link's URDF data in the link frame (the frame of its parent joint): mass, centre of mass and
inertia about it, the parent joint's axis, and the position of the beam's tip. Everything here is in the link
frame or the beam frame B (origin at the link frame's, columns e_x, e_y, e_z of `rotation`), SI units.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError
from .beam_modes import ModeSet, mode_set
from .flexibility_config import DIRECTIONS, FlexibleLinkConfig

MIN_BENDING_AXIS = 0.1          # |a x e_x| below this: the joint axis does not define the bending plane
PSEUDO_INERTIA_TOL = 1e-9       # relative to the link's pseudo-inertia scale (URDF figures are rounded)
TIP_CHAIN = ("tip_y", "tip_z", "tip_rz", "tip_ry", "tip_rx")     # eq. 4: translations, then Rz Ry Rx


@dataclass(frozen=True)
class InertiaParameters:
    """mass (kg), centre of mass (m) and inertia about it (kg m^2), in the link frame."""

    mass: float
    com: np.ndarray
    inertia: np.ndarray

    def pseudo_inertia(self) -> np.ndarray:
        """[[Sigma, h], [h^T, m]] with Sigma = int r r^T dm about the frame origin, h = m c: positive
        semi-definite exactly when the parameters are those of some mass distribution (Wensing et al. 2017)."""
        c = self.com
        about_origin = self.inertia + self.mass * (c @ c * np.eye(3) - np.outer(c, c))
        out = np.zeros((4, 4))
        out[:3, :3] = 0.5 * np.trace(about_origin) * np.eye(3) - about_origin
        out[:3, 3] = out[3, :3] = self.mass * c
        out[3, 3] = self.mass
        return out

    @staticmethod
    def from_pseudo_inertia(j: np.ndarray) -> InertiaParameters:
        mass = float(j[3, 3])
        com = j[:3, 3] / mass if mass > 0.0 else np.zeros(3)
        about_origin = np.trace(j[:3, :3]) * np.eye(3) - j[:3, :3]
        inertia = about_origin - mass * (com @ com * np.eye(3) - np.outer(com, com))
        return InertiaParameters(mass, com, 0.5 * (inertia + inertia.T))


@dataclass(frozen=True)
class ModeFamily:
    """The modes of one direction of one link, with their stiffness and damping on delta (eq. 10)."""

    direction: str
    modes: ModeSet
    names: tuple            # coordinate names, "<link>/<direction>_<i>"
    omega: np.ndarray       # rad/s, natural frequencies of the beam alone (eq. 9)
    stiffness: np.ndarray   # K_i, N/m (bending) or N m/rad (torsion), on delta_i
    damping: np.ndarray     # c_i, N s/m or N m s/rad
    scale: np.ndarray       # a_i = M_i / P_i: joint coordinate s_i = a_i delta_i (eq. 7)


@dataclass(frozen=True)
class ModalBody:
    """Point mass m_i (kg) at position (m) along e_x carrying bending mode index i in y and/or z (eq. 7)."""

    index: int
    position: float
    mass: float
    scale: float
    y_name: str | None
    z_name: str | None


@dataclass(frozen=True)
class TorsionBody:
    """Rotor about e_x at the root with polar inertia (kg m^2) carrying torsion mode k (eq. 7)."""

    name: str
    inertia: float
    scale: float


class FlexibleLink:
    """See the module docstring. `config` is the validated FlexibleLinkConfig; link_inertia the URDF's;
    joint_axis the parent joint's axis in the link frame (None for a fixed parent joint); tip the position of
    the beam's free end in the link frame (m)."""

    def __init__(self, config: FlexibleLinkConfig, link_inertia: InertiaParameters, joint_axis: np.ndarray | None,
                 tip: np.ndarray, source: str | None = None):
        self.config = config
        self.name = config.link
        self.field = config.field
        self.source = source
        self.link_inertia = link_inertia
        tip = np.asarray(tip, dtype=float)
        self.length = float(np.linalg.norm(tip))
        if self.length < 1e-6:
            raise self._error("tip", f"the tip is at the link's origin ({tip.tolist()}): the beam has no length")
        self.rotation = self._beam_frame(tip / self.length, joint_axis)
        self.tip_position = tip
        self.mass_per_length = config.mass_per_length if config.mass_per_length is not None \
            else link_inertia.mass / self.length
        self.polar_inertia_per_length = 0.0
        if config.torsion is not None and config.torsion.modes:
            axis_inertia = self._about_origin(link_inertia) @ self.rotation[:, 0] @ self.rotation[:, 0]
            self.polar_inertia_per_length = config.torsion.polar_inertia_per_length \
                if config.torsion.polar_inertia_per_length is not None else axis_inertia / self.length
        self._check_beam_fits()
        self.families = {}
        for direction in DIRECTIONS:
            family = config.family(direction)
            if family is not None and family.modes:
                self.families[direction] = self._family(direction, family)
        self.bodies = self._modal_bodies()
        self.torsion_bodies = self._torsion_bodies()
        self.residual = self._residual()

    # ---- geometry -----------------------------------------------------------------------------
    def _beam_frame(self, e_x: np.ndarray, joint_axis: np.ndarray | None) -> np.ndarray:
        given = self.config.bending_y_axis
        if given is not None:
            candidate, field = np.asarray(given, dtype=float), "bending_y_axis"
        elif joint_axis is not None:
            candidate, field = np.cross(joint_axis, e_x), "bending_y_axis"
        else:
            raise self._error("bending_y_axis", "the link's parent joint is fixed: give the in-plane bending "
                                                "direction (link frame)")
        candidate = candidate - (candidate @ e_x) * e_x
        norm = float(np.linalg.norm(candidate))
        if norm < MIN_BENDING_AXIS * (1.0 if given is None else float(np.linalg.norm(given))):
            raise self._error(field, "the joint axis is (nearly) along the beam: give bending_y_axis, a direction "
                                     "across the beam in the link frame" if given is None else
                                     "is (nearly) along the beam axis")
        e_y = candidate / norm
        return np.column_stack((e_x, e_y, np.cross(e_x, e_y)))

    @staticmethod
    def _about_origin(p: InertiaParameters) -> np.ndarray:
        c = p.com
        return p.inertia + p.mass * (c @ c * np.eye(3) - np.outer(c, c))

    def beam_inertia(self) -> InertiaParameters:
        """The uniform beam of docs/flexibility.md sec. 2 as a rigid body in the link frame: the line mass mu L
        along e_x, plus, with torsion, thin disks of polar inertia rho_Ip per length (transverse half of it)."""
        e_x, L, mu = self.rotation[:, 0], self.length, self.mass_per_length
        mass = mu * L
        com = 0.5 * L * e_x
        transverse = mu * L ** 3 / 12.0 + 0.5 * self.polar_inertia_per_length * L
        inertia = transverse * (np.eye(3) - np.outer(e_x, e_x)) + self.polar_inertia_per_length * L * np.outer(e_x, e_x)
        return InertiaParameters(mass, com, inertia)

    def _check_beam_fits(self) -> None:
        """URDF minus beam must be physical (pseudo-inertia PSD, sec. 3 'Mass properties'), else the error names
        mass_per_length (or the torsion's polar inertia) with the largest value that fits."""
        link = self.link_inertia.pseudo_inertia()
        scale = max(np.abs(link).max(), 1e-12)
        if np.linalg.eigvalsh(link - self.beam_inertia().pseudo_inertia()).min() >= -PSEUDO_INERTIA_TOL * scale:
            return
        mu, self.mass_per_length = self.mass_per_length, 0.0
        polar_ok = np.linalg.eigvalsh(link - self.beam_inertia().pseudo_inertia()).min() >= -PSEUDO_INERTIA_TOL * scale
        if not polar_ok:
            raise self._error("torsion.polar_inertia_per_length", f"{self.polar_inertia_per_length:.6g} kg m is more "
                              "than the link's inertia about the beam axis allows")
        low, high = 0.0, mu
        for _ in range(60):
            self.mass_per_length = 0.5 * (low + high)
            fits = np.linalg.eigvalsh(link - self.beam_inertia().pseudo_inertia()).min() >= -PSEUDO_INERTIA_TOL * scale
            low, high = (self.mass_per_length, high) if fits else (low, self.mass_per_length)
        field = "mass_per_length"
        given = f"{mu:.6g} kg/m"
        if self.config.mass_per_length is None:
            given += f" (the default: link mass {self.link_inertia.mass:.6g} kg / length {self.length:.6g} m)"

        raise self._error(field, f"a uniform beam of {given} along the link's axis does not fit its URDF inertia "
                                 f"(mass, centre of mass, inertia): the rest would not be a physical body; at most "
                                 f"{low:.6g} kg/m fits")

    # ---- modes ----------------------------------------------------------------------------------
    def _family(self, direction: str, family) -> ModeFamily:
        torsion = direction == "torsion"
        boundary = "clamped_free" if direction != "bending_y" else self.config.boundary_condition
        density = self.polar_inertia_per_length if torsion else self.mass_per_length
        modes = mode_set("torsion" if torsion else "bending", boundary, family.modes, self.length, density)
        if family.frequencies_hz is not None:
            omega = 2.0 * np.pi * np.asarray(family.frequencies_hz, dtype=float)
        else:
            omega = modes.frequencies(family.rigidity)
        ratios = np.asarray(family.damping_ratios, dtype=float)
        names = tuple(f"{self.name}/{direction}_{i}" for i in range(1, family.modes + 1))
        return ModeFamily(direction, modes, names, omega, omega ** 2 * modes.M, 2.0 * ratios * omega * modes.M,
                          modes.M / modes.P)

    def _modal_bodies(self) -> tuple:
        """One point mass per bending mode index, carrying y and z of that index (eq. 7; y and z share shapes,
        both clamped-free, or y alone when pinned-free)."""
        y, z = self.families.get("bending_y"), self.families.get("bending_z")
        count = max(f.modes.count if f is not None else 0 for f in (y, z))
        bodies = []
        for i in range(count):
            source = y if y is not None and i < y.modes.count else z
            modes = source.modes
            bodies.append(ModalBody(
                index=i + 1, position=float(modes.H[i] / modes.P[i]), mass=float(modes.P[i] ** 2 / modes.M[i]),
                scale=float(source.scale[i]),
                y_name=y.names[i] if y is not None and i < y.modes.count else None,
                z_name=z.names[i] if z is not None and i < z.modes.count else None))
        return tuple(bodies)

    def _torsion_bodies(self) -> tuple:
        family = self.families.get("torsion")
        if family is None:
            return ()
        m = family.modes
        return tuple(TorsionBody(family.names[k], float(m.P[k] ** 2 / m.M[k]), float(family.scale[k]))
                     for k in range(m.count))

    def _residual(self) -> InertiaParameters:
        """Eq. 8: the URDF inertia minus the modal bodies at zero deflection (link frame)."""
        e_x = self.rotation[:, 0]
        j = self.link_inertia.pseudo_inertia()
        for body in self.bodies:
            r = body.position * e_x
            point = np.zeros((4, 4))
            point[:3, :3] = body.mass * np.outer(r, r)
            point[:3, 3] = point[3, :3] = body.mass * r
            point[3, 3] = body.mass
            j = j - point
        for body in self.torsion_bodies:       # inertia J e_x e_x^T: Sigma = J/2 (1 - 2 e_x e_x^T)
            j[:3, :3] -= body.inertia * (0.5 * np.eye(3) - np.outer(e_x, e_x))
        return InertiaParameters.from_pseudo_inertia(j)

    # ---- the tip map (eq. 14) -------------------------------------------------------------------
    def tip_rows(self) -> dict:
        """Tip-chain joint name -> {modal joint name: coefficient} with tip coordinate = sum coefficient * s,
        s the modal joints' coordinates (s_i = a_i delta_i)."""
        rows = {}
        y, z, t = (self.families.get(d) for d in DIRECTIONS)
        if y is not None:
            rows["tip_y"] = {n: 1.0 / a for n, a in zip(y.names, y.scale)}
        if z is not None:
            rows["tip_z"] = {n: 1.0 / a for n, a in zip(z.names, z.scale)}
        if y is not None:
            rows["tip_rz"] = {n: s / a for n, a, s in zip(y.names, y.scale, y.modes.tip_slope)}
        if z is not None:
            rows["tip_ry"] = {n: -s / a for n, a, s in zip(z.names, z.scale, z.modes.tip_slope)}
        if t is not None:
            rows["tip_rx"] = {n: 1.0 / a for n, a in zip(t.names, t.scale)}
        return {f"{self.name}/{key}": row for key, row in rows.items() if key in TIP_CHAIN}

    def deflection(self, xi: np.ndarray, deltas: dict) -> np.ndarray:
        """Beam axis points r(x) (eq. 1) at xi = x / L in the link frame, (len(xi), 3), for modal coordinates
        `deltas` (direction -> array of delta, m); torsion does not move the axis."""
        xi = np.asarray(xi, dtype=float)
        local = np.zeros((len(xi), 3))
        local[:, 0] = xi * self.length
        for column, direction in ((1, "bending_y"), (2, "bending_z")):
            family = self.families.get(direction)
            if family is not None:
                local[:, column] = np.asarray(deltas[direction]) @ family.modes.shapes(xi)
        return local @ self.rotation.T

    def _error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.field}.{key}", f"link {self.name!r}: {problem}", self.source)
