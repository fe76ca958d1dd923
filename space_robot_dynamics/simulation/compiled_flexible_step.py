"""The compiled RKMK4 step of a flexible model (native/flexible_step.cpp), used by Simulator.step in place of
ManifoldRK4.step with Simulator._flexible_rhs (docs/flexibility.md sec. 12); of a rigid model too (no elastic
terms: ManifoldRK4.step with Simulator._aba), in free flight without joint dissipation and external wrenches.

Why compiled: the flexible step's Python floor is its ~40 numpy and Pinocchio calls per right-hand side; with
Pinocchio's own crba + rnea at 9.7 us per right-hand side on the servicer (nv 41), no Python arrangement reaches
the goal of 1.5x the rigid step (README *Benchmarks*) (bench/bench_step.py). The library computes exactly what
`ManifoldRK4.step(Simulator._flexible_rhs, ...)` computes without joint dissipation and external wrenches: the
latched command plus the elastic and damping forces (docs/flexibility.md eqs. 10, 12), aba or the reduced dynamics
of eq. 16, Pinocchio's integrate and dDifference for dexp^-1. The Python path stays, as the fallback and as the
test oracle (test/test_compiled_flexible_step.py).

The library is built by the package install when a C++ compiler and Pinocchio's and Eigen's headers are found
(setup.py); `load()` says why it is absent otherwise. It rebuilds the Pinocchio model from a flat description of
the Python one (`describe`), so it does not share objects or an ABI with the Pinocchio the interpreter imported.
"""
from __future__ import annotations

import ctypes
import importlib.machinery
from pathlib import Path

import numpy as np
import pinocchio as pin

from ..model.coordinate_map import CoordinateMap
from ..model.flexibility import Flexibility
from ..model.system_model import SystemModel

# Pinocchio joint short names -> the library's kind numbers (flexible_step.cpp, enum Kind)
JOINT_KINDS = {"JointModelFreeFlyer": 0, "JointModelRX": 1, "JointModelRY": 2, "JointModelRZ": 3,
               "JointModelPX": 4, "JointModelPY": 5, "JointModelPZ": 6, "JointModelRUBX": 7, "JointModelRUBY": 8,
               "JointModelRUBZ": 9, "JointModelRevoluteUnaligned": 10, "JointModelPrismaticUnaligned": 11}
WITH_AXIS = (JOINT_KINDS["JointModelRevoluteUnaligned"], JOINT_KINDS["JointModelPrismaticUnaligned"])
LIBRARY_NAME = "_flexible_step"

_double_p = ctypes.POINTER(ctypes.c_double)
_int_p = ctypes.POINTER(ctypes.c_int)


def library_path() -> Path | None:
    """The built library next to this module (any of the interpreter's extension suffixes), or None."""
    here = Path(__file__).parent
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = here / (LIBRARY_NAME + suffix)
        if path.exists():
            return path
    return None


_library = None
_load_error = None


def load():
    """(ctypes library, None) or (None, the reason it is not available)."""
    global _library, _load_error
    if _library is None and _load_error is None:
        path = library_path()
        if path is None:
            _load_error = (f"{LIBRARY_NAME} was not built with this install (setup.py builds it when g++ and "
                           "Pinocchio's and Eigen's headers are found)")
        else:
            try:
                library = ctypes.CDLL(str(path))
            except OSError as error:
                _load_error = f"{path.name} does not load: {error}"
            else:
                library.sr_flexible_create.restype = ctypes.c_void_p
                library.sr_flexible_destroy.argtypes = [ctypes.c_void_p]
                library.sr_flexible_bind.restype = None
                library.sr_flexible_bind.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                                     ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
                library.sr_flexible_step.restype = ctypes.c_int
                library.sr_flexible_step.argtypes = [ctypes.c_void_p, ctypes.c_double, ctypes.c_int]
                library.sr_flexible_set_loop.restype = ctypes.c_int
                library.sr_flexible_set_loop.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
                                                         ctypes.c_void_p, ctypes.c_double, ctypes.c_double,
                                                         ctypes.c_void_p]
                library.sr_flexible_set_wrenches.restype = None
                library.sr_flexible_set_wrenches.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                                             ctypes.c_int]
                _library = library
    return _library, _load_error


def unsupported_joints(model: pin.Model) -> list[str]:
    """Names of the joints the library cannot rebuild (e.g. planar ones: their dexp^-1 is solved differently)."""
    return [model.names[j] for j in range(1, model.njoints) if model.joints[j].shortname() not in JOINT_KINDS]


def describe(model: pin.Model) -> dict:
    """The flat model description sr_flexible_create takes (see flexible_step.cpp)."""
    n = model.njoints - 1
    kinds = np.zeros(n, dtype=np.intc)
    parents = np.zeros(n, dtype=np.intc)
    axes = np.zeros((n, 3))
    placements = np.zeros((n, 12))
    inertias = np.zeros((n, 10))
    for j in range(1, model.njoints):
        joint = model.joints[j]
        kinds[j - 1] = JOINT_KINDS[joint.shortname()]
        if kinds[j - 1] in WITH_AXIS:
            axes[j - 1] = joint.extract().axis
        parents[j - 1] = model.parents[j]
        placement = model.jointPlacements[j]
        placements[j - 1, :9] = placement.rotation.ravel()
        placements[j - 1, 9:] = placement.translation
        inertia = model.inertias[j]
        i = inertia.inertia
        inertias[j - 1] = [inertia.mass, *inertia.lever, i[0, 0], i[0, 1], i[1, 1], i[0, 2], i[1, 2], i[2, 2]]
    return {"kinds": kinds, "parents": parents, "axes": axes, "placements": placements, "inertias": inertias,
            "armature": np.ascontiguousarray(model.armature, dtype=float),
            "gravity": np.ascontiguousarray(model.gravity.linear, dtype=float)}


def reduced_parents(model: pin.Model, T: np.ndarray) -> np.ndarray:
    """A parent of each reduced coordinate under which T^T M T has branch-induced sparsity (docs/flexibility.md eq.
    16; Featherstone 2008 sec. 6.5): entry (k, l), l < k, can be nonzero only if l is an ancestor of k.

    M's structure is the tree's: M[i, j] != 0 only if one of the full coordinates i, j is an ancestor of the other
    (Pinocchio's parents_fromRow); the reduced pattern is T's pattern^T M's pattern T's pattern. Each k gets as parent
    its deepest coupled l < k; where the couplings of k do not then all lie on its chain of parents, the chain is
    made dense (parent k - 1), which is always valid.
    """
    row_parent = model.createData().parents_fromRow
    nv, nr = T.shape
    ancestor = np.eye(nv, dtype=bool)
    for i in range(nv):
        j = row_parent[i]
        while j >= 0:
            ancestor[i, j] = True
            j = row_parent[j]
    structure = (ancestor | ancestor.T).astype(int)
    used = (T != 0).astype(int)
    coupled = (used.T @ structure @ used) > 0
    parents = np.full(nr, -1, dtype=np.intc)
    chains: list[set] = []
    for k in range(nr):
        below = np.flatnonzero(coupled[k, :k])
        parents[k] = below[-1] if len(below) else -1
        chain = set() if parents[k] < 0 else {int(parents[k])} | chains[parents[k]]
        if not set(below.tolist()) <= chain:
            return np.arange(-1, nr - 1, dtype=np.intc)
        chains.append(chain)
    return parents


def _pointer(array: np.ndarray, kind):
    return array.ctypes.data_as(kind)


class CompiledFlexibleStep:
    """`step(tau, q0, v0, z0, dt, dissipated)` -> (q, y, dq, finite): ManifoldRK4.step with Simulator._flexible_rhs
    under the generalized command tau (nv), for a model without joint dissipation and external wrenches.

    `flexibility` gives the elastic terms (selected_q, selected_v, K, C, f0: Flexibility; None for a rigid model:
    no elastic terms, the RKMK4 step of plain aba), `coordinates` the dependent ones (None or trivial: aba)."""

    name = "compiled"

    def __init__(self, model: pin.Model, flexibility: Flexibility | None, coordinates: CoordinateMap | None):
        library, error = load()
        if library is None:
            raise RuntimeError(error)
        self._library = library
        self.nq, self.nv = model.nq, model.nv
        flat = describe(model)
        trivial = coordinates is None or coordinates.trivial
        if trivial:
            rows = columns = parents = np.zeros(0, dtype=np.intc)
            values, nr = np.zeros(0), model.nv
        else:
            rows, columns = np.nonzero(coordinates.T)
            order = np.lexsort((rows, columns))              # column by column
            rows = np.ascontiguousarray(rows[order], dtype=np.intc)
            columns = np.ascontiguousarray(columns[order], dtype=np.intc)
            values = np.ascontiguousarray(coordinates.T[rows, columns])
            nr = coordinates.nr
            parents = reduced_parents(model, coordinates.T)
        if flexibility is None:          # a rigid model: no elastic terms
            selected_q = selected_v = np.zeros(0, dtype=np.intc)
            K = C = np.zeros((0, 0))
            f0 = np.zeros(0)
        else:
            selected_q = np.ascontiguousarray(flexibility.selected_q, dtype=np.intc)
            selected_v = np.ascontiguousarray(flexibility.selected_v, dtype=np.intc)
            K = np.ascontiguousarray(flexibility.K, dtype=float)
            C = np.ascontiguousarray(flexibility.C, dtype=float)
            f0 = np.ascontiguousarray(flexibility.f0, dtype=float)
        # eq. 14's projection of the dependent coordinates
        projection = [np.zeros(0, dtype=np.intc)] * 4 + [np.zeros((0, 0))] if trivial else \
            [np.ascontiguousarray(a, dtype=np.intc) for a in (coordinates.dependent_q, coordinates.dependent_v,
                                                              coordinates.source_q, coordinates.source_v)] + \
            [np.ascontiguousarray(coordinates.S, dtype=float)]
        message = ctypes.create_string_buffer(256)
        handle = library.sr_flexible_create(
            ctypes.c_int(model.njoints - 1), _pointer(flat["kinds"], _int_p), _pointer(flat["parents"], _int_p),
            _pointer(flat["axes"], _double_p), _pointer(flat["placements"], _double_p),
            _pointer(flat["inertias"], _double_p), _pointer(flat["armature"], _double_p),
            _pointer(flat["gravity"], _double_p), ctypes.c_int(nr), _pointer(parents, _int_p),
            ctypes.c_int(len(values)),
            _pointer(rows, _int_p), _pointer(columns, _int_p), _pointer(values, _double_p),
            ctypes.c_int(len(selected_q)), _pointer(selected_q, _int_p), _pointer(selected_v, _int_p),
            _pointer(K, _double_p), _pointer(C, _double_p), _pointer(f0, _double_p),
            ctypes.c_int(len(projection[0])), ctypes.c_int(len(projection[2])),
            *(_pointer(a, _int_p) for a in projection[:4]), _pointer(projection[4], _double_p),
            message, ctypes.c_int(256))
        if not handle:
            raise RuntimeError(f"{LIBRARY_NAME}: {message.value.decode()}")
        self._handle = ctypes.c_void_p(handle)
        self._arguments = (model, flexibility, coordinates)
        self._step = library.sr_flexible_step
        self._q0, self._tau = np.zeros(self.nq), np.zeros(self.nv)
        self._q, self._dq = np.zeros(self.nq), np.zeros(self.nv)
        self._ny = None
        self.loop = None                          # the LoopClosure held (set_loop), None in free flight
        self.wrench_version = None                # ExternalWrenches.version last copied (set_wrenches)
        self._force = np.zeros(6)                 # the library writes the first stage's multipliers here
        self._fext = np.zeros((model.njoints, 6))

    def __reduce__(self):
        """Copies and pickles build a library object of their own (two owners of one handle would free it twice)."""
        return self.__class__, self._arguments

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and handle.value:
            self._library.sr_flexible_destroy(handle)

    def set_loop(self, loop) -> None:
        """The held grasp from the next step on (a LoopClosure on the fast route: loop_closure.py), or None."""
        if loop is None:
            self._library.sr_flexible_set_loop(self._handle, -1, None, -1, None, 0.0, 0.0, None)
        else:
            flat = [np.ascontiguousarray(np.r_[p.rotation.ravel(), p.translation]) for p in (loop.placement1,
                                                                                           loop.placement2)]
            if self._library.sr_flexible_set_loop(self._handle, loop.joint1, flat[0].ctypes.data, loop.joint2,
                                                  flat[1].ctypes.data, loop.kp, loop.kd, self._force.ctypes.data):
                raise ValueError(f"{LIBRARY_NAME}: bad loop joints {loop.joint1}, {loop.joint2}")
        self.loop = loop

    def set_wrenches(self, forces, version: int, external_rate: int | None, impulse_rate: int | None) -> None:
        """Constant external joint forces from the next step on: [(joint, [f; n])] (Pinocchio's fext: LOCAL joint
        frames, about the joint origins; the other joints none; None: no wrench at all); their power and resultant
        are the rates at external_rate and impulse_rate (indices in y = [v, z], None: absent). `version`:
        ExternalWrenches.version they come from."""
        if forces is None or not len(forces):
            self._library.sr_flexible_set_wrenches(self._handle, None, -1, -1)
        else:
            self._fext[:] = 0.0
            for j, force in forces:
                self._fext[j] = force
            self._library.sr_flexible_set_wrenches(self._handle, self._fext.ctypes.data,
                                                   -1 if external_rate is None else external_rate,
                                                   -1 if impulse_rate is None else impulse_rate)
        self.wrench_version = version

    @property
    def stage_force(self) -> np.ndarray:
        """The multipliers of the last step's first stage (N, N m; frame c1), a new array."""
        return self._force.copy()

    def _bind(self, ny: int) -> None:
        """The library reads and writes these buffers (their addresses are taken once: that costs ~1 us a call)."""
        self._y0, self._y = np.zeros(ny), np.zeros(ny)
        self._library.sr_flexible_bind(self._handle, *(a.ctypes.data for a in (self._q0, self._y0)), ny,
                                       *(a.ctypes.data for a in (self._tau, self._q, self._y, self._dq)))
        self._ny = ny

    def step(self, tau: np.ndarray, q0: np.ndarray, v0: np.ndarray, z0: np.ndarray, dt: float,
             dissipated: int | None):
        """(q, y = [v, z], dq, finite), new arrays, from (q0, v0, z0) under tau (nv); the dependent coordinates of q
        and v set from their sources (eq. 14); finite: every entry of q and y is. np.linalg.LinAlgError if a reduced
        mass matrix is not positive definite."""
        nv, ny = self.nv, self.nv + len(z0)
        if ny != self._ny:
            self._bind(ny)
        self._q0[:] = q0
        self._y0[:nv] = v0
        self._y0[nv:] = z0
        self._tau[:] = tau
        status = self._step(self._handle, dt, -1 if dissipated is None else dissipated)
        if status == 1:
            raise np.linalg.LinAlgError("reduced mass matrix not positive definite (compiled flexible step)")
        return self._q.copy(), self._y.copy(), self._dq.copy(), status == 0


def compiled_flexible_step(system: SystemModel, settings, dissipation) -> tuple[CompiledFlexibleStep | None, str]:
    """(the compiled step for this simulation, "") or (None, why not): the rk4 integrator, `flexible_step: compiled`,
    no joint dissipation, joints the library knows, and a built library. A rigid model too: its RKMK4 step of four
    aba is ~45 % of the Python step's cost (~20 against ~40 us on the servicer, nv 22: the Python step's ~40 numpy
    and Pinocchio calls, bench/bench_step.py), and the step is a third to a half of a whole graph's tick."""
    reasons = []
    if settings.flexible_step != "compiled":
        reasons.append(f"simulation.flexible_step is {settings.flexible_step!r}")
    if settings.integrator != "rk4":
        reasons.append(f"the integrator is {settings.integrator!r} (compiled: rk4 only)")
    if dissipation is not None:
        reasons.append("joint damping or friction is on (compiled: the elastic terms only)")
    unknown = unsupported_joints(system.model)
    if unknown:
        reasons.append(f"joints of a kind the library does not rebuild: {', '.join(unknown)}")
    if reasons:
        return None, "; ".join(reasons)
    library, error = load()
    if library is None:
        return None, error
    return CompiledFlexibleStep(system.model, system.flexibility, system.coordinates), ""
