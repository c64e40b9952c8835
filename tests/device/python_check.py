#!/usr/bin/env python3
"""forge from PyTorch on a GPU (run by tests/device/python_check.sh).

For each shape: forge.linear(x, w) and forge.mm(x, b) against torch.matmul with TF32 allowed
(cuBLAS): rel_rms of both against an FP64 product, the fraction of elements bit-identical to
torch's output, and both timed in this process with CUDA events (warm-up, alternating batches,
medians). Then the custom op under torch.compile, opcheck, autograd, another stream, and the
argument checks. Prints PASS/FAIL lines and a table; exits 1 when any check failed.
"""

import argparse
import json
import statistics
import sys
import time
import traceback

SHAPES = [(2048, 2048, 2048), (4096, 4096, 4096), (128, 5376, 7168), (1531, 2999, 1003)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="profiles/sm_90a-h200.toml")
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--json", default=None, help="write the results here")
    ap.add_argument("--rounds", type=int, default=15, help="timed batches per kernel")
    ap.add_argument("--batch-ms", type=float, default=2.0, help="GPU time per timed batch")
    args = ap.parse_args()

    import torch

    import forge

    torch.backends.cuda.matmul.allow_tf32 = True
    dev = torch.device("cuda", args.device)
    torch.cuda.set_device(dev)
    results = {"checks": [], "shapes": []}
    failures = []

    def check(name, ok, detail=""):
        results["checks"].append({"check": name, "ok": bool(ok), "detail": detail})
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
        if not ok:
            failures.append(name)

    def attempt(name, fn):
        """Runs fn() -> (ok, detail); an exception is a failure with its message."""
        try:
            ok, detail = fn()
        except Exception as e:  # noqa: BLE001 - report, go on
            ok, detail = False, f"{type(e).__name__}: {e}"
            traceback.print_exc()
        check(name, ok, detail)
        return ok

    t0 = time.perf_counter()
    d = forge.Dispatcher(args.profile, device=args.device)
    open_s = time.perf_counter() - t0
    env = {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "python": sys.version.split()[0],
        "device": torch.cuda.get_device_name(dev),
        "forge": forge._forge.forge_version,
        "nvrtc": forge.nvrtc_version(),
        "arch": d.arch,
        "profile": args.profile,
        "dispatcher_open_s": round(open_s, 3),
        "cublas_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
    }
    results["env"] = env
    print(json.dumps(env, indent=1), flush=True)
    print(repr(d))

    def bits(t):
        return t.contiguous().view(torch.int32)

    def identical(a, b):
        return a.shape == b.shape and bool(torch.equal(bits(a), bits(b)))

    def rel_rms(y, ref):
        return (torch.linalg.vector_norm(y.double() - ref) / torch.linalg.vector_norm(ref)).item()

    def timed(fns, flops):
        """Median µs per call of each fn: warm-up, then alternating batches timed by events."""
        for fn in fns:
            for _ in range(3):
                fn()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        inner = []
        for fn in fns:
            start.record()
            for _ in range(5):
                fn()
            end.record()
            end.synchronize()
            per_call_ms = start.elapsed_time(end) / 5
            inner.append(max(1, min(500, round(args.batch_ms / max(per_call_ms, 1e-3)))))
        samples = [[] for _ in fns]
        for _ in range(args.rounds):
            for i, fn in enumerate(fns):
                start.record()
                for _ in range(inner[i]):
                    fn()
                end.record()
                end.synchronize()
                samples[i].append(start.elapsed_time(end) * 1e3 / inner[i])
        meds = [statistics.median(s) for s in samples]
        return [
            {"median_us": m, "tflops": flops / (m * 1e-6) / 1e12, "inner": n, "samples_us": s}
            for m, n, s in zip(meds, inner, samples)
        ]

    # -- Correctness, bits and timing per shape ------------------------------------------------
    for m, n, k in SHAPES:
        label = f"{m}x{n}x{k}"
        g = torch.Generator(device=dev).manual_seed(m * 7 + n * 3 + k)
        x = torch.randn(m, k, device=dev, generator=g)
        w = torch.randn(n, k, device=dev, generator=g)
        schedule, rule = d.selection((m, n, k))
        torch.cuda.synchronize()
        t = time.perf_counter()
        y = forge.linear(x, w)
        torch.cuda.synchronize()
        first_ms = (time.perf_counter() - t) * 1e3
        y_torch = torch.matmul(x, w.t())
        ref = torch.matmul(x.double(), w.double().t())
        row = {
            "shape": label,
            "schedule": schedule,
            "rule": rule,
            "first_call_ms": round(first_ms, 1),
            "forge_rel_rms": rel_rms(y, ref),
            "torch_rel_rms": rel_rms(y_torch, ref),
            "bits_identical_to_torch": (bits(y) == bits(y_torch)).double().mean().item(),
        }
        del ref
        check(f"{label} forge rel_rms < 3e-3", row["forge_rel_rms"] < 3e-3,
              f"{row['forge_rel_rms']:.2e} (torch {row['torch_rel_rms']:.2e})")
        # forge.mm(a, b) for b K x N: a real row-major K x N (copied to N x K) and w.t() (a view
        # whose transpose is contiguous: not copied). Same kernel, same inputs: same bits.
        b_kn = w.t().contiguous()
        check(f"{label} mm(x, K x N) == linear bits", identical(forge.mm(x, b_kn), y))
        check(f"{label} mm(x, w.t()) == linear bits", identical(forge.mm(x, w.t()), y))
        check(f"{label} Dispatcher.linear == forge.linear bits", identical(d.linear(x, w), y))
        s = torch.cuda.Stream(dev)
        s.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(s):
            y_s = forge.linear(x, w)
        torch.cuda.current_stream(dev).wait_stream(s)
        check(f"{label} on a side stream: same bits", identical(y_s, y))
        flops = 2.0 * m * n * k
        tf, tt = timed([lambda: forge.linear(x, w), lambda: torch.matmul(x, w.t())], flops)
        row.update(
            forge_us=tf["median_us"], torch_us=tt["median_us"], forge_tflops=tf["tflops"],
            torch_tflops=tt["tflops"], ratio_torch_over_forge=tt["median_us"] / tf["median_us"],
            forge_samples_us=tf["samples_us"], torch_samples_us=tt["samples_us"],
            calls_per_batch=[tf["inner"], tt["inner"]],
        )
        (tm,) = timed([lambda: forge.mm(x, b_kn)], flops)
        row["forge_mm_copy_us"] = tm["median_us"]
        results["shapes"].append(row)
        print(f"{label}: {schedule} ({rule}), first call {first_ms:.0f} ms, forge {tf['median_us']:.1f} µs "
              f"({tf['tflops']:.1f} TFLOP/s), torch {tt['median_us']:.1f} µs ({tt['tflops']:.1f}), "
              f"torch/forge {row['ratio_torch_over_forge']:.3f}, mm with a copy of b {tm['median_us']:.1f} µs, "
              f"bits == torch {row['bits_identical_to_torch']:.4f}", flush=True)

    # -- Host cost per call (tiny GEMM: the host is the bottleneck) ----------------------------
    xs, ws = torch.randn(128, 128, device=dev), torch.randn(128, 128, device=dev)
    host = {}
    for name, fn in (("forge.linear", lambda: forge.linear(xs, ws)),
                     ("torch.ops.forge.linear", lambda: torch.ops.forge.linear(xs, ws)),
                     ("Dispatcher.linear (no custom op)", lambda: d.linear(xs, ws)),
                     ("torch.matmul", lambda: torch.matmul(xs, ws.t()))):
        for _ in range(50):
            fn()
        torch.cuda.synchronize()
        best = float("inf")
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(1000):
                fn()
            best = min(best, (time.perf_counter() - t) * 1e3)  # ms per 1000 = µs per call
            torch.cuda.synchronize()
        host[name] = best
    results["host_us_per_call"] = host
    print("host µs per call (128x128x128): " + ", ".join(f"{k} {v:.1f}" for k, v in host.items()))

    # -- Shapes of other ranks, empty shapes ---------------------------------------------------
    x3 = torch.randn(4, 256, 512, device=dev)
    w3 = torch.randn(384, 512, device=dev)
    check("batched x (4, 256, K) == 2-D bits",
          identical(forge.linear(x3, w3), forge.linear(x3.reshape(-1, 512), w3).reshape(4, 256, 384)))
    e = forge.linear(torch.randn(0, 64, device=dev), torch.randn(32, 64, device=dev))
    check("M = 0 gives an empty (0, N)", tuple(e.shape) == (0, 32))
    z = forge.linear(torch.randn(8, 0, device=dev), torch.randn(16, 0, device=dev))
    check("K = 0 gives zeros", tuple(z.shape) == (8, 16) and not z.any().item())

    # -- Argument checks -------------------------------------------------------------------------
    def raises(exc, pattern, fn):
        def run():
            try:
                fn()
            except exc as err:
                return pattern in str(err), f"{type(err).__name__}: {err}"
            return False, "no exception"
        return run

    xa, wa = torch.randn(64, 256, device=dev), torch.randn(32, 256, device=dev)
    attempt("non-contiguous w is a ValueError naming w",
            raises(ValueError, "forge.linear: w (shape (32, 256)",
                   lambda: forge.linear(xa, torch.randn(256, 32, device=dev).t())))
    attempt("float16 is a TypeError naming x",
            raises(TypeError, "forge.linear: x has dtype torch.float16", lambda: forge.linear(xa.half(), wa)))
    attempt("a CPU tensor is a ValueError naming w",
            raises(ValueError, "forge.linear: w is on cpu", lambda: forge.linear(xa, wa.cpu())))
    attempt("mismatched K is a ValueError",
            raises(ValueError, "x has K = 256", lambda: forge.linear(xa, torch.randn(32, 128, device=dev))))
    flat = torch.randn(64 * 256 + 1, device=dev)
    attempt("a 4-byte-aligned view is an UnsupportedError naming x",
            raises(forge.UnsupportedError, "x's data pointer",
                   lambda: forge.linear(flat[1:].view(64, 256), wa)))
    attempt("mm with a wrong K is a ValueError",
            raises(ValueError, "forge.mm: a is M x K", lambda: forge.mm(xa, wa)))

    # -- Autograd (backward through torch.matmul) ------------------------------------------------
    def autograd():
        xg = torch.randn(256, 512, device=dev, requires_grad=True)
        wg = torch.randn(384, 512, device=dev, requires_grad=True)
        grad = torch.randn(256, 384, device=dev)
        forge.linear(xg, wg).backward(grad)
        xr, wr = xg.detach().clone().requires_grad_(), wg.detach().clone().requires_grad_()
        torch.matmul(xr, wr.t()).backward(grad)
        dx = ((xg.grad - xr.grad).norm() / xr.grad.norm()).item()
        dw = ((wg.grad - wr.grad).norm() / wr.grad.norm()).item()
        return dx < 1e-5 and dw < 1e-5, f"rel diff vs torch: dx {dx:.1e}, dw {dw:.1e}"

    attempt("autograd gradients match torch's", autograd)

    def opcheck():
        xo = torch.randn(64, 128, device=dev, requires_grad=True)
        wo = torch.randn(96, 128, device=dev, requires_grad=True)
        torch.library.opcheck(torch.ops.forge.linear.default, (xo, wo))
        torch.library.opcheck(torch.ops.forge.linear.default, (xo.detach(), wo.detach()))
        return True, "schema, autograd registration, fake tensor, aot dispatch"

    attempt("torch.library.opcheck(forge::linear)", opcheck)

    # -- torch.compile ---------------------------------------------------------------------------
    xc = torch.randn(512, 1024, device=dev)
    wc = torch.randn(768, 1024, device=dev)

    def f(x, w):
        return torch.relu(forge.linear(x, w)) * 2.0

    def fm(a, b):
        return forge.mm(a, b) + 1.0

    eager = f(xc, wc)
    eager_mm = fm(xc, wc.t())

    def compiled(backend, fullgraph):
        def run():
            torch._dynamo.reset()
            out = torch.compile(f, backend=backend, fullgraph=fullgraph)(xc, wc)
            out_mm = torch.compile(fm, backend=backend, fullgraph=fullgraph)(xc, wc.t())
            ok = identical(out, eager) and identical(out_mm, eager_mm)
            return ok, "same bits as eager" if ok else "bits differ from eager"
        return run

    attempt("torch.compile(backend='aot_eager', fullgraph=True)", compiled("aot_eager", True))
    attempt("torch.compile (inductor)", compiled("inductor", False))
    attempt("torch.compile (inductor, fullgraph=True)", compiled("inductor", True))

    def explain():
        torch._dynamo.reset()
        ex = torch._dynamo.explain(f)(xc, wc)
        return ex.graph_break_count == 0, f"{ex.graph_count} graph(s), {ex.graph_break_count} break(s)"

    attempt("dynamo traces forge.linear without graph breaks", explain)

    def module():
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.w1 = torch.nn.Parameter(torch.randn(1024, 1024, device=dev) / 32)
                self.w2 = torch.nn.Parameter(torch.randn(512, 1024, device=dev) / 32)

            def forward(self, x):
                return forge.linear(torch.nn.functional.gelu(forge.linear(x, self.w1)), self.w2)

        torch._dynamo.reset()
        net = Net()
        xin = torch.randn(256, 1024, device=dev)
        ref_out = net(xin)
        out = torch.compile(net)(xin)
        loss = out.square().mean()
        loss.backward()
        ok = out.shape == (256, 512) and net.w1.grad is not None
        diff = ((out - ref_out).norm() / ref_out.norm()).item()
        return ok and diff < 1e-5, f"compiled vs eager rel diff {diff:.1e} (gelu may fuse differently), backward ran"

    attempt("torch.compile of an nn.Module with two forge.linear, with backward", module)

    results["failures"] = failures
    # -- Summary ---------------------------------------------------------------------------------
    print()
    print("| shape | schedule (rule) | forge rel_rms | torch rel_rms | bits == torch | forge µs | "
          "torch µs | forge TFLOP/s | torch TFLOP/s | torch/forge |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results["shapes"]:
        print(f"| {r['shape']} | `{r['schedule']}` ({r['rule']}) | {r['forge_rel_rms']:.2e} | "
              f"{r['torch_rel_rms']:.2e} | {r['bits_identical_to_torch']:.4f} | {r['forge_us']:.1f} | "
              f"{r['torch_us']:.1f} | {r['forge_tflops']:.1f} | {r['torch_tflops']:.1f} | "
              f"{r['ratio_torch_over_forge']:.3f} |")
    print(f"\n{len(results['checks']) - len(failures)} passed, {len(failures)} failed")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
