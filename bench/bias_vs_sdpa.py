#!/usr/bin/env python3
"""The tie-heavy suite through PyTorch SDPA (flash and cuDNN backends) and
fa2gen (none, paper, robust), scored against float64 on the same inputs.

    bin/fa2 bias --dump DIR            # the suite's inputs (same seed, same data)
    PYTHONPATH=python FA2_LIB=lib/libfa2rt.so python3 bench/bias_vs_sdpa.py DIR [--json FILE]

Bias ratio = mean(O - O_ref) / mean|O - O_ref| (0 = unbiased), mean |error|
and relative error against attention in float64 on the same 16-bit inputs
(softmax scale 1/sqrt(d), not causal), as `fa2 bias` computes them."""
import argparse, json, os, sys

import numpy as np
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def load(d, c):
    shape = (1, c["seqlen"], c["heads"], c["head_dim"])
    n = int(np.prod(shape))
    raw = np.fromfile(os.path.join(d, c["file"]), dtype="<i2")
    if raw.size != 4 * n:
        sys.exit(f"{c['file']}: {raw.size} values, expected {4 * n}")
    dt = torch.bfloat16 if c["dtype"] == "bf16" else torch.float16
    t = torch.from_numpy(raw.astype(np.int16)).view(dt).cuda()
    return [t[i * n:(i + 1) * n].view(shape) for i in range(4)]  # q, k, v, dO


def sdpa(q, k, v, backend=None):
    args = [x.transpose(1, 2) for x in (q, k, v)]  # (B, H, N, d)
    if backend is None:
        return F.scaled_dot_product_attention(*args).transpose(1, 2)
    with sdpa_kernel([backend]):
        return F.scaled_dot_product_attention(*args).transpose(1, 2)


def measure(o, ref):
    o = o.double()
    bad = (~torch.isfinite(o)).sum().item()
    e = torch.where(torch.isfinite(o), o - ref, torch.zeros_like(ref))
    mabs = e.abs().mean().item()
    return {"bias_ratio": e.mean().item() / mabs if mabs else 0.0, "mean_abs_err": mabs,
            "rel_err": (e.norm() / ref.norm()).item(), "nan_count": bad}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--json")
    args = ap.parse_args()
    import fa2gen
    cases = json.load(open(os.path.join(args.dir, "cases.json")))
    impls = {
        "flash": lambda q, k, v: sdpa(q, k, v, SDPBackend.FLASH_ATTENTION),
        "cudnn": lambda q, k, v: sdpa(q, k, v, SDPBackend.CUDNN_ATTENTION),
        "none": lambda q, k, v: fa2gen.attention(q, k, v, stab="none"),
        "paper": lambda q, k, v: fa2gen.attention(q, k, v, stab="paper"),
        "robust": lambda q, k, v: fa2gen.attention(q, k, v, stab="robust"),
    }
    rows = []
    print(f"{'case':10} {'r':>3} {'d':>4}  " + "  ".join(f"{m:>8}" for m in impls) + "   (bias ratio)")
    for c in cases:
        q, k, v, _ = load(args.dir, c)
        ref = sdpa(q.double(), k.double(), v.double())  # math backend in float64
        line = []
        for name, fn in impls.items():
            try:
                with torch.no_grad():
                    o = fn(q, k, v)
                torch.cuda.synchronize()
            except RuntimeError as e:  # a backend that refuses the shape: say so, go on
                print(f"{c['file']}: {name}: {str(e).splitlines()[0]}", file=sys.stderr)
                line.append(f"{'-':>8}")
                continue
            m = measure(o, ref)
            rows.append({"case": c["case"], "repeats": c["repeats"], "head_dim": c["head_dim"],
                         "impl": name, **m})
            line.append(f"{m['bias_ratio']:+8.4f}")
        print(f"{c['case']:10} {c['repeats']:3} {c['head_dim']:4}  " + "  ".join(line), flush=True)
    if args.json:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows},
                  open(args.json, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
