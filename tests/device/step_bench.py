"""PyTorch side of the `forge step` speed table (issue #11): the same step (Linear -> GroupNorm
-> tanh-GELU -> Linear, MSE, backward, AdamW) in eager mode and with torch.compile, TF32
(allow_tf32) and FP32, timed like forge: CUDA events around batches of back-to-back steps
(each batch >= 25 ms) after a warm-up, median of >= 10 batches.

usage: python3 step_bench.py --configs D:B:T[,D:B:T...] --dtypes tf32,fp32 --out FILE.jsonl
       [--seconds 1.0] [--deadline-s 200]
One JSON line per (config, dtype, mode). torch.compile compiles the model's forward and
backward once per (D, dtype) with the row count dynamic (so B does not recompile); AdamW is
torch's fused CUDA kernel in both modes.
"""

import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH_MS = 25.0
WARMUP_MS = 200.0


class Block(nn.Module):
    def __init__(self, d, h, groups):
        super().__init__()
        self.l1 = nn.Linear(d, h)
        self.gn = nn.GroupNorm(groups, h, eps=1e-5)
        self.l2 = nn.Linear(h, d)

    def forward(self, x):
        return self.l2(F.gelu(self.gn(self.l1(x)), approximate="tanh"))


def time_steps(step, seconds):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(n):
        start.record()
        for _ in range(n):
            step()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / n

    one = timed(1)
    t0 = time.time()
    while (time.time() - t0) * 1e3 < WARMUP_MS:
        one = timed(max(1, min(100, int(5.0 / max(one, 1e-3)))))
    per = max(1, min(500, int(BATCH_MS / max(one, 1e-3)) + 1))
    samples = []
    t0 = time.time()
    while len(samples) < 10 or (len(samples) < 60 and time.time() - t0 < seconds):
        samples.append(timed(per))
    med = statistics.median(samples)
    return {"step_ms": med, "steps_per_s": 1e3 / med, "steps_per_sample": per, "samples_ms": samples}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", required=True)
    ap.add_argument("--dtypes", default="tf32,fp32")
    ap.add_argument("--modes", default="eager,compile")
    ap.add_argument("--groups", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--deadline-s", type=float, default=1e9)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    begin = time.time()
    torch.manual_seed(0)
    configs = [tuple(int(v) for v in c.split(":")) for c in a.configs.split(",")]
    out = open(a.out, "a")
    for dtype in a.dtypes.split(","):
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        torch.backends.cudnn.allow_tf32 = dtype == "tf32"
        for mode in a.modes.split(","):
            models = {}
            for d, b, t in configs:
                if time.time() - begin > a.deadline_s:
                    print(f"deadline: skipped {dtype} {mode} D={d} B={b}", flush=True)
                    continue
                h, rows = 4 * d, b * t
                if d not in models:
                    model = Block(d, h, a.groups).cuda()
                    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
                    fwd = torch.compile(model) if mode == "compile" else model
                    models[d] = (model, opt, fwd)
                model, opt, fwd = models[d]
                x = torch.rand(rows, d, device="cuda") * 2 - 1
                target = torch.rand(rows, d, device="cuda") * 2 - 1
                if mode == "compile":
                    torch._dynamo.mark_dynamic(x, 0)

                def step():
                    opt.zero_grad(set_to_none=True)
                    loss = F.mse_loss(fwd(x), target)
                    loss.backward()
                    opt.step()

                c0 = time.time()
                step()
                torch.cuda.synchronize()
                first_s = time.time() - c0
                r = time_steps(step, a.seconds)
                r.update(
                    {
                        "impl": f"torch-{mode}",
                        "dtype": dtype,
                        "dim": d,
                        "hidden": h,
                        "batch": b,
                        "seq": t,
                        "rows": rows,
                        "first_step_s": first_s,
                        "torch": torch.__version__,
                    }
                )
                out.write(json.dumps(r) + "\n")
                out.flush()
                print(
                    f"torch-{mode:<7} {dtype} D={d:<5} B={b:<2} rows={rows:<5} "
                    f"{r['steps_per_s']:9.1f} steps/s (first step {first_s:.1f} s)",
                    flush=True,
                )


if __name__ == "__main__":
    main()
