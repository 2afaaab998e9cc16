#!/usr/bin/env python3
"""A/B of two builds of libfa2rt through PyTorch: the same calls, one process per build.

    FA2_LIB=A.so PYTHONPATH=python python3 bench/lib_ab.py --run --json a1.json
    FA2_LIB=B.so PYTHONPATH=python python3 bench/lib_ab.py --run --json b1.json   (alternate)
    python3 bench/lib_ab.py --base a1.json a2.json --test b1.json b2.json [--title T]

--run times fa2gen.flash_attn_func's forward and forward + backward (bf16, B*N = 16k
tokens, H*d = 2048, N = 4096 or --seqlen, robust) for each case: plain and with each score modifier
(softcap 30, ALiBi, a window of 1024 keys to the left, and of 128, 256, 511 and 3072, sinks), dropout 0.1, at
d 64 and 128, causal and not (a window: not causal), plain in deterministic mode, and
plain d 256; --cases keeps the cases whose name starts with one of its words, --tokens
sets B*N (more tokens: small windows' calls stop being host-bound). Medians of
CUDA-event-timed launches (varlen_bench.timed_group). Both builds must be warm (the
kernel cache filled) before a timed run; the first --run of each is warm-up enough when
its JSON is dropped. The ratio table: test / base of the medians over runs (1.03 = the
test is 3 % slower).
"""
import argparse
import json
import statistics
import sys


def cases(head_dims=(64, 128, 256)):
    """(name, d, causal, keyword arguments of flash_attn_func); d = 256: plain only."""
    out = []
    for d in head_dims:
        for causal in (False, True):
            mods = [("plain", {})]
            if d != 256:
                mods += [("softcap", {"softcap": 30.0}), ("alibi", {"alibi_slopes": "slopes"}),
                         ("sinks", {"sinks": "sinks"}), ("deterministic", {"deterministic": True}),
                         ("dropout", {"dropout_p": 0.1})]
            if d != 256 and not causal:
                mods += [("window", {"window_size": (1024, 0)}), ("window128", {"window_size": (128, 0)}),
                         ("window256", {"window_size": (256, 0)}), ("window511", {"window_size": (511, 0)}),
                         ("window3072", {"window_size": (3072, 0)}),
                         ("dropout_window", {"dropout_p": 0.1, "window_size": (1024, 0)})]
            out += [(m, d, causal, kw) for m, kw in mods]
    return out


def run(path, only, tokens, head_dims, N):
    import torch
    import fa2gen
    from modifiers_bench import alibi_slopes
    from varlen_bench import fwd_bwd, rand, spin_up, timed_group
    rows = []
    spin_up()
    for name, d, causal, kw in cases(head_dims):
        if only and not name.startswith(tuple(only)):
            continue
        H, B = 2048 // d, tokens // N
        torch.manual_seed(0)
        q, k, v = (rand(B, N, H, d, grad=True) for _ in range(3))
        do = rand(B, N, H, d)
        kw = dict(kw)
        if kw.get("alibi_slopes") == "slopes":
            kw["alibi_slopes"] = alibi_slopes(H)
        inputs = [q, k, v]
        if kw.get("sinks") == "sinks":
            sinks = torch.randn(H, device="cuda", requires_grad=True)
            kw.pop("sinks")
            inputs.append(sinks)
            f = lambda q, k, v, s, kw=kw: fa2gen.flash_attn_func(q, k, v, causal=causal, sinks=s, **kw)
        else:
            f = lambda q, k, v, kw=kw: fa2gen.flash_attn_func(q, k, v, causal=causal, **kw)
        with torch.no_grad():
            fwd = lambda f=f, inputs=inputs: f(*inputs)
            fwd_ms, = timed_group(fwd)
        both_ms, = timed_group(fwd_bwd(f, inputs, do))
        rows.append({"case": name, "d": d, "causal": causal, "fwd_ms": fwd_ms, "fwd_bwd_ms": both_ms})
        print(f"{name:14s} d{d:<4d}{'causal' if causal else '      '} fwd {fwd_ms:.3f} ms  fwd+bwd {both_ms:.3f} ms",
              flush=True)
    with open(path, "w") as fh:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, fh, indent=1)


def medians(paths):
    out = {}
    for p in paths:
        for r in json.load(open(p))["rows"]:
            for col in ("fwd_ms", "fwd_bwd_ms"):
                out.setdefault((r["case"], r["d"], r["causal"], col), []).append(r[col])
    return {k: statistics.median(v) for k, v in out.items()}


def table(base, test, title):
    b, t = medians(base), medians(test)
    keys = sorted(set(b) & set(t), key=lambda k: (k[1], k[2], k[0]))
    if not keys:
        sys.exit("lib_ab.py: the two sets share no case")
    print(f"| {title} | d | causal | forward | forward + backward | base fwd+bwd ms |")
    print("|---|---|---|---|---|---|")
    for case, d, causal in dict.fromkeys((k[0], k[1], k[2]) for k in keys):
        f, fb = (case, d, causal, "fwd_ms"), (case, d, causal, "fwd_bwd_ms")
        print(f"| {case} | {d} | {'yes' if causal else 'no'} | {t[f] / b[f]:.3f} | {t[fb] / b[fb]:.3f} | "
              f"{b[fb]:.3f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--run", action="store_true", help="time the cases with FA2_LIB's library")
    ap.add_argument("--json", help="--run's output")
    ap.add_argument("--cases", default="", help="comma-separated name prefixes (default: all)")
    ap.add_argument("--tokens", type=int, default=16384, help="B*N")
    ap.add_argument("--seqlen", type=int, default=4096, help="N")
    ap.add_argument("--head-dims", default="64,128,256", help="comma-separated (256: plain only)")
    ap.add_argument("--base", nargs="+")
    ap.add_argument("--test", nargs="+")
    ap.add_argument("--title", default="test / base")
    a = ap.parse_args()
    if a.run:
        if not a.json:
            ap.error("--run needs --json")
        run(a.json, [c for c in a.cases.split(",") if c], a.tokens, [int(d) for d in a.head_dims.split(",")], a.seqlen)
    elif a.base and a.test:
        table(a.base, a.test, a.title)
    else:
        ap.error("--run --json FILE, or --base ... --test ...")


if __name__ == "__main__":
    main()
