#!/usr/bin/env python3
"""Cold start of N ranks sharing one empty kernel cache: each variant compiled once.

    python3 bench/cold_start.py --ranks 4                 # and one rank alone, to compare
    python3 bench/cold_start.py --ranks 8 --devices 8 --json out.json
    python3 bench/cold_start.py --ranks 3 --quick --no-baseline

N processes (multiprocessing, spawn) share one empty cache folder
(FA2_CACHE_DIR), each opens fa2gen.Context(device=rank % devices), all wait at
one barrier, then each prepares the same kernels (default: the forward
variants of the built-in spec, fa2gen.Context.prepare_spec; --quick: 8
descriptors, bf16/fp16 x head dim 64/128 x causal or not, robust) and is
timed. The runtime's disk cache takes a lock per kernel, so one rank compiles
it and the others wait and load the entry it wrote.

Per rank the runtime's counters are printed: compiled = misses (NVRTC ran in
this rank), loaded = disk_hits (+ aot_hits: another rank's compile, read back
from disk). Checks, each a FAIL line and exit status 1 when broken:
  - every kernel compiled once over all ranks (sum of misses == n, n being the
    entries in the cache afterwards) and every rank has all n kernels;
  - no temporary or lock file left in the cache;
  - a fresh process on that cache loads all n entries and compiles nothing
    (disk_hits == n, misses == 0): no corrupt or partial entry.
Then "N ranks: X s vs one rank: Y s" against one rank alone on its own empty
cache (skipped with --no-baseline). Several ranks may share a GPU, so this
runs on one. Without a GPU it runs on the stand-in driver of the tests
(FA2_CUDA_LIBRARY=build/libfakecuda.so, --devices 1) with the real NVRTC.
"""
import argparse
import glob
import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

QUICK = [{"dtype": dt, "head_dim": d, "causal": c, "stab": "robust"}
         for dt in ("bf16", "fp16") for d in (64, 128) for c in (False, True)]
BARRIER_S = 300  # how long a rank waits for the others to open their contexts


def rank_main(rank, device, cache_dir, quick, spec, jobs, barrier, queue):
    """One rank: open a context, wait for all, prepare, report counters and times."""
    out = {"rank": rank, "device": device}
    try:
        import fa2gen
        t = time.time()
        ctx = fa2gen.Context(device=device, cache_dir=cache_dir, jobs=jobs)
        out["open_s"] = time.time() - t
        if barrier is not None:
            barrier.wait(timeout=BARRIER_S)
        out["t0"] = time.time()
        if quick:
            ctx.prepare(QUICK)
        else:
            ctx.prepare_spec(spec)
        out["t1"] = time.time()
        out["seconds"] = out["t1"] - out["t0"]
        out["stats"] = ctx.stats()
        ctx.close()
    except Exception as e:  # reported by the parent, which names the rank
        if barrier is not None:
            barrier.abort()  # the others stop waiting
        out["error"] = f"{type(e).__name__}: {e}"
    queue.put(out)


def run_ranks(n, devices, cache_dir, args):
    """Starts n ranks on cache_dir together; their reports, by rank."""
    spawn = mp.get_context("spawn")  # a fresh interpreter each, as torchrun would give
    barrier = spawn.Barrier(n) if n > 1 else None
    queue = spawn.Queue()
    procs = [spawn.Process(target=rank_main, args=(r, r % devices, cache_dir, args.quick,
                                                   args.spec, args.jobs, barrier, queue))
             for r in range(n)]
    for p in procs:
        p.start()
    reports = []
    for _ in procs:
        try:
            reports.append(queue.get(timeout=args.timeout))
        except Exception:
            break
    for p in procs:
        p.join(timeout=10)
        if p.is_alive():
            p.terminate()
    got = {r["rank"] for r in reports}
    reports += [{"rank": r, "device": r % devices, "error": "no report (crashed or timed out, "
                 f"exit code {procs[r].exitcode})"} for r in range(n) if r not in got]
    return sorted(reports, key=lambda r: r["rank"])


def loaded(s):
    return s["disk_hits"] + s["aot_hits"]


def table(title, reports):
    print(f"\n{title}")
    print(f"{'rank':>4} {'device':>6} {'compiled':>9} {'loaded':>7} {'memory':>7} {'open s':>7} "
          f"{'prepare s':>10} {'NVRTC ms':>9}")
    for r in reports:
        if "error" in r:
            print(f"{r['rank']:>4} {r['device']:>6}  error: {r['error']}")
            continue
        s = r["stats"]
        print(f"{r['rank']:>4} {r['device']:>6} {s['misses']:>9} {loaded(s):>7} "
              f"{s['memory_hits']:>7} {r['open_s']:>7.2f} {r['seconds']:>10.2f} "
              f"{s['compile_ms']:>9.0f}")


def wall(reports):
    """From the first rank's start to the last rank's end."""
    return max(r["t1"] for r in reports) - min(r["t0"] for r in reports)


def check_cache(cache_dir, reports, fresh):
    """The FAIL lines for the checks of the docstring (none: all hold)."""
    fails = [f"rank {r['rank']}: {r['error']}" for r in reports + fresh if "error" in r]
    if fails:
        return fails
    kdir = os.path.join(cache_dir, "kernels")
    n = len(glob.glob(os.path.join(kdir, "*.fa2k")))
    left = sorted(os.path.basename(p) for p in glob.glob(os.path.join(kdir, "*"))
                  if ".tmp." in p or p.endswith(".lock"))
    if n == 0:
        fails.append(f"no entry in {kdir}: the disk cache was off or unwritable")
    if left:
        fails.append(f"left in the cache: {', '.join(left[:5])}" + (" ..." if len(left) > 5 else ""))
    compiled = sum(r["stats"]["misses"] for r in reports)
    if compiled != n:
        fails.append(f"{compiled} compiles over the ranks for {n} entries: expected each kernel "
                     "compiled once")
    for r in reports:
        s = r["stats"]
        if s["misses"] + loaded(s) + s["memory_hits"] < n:
            fails.append(f"rank {r['rank']}: {s['misses']} compiled + {loaded(s)} loaded + "
                         f"{s['memory_hits']} in memory < {n} kernels")
    s = fresh[0]["stats"]
    if s["disk_hits"] != n or s["misses"] != 0:
        fails.append(f"fresh process: {s['disk_hits']} loaded from disk and {s['misses']} compiled; "
                     f"expected {n} and 0 (a corrupt or partial entry is removed and recompiled)")
    return fails


def default_devices():
    try:
        import torch
        return max(torch.cuda.device_count(), 1)
    except ImportError:
        return 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ranks", type=int, default=4, help="processes sharing the cache (default 4)")
    ap.add_argument("--devices", type=int, default=None,
                    help="GPUs to spread the ranks over, rank %% devices (default: PyTorch's "
                         "device count, else 1)")
    ap.add_argument("--quick", action="store_true", help="8 forward kernels instead of the spec's")
    ap.add_argument("--spec", default=None, help="spec file whose forward variants to prepare "
                    "(default: the built-in specs/default.lua)")
    ap.add_argument("--jobs", type=int, default=0,
                    help="NVRTC threads per rank (0: the runtime's default, min(CPUs, 8))")
    ap.add_argument("--cache-dir", default=None,
                    help="an empty (or new) folder to share; default: a temporary one, removed after")
    ap.add_argument("--no-baseline", action="store_true", help="skip the one-rank run")
    ap.add_argument("--timeout", type=float, default=900, help="seconds to wait for a rank")
    ap.add_argument("--json", help="write every rank's report here")
    args = ap.parse_args()
    if args.ranks < 1:
        ap.error(f"--ranks {args.ranks}: must be >= 1")
    if args.devices is None:
        args.devices = default_devices()
    if args.devices < 1:
        ap.error(f"--devices {args.devices}: must be >= 1")
    if args.jobs < 0:
        ap.error(f"--jobs {args.jobs}: must be >= 0")
    if args.cache_dir and os.path.exists(args.cache_dir) and os.listdir(args.cache_dir):
        ap.error(f"--cache-dir {args.cache_dir} is not empty: a cold start needs an empty folder")
    os.environ.pop("FA2_AOT_DIR", None)  # a cold start: no prebuilt cubins either

    base = tempfile.mkdtemp(prefix="fa2_cold_")
    try:
        shared = args.cache_dir or os.path.join(base, "shared")
        os.environ["FA2_CACHE_DIR"] = shared  # as a trainer would set it for every rank
        reports = run_ranks(args.ranks, args.devices, shared, args)
        ok = [r for r in reports if "error" not in r]
        fresh = run_ranks(1, 1, shared, args) if len(ok) == len(reports) else []
        one = None
        if not args.no_baseline and ok:
            one = run_ranks(1, 1, os.path.join(base, "alone"), args)
        dev = ok[0]["stats"] if ok else {}
        print(f"device: {dev.get('device_name', '?')} ({dev.get('arch', '?')}), "
              f"{args.ranks} ranks on {args.devices} device(s), jobs {args.jobs or 'default'}, "
              f"kernels: {'--quick' if args.quick else args.spec or 'built-in spec (forward)'}, "
              f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}")
        table(f"{args.ranks} ranks, one empty cache ({shared})", reports)
        if fresh:
            table("a fresh process on the same cache", fresh)
        if one:
            table("one rank alone, its own empty cache", one)
        fails = check_cache(shared, reports, fresh) if fresh else \
            [f"rank {r['rank']}: {r['error']}" for r in reports if "error" in r]
        if one and "error" in one[0]:
            fails.append(f"one rank alone: {one[0]['error']}")
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"ranks": reports, "fresh": fresh, "one_rank": one, "fails": fails,
                           "devices": args.devices, "quick": args.quick, "spec": args.spec}, f,
                          indent=1)
        for line in fails:
            print("FAIL:", line)
        if fails:
            return 1
        print(f"\nOK: each of {sum(r['stats']['misses'] for r in reports)} kernels compiled once, "
              "every rank has them all, a fresh process loads them all")
        line = f"{args.ranks} ranks: {wall(reports):.2f} s"  # the last line: gpu_run.sh's summary
        print(line + (f" vs one rank: {wall(one):.2f} s" if one else ""))
        return 0
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
