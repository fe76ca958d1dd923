"""Microseconds per dynamics step of the servicer + target model (nv = 22), RK4 and semi-implicit Euler.

Each figure is printed with ratios to two baselines measured in the same run:
  raw      the same algorithm written plainly as bare Pinocchio calls and numpy arithmetic (no validation,
           no limits, no auxiliary states): what a user writing the loop by hand would get;
  calls    the Pinocchio calls of one step alone on fixed inputs (RK4: 4 aba, 4 integrate, 3 dDifference for
           dexp^-1; Euler: 1 aba, 1 integrate): the floor of any Python step on this model.
Goal: Simulator within 1.3x of its bare Pinocchio calls. Real-time factor at 1 kHz =
1000 us / (us per step).

Flexible models (docs/flexibility.md): the Simulator step of config/models/servicer_flexible.yaml (two
flexible links with two modes each, seven elastic Sawyer joints: nv 41 of which 33 independent; reduced dynamics,
eq. 16) and of the same servicer with the elastic joints only (a plain tree: aba), each as a ratio to the rigid
Simulator step measured in the same run. Goal: at most 1.5x. Each is timed with the compiled step (the default,
compiled_flexible_step.py) and with the Python step (`flexible_step: python`, its oracle).

    python bench/bench_step.py [--steps N] [--repeats R]
"""
from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import pinocchio as pin
from call_timing import timed

from space_robot_dynamics.model.model_config import load_model_config
from space_robot_dynamics.model.system_model import SystemModel, build_model
from space_robot_dynamics.simulation.simulator import SimulationSettings, Simulator

DT = 1e-3


def raw_rk4(model, data, tau):
    """The RKMK4 step as bare Pinocchio calls: aba at four stages, dexp^-1 on the two free flyers."""
    ff = [slice(j.idx_v, j.idx_v + 6) for j in model.joints[1:] if j.shortname() == "JointModelFreeFlyer"]
    state = {"q": pin.neutral(model), "v": np.zeros(model.nv)}

    def dexp_inv(xi, w):
        out = w.copy()
        for b in ff:
            out[b] = pin.Jlog6(pin.exp6(xi[b])) @ w[b]
        return out

    def step():
        q0, v0, h = state["q"], state["v"], 0.5 * DT
        a1 = pin.aba(model, data, q0, v0, tau)
        xi = h * v0
        v2 = v0 + h * a1
        a2 = pin.aba(model, data, pin.integrate(model, q0, xi), v2, tau)
        k2 = dexp_inv(xi, v2)
        xi = h * k2
        v3 = v0 + h * a2
        a3 = pin.aba(model, data, pin.integrate(model, q0, xi), v3, tau)
        k3 = dexp_inv(xi, v3)
        xi = DT * k3
        v4 = v0 + DT * a3
        a4 = pin.aba(model, data, pin.integrate(model, q0, xi), v4, tau)
        k4 = dexp_inv(xi, v4)
        state["q"] = pin.integrate(model, q0, DT / 6 * (v0 + 2 * (k2 + k3) + k4))
        state["v"] = v0 + DT / 6 * (a1 + 2 * (a2 + a3) + a4)

    return step


def pinocchio_calls(model, data, tau, integrator: str):
    """Only the Pinocchio calls of one step, on fixed inputs (no arithmetic between them)."""
    q, v, xi = pin.neutral(model), np.zeros(model.nv), np.full(model.nv, 1e-4)
    q1 = pin.integrate(model, q, xi)
    arg1 = pin.ArgumentPosition.ARG1
    if integrator == "semi_implicit_euler":
        def step():
            pin.aba(model, data, q, v, tau)
            pin.integrate(model, q, xi)
        return step

    def step():
        for _ in range(4):
            pin.aba(model, data, q, v, tau)
            pin.integrate(model, q, xi)
        for _ in range(3):
            pin.dDifference(model, q, q1, arg1)
    return step


def raw_euler(model, data, tau):
    state = {"q": pin.neutral(model), "v": np.zeros(model.nv)}

    def step():
        state["v"] = state["v"] + DT * pin.aba(model, data, state["q"], state["v"], tau)
        state["q"] = pin.integrate(model, state["q"], DT * state["v"])

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    system = SystemModel(load_model_config("config/models/servicer_target.yaml"))
    model = system.model
    arm = 0.1 * np.ones(len(system.arm_joints))
    wheels = 0.01 * np.ones(len(system.wheel_joints))
    tau = np.zeros(model.nv)
    tau[system.arm_v], tau[system.wheel_v] = arm, wheels
    print(f"pinocchio {pin.__version__}, numpy {np.__version__}, model nq={model.nq} nv={model.nv}")
    print(f"{'integrator':<22}{'Simulator us/step':>18}{'raw us':>9}{'/raw':>7}{'calls us':>10}{'/calls':>8}"
          f"{'RTF @1kHz':>11}")
    for name, raw in (("rk4", raw_rk4), ("semi_implicit_euler", raw_euler)):
        sim = Simulator(system, SimulationSettings(dt=DT, integrator=name))
        ours = timed(lambda sim=sim: sim.step(arm, wheels), args.steps, args.repeats, sim.reset)[0]
        base = timed(raw(model, model.createData(), tau), args.steps, args.repeats)[0]
        floor = timed(pinocchio_calls(model, model.createData(), tau, name), args.steps, args.repeats)[0]
        print(f"{name:<22}{ours:>18.1f}{base:>9.1f}{ours / base:>7.2f}{floor:>10.1f}{ours / floor:>8.2f}"
              f"{1000.0 / ours:>10.1f}x")
    aba = timed(lambda: pin.aba(model, sim.data, sim.state.q, sim.state.v, tau), args.steps, args.repeats)[0]
    print(f"(one pinocchio.aba call: {aba:.1f} us)")

    flexible_config = load_model_config("config/models/servicer_flexible.yaml")
    variants = (("flexible links + elastic joints", build_model(flexible_config)),
                ("elastic joints only", build_model(dataclasses.replace(flexible_config, flexible_links=()))))
    print(f"\n{'model (RK4, same run)':<34}{'step':>9}{'nv':>4}{'us/step':>9}{'rigid us':>10}{'ratio':>7}  goal <= 1.5")
    for name, system_flex in variants:
        rigid_sim = Simulator(system, SimulationSettings(dt=DT))
        rigid_us = timed(lambda s=rigid_sim: s.step(arm, wheels), args.steps, args.repeats, rigid_sim.reset)[0]
        for kind in ("compiled", "python"):
            flex_sim = Simulator(system_flex, SimulationSettings(dt=DT, flexible_step=kind))
            flex_us = timed(lambda s=flex_sim: s.step(arm, wheels), args.steps, args.repeats, flex_sim.reset)[0]
            backend = flex_sim.step_backend if flex_sim.step_backend == kind else f"{flex_sim.step_backend}!"
            print(f"{name:<34}{backend:>9}{system_flex.nv:>4}{flex_us:>9.1f}{rigid_us:>10.1f}"
                  f"{flex_us / rigid_us:>7.2f}")
            if kind == "compiled" and flex_sim.step_backend != kind:
                print(f"  (not compiled: {flex_sim.step_backend_reason})")


if __name__ == "__main__":
    main()
