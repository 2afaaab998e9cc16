"""Host time per attention call: fa2gen.attention against PyTorch SDPA (flash, cuDNN).

    python3 bench/host_overhead.py [--calls 200] [--shape B,N,H,d] [--causal] [--grad | --train]
                                   [--varlen] [--profile cprofile | kernels | timeline]
                                   [--eager-ab | --native-ab]

For each implementation: the host time to enqueue one call (back-to-back calls,
no synchronization; the GPU queue absorbs them), and the time per call once the
GPU has finished them all (throughput). When the first is the larger, a call is
host-bound: the GPU waits for the Python side. sdpa_bench.py's per-call event
timing adds the host time of one call to its GPU time, so at small shapes it
reports the larger of the two, not the kernel (bench/NOTES.md). --grad: inputs
that require grad (the forward a training step runs); --train times a training
step's attention instead: forward and backward (torch.autograd.grad of the output
against a fixed gradient) per call. --varlen adds fa2gen's variable-length call on the
same data (B sequences of N rows), the pair issue 19 wants within 3 %.

--profile says where the time goes instead of timing: cprofile, fa2gen-none's host
time per call and cProfile's 25 costliest functions over --calls calls; kernels,
torch.profiler over 20 calls of each implementation (each kernel's GPU time, the
host's self CPU time) (bench/NOTES.md "Host time per call, session 10"); timeline,
single calls on an idle GPU (as sdpa_bench.py's per-call timing makes them), each
split into the host's time to its first launch, the launch's latency to the first
GPU activity, the GPU's busy time and the whole call, medians over --calls calls.
--eager-ab: fa2gen-none through the operators' eager path and through the dispatcher,
alternating seven times in one process (min and median host time per call), both in Python;
--native-ab: fa2gen-none's eager path native (fa2gen/_native.cpp) and in Python, with SDPA
flash and cuDNN, the same way.
"""
import argparse
import cProfile
import pstats
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def per_call(fn, calls):
    """(host seconds per call, wall seconds per call until the GPU is done)."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    host = time.perf_counter() - t0
    torch.cuda.synchronize()
    return host / calls, (time.perf_counter() - t0) / calls


GPU_CATS = ("kernel", "gpu_memset", "gpu_memcpy")


def call_phases(events):
    """Each marked call's phases (us) from a chrome trace's complete events, and the API call
    and GPU activities of the first call."""
    marks = sorted((e for e in events if e.get("cat") == "user_annotation" and e["name"].startswith("call")),
                   key=lambda e: e["ts"])
    api = [e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")
           and any(w in e["name"] for w in ("aunch", "emset", "emcpy"))]
    acts = sorted((e for e in events if e.get("cat") in GPU_CATS), key=lambda e: e["ts"])
    phases = {k: [] for k in ("host to launch", "launch to GPU", "GPU busy", "GPU span", "call")}
    names = None
    for i, m in enumerate(marks):
        # calls are serialized (synchronize, sleep): the GPU work before the next mark is this call's
        t0, t1 = m["ts"], m["ts"] + m["dur"]
        until = marks[i + 1]["ts"] if i + 1 < len(marks) else float("inf")
        own = sorted((e for e in api if t0 <= e["ts"] <= t1), key=lambda e: e["ts"])
        work = [a for a in acts if t0 <= a["ts"] < until]
        if not own or not work:
            continue
        phases["host to launch"].append(own[0]["ts"] - t0)
        phases["launch to GPU"].append(work[0]["ts"] - own[0]["ts"])
        phases["GPU busy"].append(sum(a["dur"] for a in work))
        phases["GPU span"].append(work[-1]["ts"] + work[-1]["dur"] - work[0]["ts"])
        phases["call"].append(work[-1]["ts"] + work[-1]["dur"] - t0)
        names = names or [f"{own[0]['name']}:"] + [f"{a['name'][:60]} {a['dur']:.1f}" for a in work]
    return phases, names


def timeline(name, fn, calls):
    """Single calls on an idle GPU under torch.profiler; prints the medians of each
    call's phases (us) and the GPU activities of one call."""
    import json, os, statistics, tempfile
    from torch.profiler import ProfilerActivity, profile, record_function
    per_call(fn, 5)
    host, whole = [], []  # without the profiler first: its tracing inflates host times
    for _ in range(calls):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        time.sleep(0.002)
        t0 = time.perf_counter()
        a.record()
        fn()
        host.append((time.perf_counter() - t0) * 1e6)
        b.record()
        torch.cuda.synchronize()
        whole.append(a.elapsed_time(b) * 1e3)
    print(f"===== {name}: unprofiled single calls, medians in us: host {statistics.median(host):.1f} "
          f"(the call's return after event a), events a..b {statistics.median(whole):.1f}")
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
        for i in range(calls):
            torch.cuda.synchronize()
            time.sleep(0.002)  # the GPU idles, as between sdpa_bench.py's per-call regions
            with record_function(f"call{i}"):
                fn()
            torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        p.export_chrome_trace(path)
        events = [e for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
    phases, names = call_phases(events)
    n = len(phases["call"])
    print(f"      {name} profiled: {n} of {calls} calls with a launch and GPU work; medians in us")
    print("  " + ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in phases.items() if v))
    print("  GPU activities of one call: " + "; ".join(names or ["none seen"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--shape", default="8,1024,12,64", help="B,N,H,d (default: GPT-2 small)")
    ap.add_argument("--causal", action="store_true")
    ap.add_argument("--grad", action="store_true", help="inputs that require grad")
    ap.add_argument("--train", action="store_true", help="forward and backward per call")
    ap.add_argument("--varlen", action="store_true",
                    help="also fa2gen.flash_attn_varlen_func on B equal sequences")
    ap.add_argument("--profile", choices=("cprofile", "kernels", "timeline"), help="profile instead of timing")
    ap.add_argument("--eager-ab", action="store_true",
                    help="fa2gen-none with the eager path against the dispatcher, alternating in one process")
    ap.add_argument("--native-ab", action="store_true",
                    help="fa2gen-none native against its Python eager path, and SDPA flash and cuDNN, "
                         "alternating in one process")
    args = ap.parse_args()
    import fa2gen
    B, N, H, d = (int(x) for x in args.shape.split(","))
    q, k, v = (torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16,
                           requires_grad=args.train or args.grad) for _ in range(3))
    qt, kt, vt = (t.transpose(1, 2) for t in (q, k, v))
    dout = torch.randn(B, N, H, d, device="cuda", dtype=torch.bfloat16)

    def step(attend, transpose=False, inputs=(q, k, v), g=None):
        if not args.train:
            return attend
        g = g if g is not None else dout.transpose(1, 2) if transpose else dout
        return lambda: torch.autograd.grad(attend(), inputs, g)

    def sdpa(backend):
        def run():
            with sdpa_kernel(backend):
                return F.scaled_dot_product_attention(qt, kt, vt, is_causal=args.causal)
        return step(run, transpose=True)

    cu = torch.arange(0, (B + 1) * N, N, dtype=torch.int32, device="cuda")
    packed = [t.detach().reshape(B * N, H, d).requires_grad_(t.requires_grad) for t in (q, k, v)]

    def varlen(stab):
        return step(lambda: fa2gen.flash_attn_varlen_func(*packed, cu, cu, N, N, causal=args.causal,
                                                           stab=stab),
                    inputs=packed, g=dout.reshape(B * N, H, d))

    impls = {"fa2gen-none": step(lambda: fa2gen.attention(q, k, v, causal=args.causal,
                                                          stab="none")),
             "fa2gen-robust": step(lambda: fa2gen.attention(q, k, v, causal=args.causal)),
             "sdpa-flash": sdpa(SDPBackend.FLASH_ATTENTION),
             "sdpa-cudnn": sdpa(SDPBackend.CUDNN_ATTENTION)}
    if args.varlen:
        impls["fa2gen-fa-none"] = step(lambda: fa2gen.flash_attn_func(q, k, v, causal=args.causal,
                                                                      stab="none"))
        impls["fa2gen-vl-none"] = varlen("none")
        impls["fa2gen-vl-robust"] = varlen("robust")
    print(f"shape B={B} N={N} H={H} d={d} causal={args.causal}, {args.calls} calls each"
          + (", forward and backward" if args.train else ", forward"))
    if args.profile == "cprofile":
        fn = impls["fa2gen-none"]
        host, _ = per_call(fn, args.calls)
        print(f"fa2gen-none: host {host * 1e6:.1f} us per call")
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(args.calls):
            fn()
        prof.disable()
        torch.cuda.synchronize()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    elif args.profile == "kernels":
        from torch.profiler import ProfilerActivity, profile
        for name, fn in impls.items():
            per_call(fn, 5)
            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as p:
                per_call(fn, 20)
            print("=====", name)
            print(p.key_averages().table(sort_by="cuda_time_total", row_limit=12,
                                         max_name_column_width=60))
    elif args.profile == "timeline":
        for name, fn in impls.items():
            timeline(name, fn, min(args.calls, 50))
    elif args.eager_ab or args.native_ab:
        from fa2gen import _native, _ops
        native = _native.module
        python = lambda: None  # the module getter that says "not built"
        setting = lambda devices, module: lambda: (setattr(_ops, "EAGER_DEVICES", devices),
                                                   setattr(_native, "module", module))
        if args.native_ab:  # SDPA's in the same rounds: the reference on this host, now
            paths = {"native": ("fa2gen-none", setting(("cuda",), native)),
                     "python": ("fa2gen-none", setting(("cuda",), python)),
                     "sdpa-flash": ("sdpa-flash", lambda: None),
                     "sdpa-cudnn": ("sdpa-cudnn", lambda: None)}
        else:  # the Python eager path against the dispatcher, as in session 23
            paths = {"eager": ("fa2gen-none", setting(("cuda",), python)),
                     "dispatcher": ("fa2gen-none", setting((), python))}
        times = {path: [] for path in paths}
        for _ in range(7):
            for path, (impl, use) in paths.items():
                use()
                times[path].append(per_call(impls[impl], args.calls))
        for path, t in times.items():
            host, wall = sorted(x[0] for x in t), sorted(x[1] for x in t)
            print(f"{path:<11} host us/call min {host[0] * 1e6:7.1f} median {host[3] * 1e6:7.1f}, "
                  f"wall median {wall[3] * 1e6:7.1f}")
    else:
        print(f"{'impl':<14} {'host us/call':>13} {'wall us/call':>13}")
        for name, fn in impls.items():
            host, wall = per_call(fn, args.calls)
            print(f"{name:<14} {host * 1e6:13.1f} {wall * 1e6:13.1f}")


if __name__ == "__main__":
    main()
