"""FP64 PyTorch reference of `forge step` (issue #11): the same model, data and initial
parameters (read from `forge step --dump DIR --json FILE`), the same AdamW, N steps in FP64;
compares the loss of every step and the parameter updates with forge's.

usage: python3 step_reference.py DUMP_DIR FORGE_JSON [--out RESULT.json]
"""

import argparse
import json
import math
import pathlib

import numpy as np
import torch
import torch.nn.functional as F

# Tolerances stated before the run: loss of every step (relative), parameter updates
# (p_N - p_0) relative RMS per tensor. TF32 rounds GEMM inputs to 10 mantissa bits.
TOL = {
    "fp32": {"loss": 1e-5, "update": 1e-3},
    "tf32": {"loss": 2e-3, "update": 5e-2},
}
PARAMS = ["w1", "b1", "gamma", "beta", "w2", "b2"]


def read(path, shape):
    return torch.from_numpy(np.fromfile(path, dtype="<f4").astype(np.float64)).reshape(shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("forge_json")
    ap.add_argument("--out")
    a = ap.parse_args()
    run = json.loads(pathlib.Path(a.forge_json).read_text().strip().splitlines()[-1])
    c = run["config"]
    d, h, g, rows, steps = c["dim"], c["hidden"], c["groups"], run["rows"], run["steps"]
    opt = c["adamw"]
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    dump = pathlib.Path(a.dump)
    shapes = {"w1": (h, d), "b1": (h,), "gamma": (h,), "beta": (h,), "w2": (d, h), "b2": (d,)}
    p = {n: read(dump / "init" / f"{n}.f32", s).to(dev).requires_grad_() for n, s in shapes.items()}
    p0 = {n: v.detach().clone() for n, v in p.items()}
    x = read(dump / "init" / "x.f32", (rows, d)).to(dev)
    t = read(dump / "init" / "target.f32", (rows, d)).to(dev)
    optim = torch.optim.AdamW(
        [p[n] for n in PARAMS],
        lr=opt["lr"],
        betas=(opt["beta1"], opt["beta2"]),
        eps=opt["eps"],
        weight_decay=opt["weight_decay"],
        foreach=False,
    )
    losses = []
    for _ in range(steps):
        optim.zero_grad(set_to_none=True)
        z = x @ p["w1"].T + p["b1"]
        a_ = F.group_norm(z, g, p["gamma"], p["beta"], eps=c["gn_eps"])
        y = F.gelu(a_, approximate="tanh") @ p["w2"].T + p["b2"]
        loss = F.mse_loss(y, t)
        loss.backward()
        optim.step()
        losses.append(loss.item())
    forge_loss = run["loss"]
    loss_err = max(abs(f - r) / abs(r) for f, r in zip(forge_loss, losses))
    updates = {}
    for n, s in shapes.items():
        fin = read(dump / "final" / f"{n}.f32", s).to(dev)
        du, ru = fin - p0[n], p[n].detach() - p0[n]
        updates[n] = math.sqrt(float(((du - ru) ** 2).sum() / (ru**2).sum()))
    tol = TOL[c["dtype"]]
    ok = loss_err <= tol["loss"] and max(updates.values()) <= tol["update"]
    print(
        f"reference {c['dtype']} D={d} H={h} rows={rows} steps={steps}: loss FP64 "
        f"{losses[0]:.6f} -> {losses[-1]:.6f}, forge {forge_loss[0]:.6f} -> {forge_loss[-1]:.6f}"
    )
    print(f"  max relative loss error over {steps} steps: {loss_err:.2e} (tolerance {tol['loss']:.0e})")
    print(
        "  update relative RMS error per tensor: "
        + ", ".join(f"{n} {v:.2e}" for n, v in updates.items())
        + f" (tolerance {tol['update']:.0e})"
    )
    print(f"  {'PASS' if ok else 'FAIL'}")
    if a.out:
        pathlib.Path(a.out).write_text(
            json.dumps(
                {
                    "dtype": c["dtype"],
                    "dim": d,
                    "hidden": h,
                    "rows": rows,
                    "steps": steps,
                    "loss_fp64": losses,
                    "loss_forge": forge_loss,
                    "max_rel_loss_error": loss_err,
                    "update_rel_rms": updates,
                    "tolerance": tol,
                    "passed": ok,
                }
            )
        )
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
