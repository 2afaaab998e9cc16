"""FA2's test_flash_attn_bwd_overflow (fp16, causal) through fa2gen: dQ/dK/dV max error against float64 and
the fp16 PyTorch reference, per mode and delta option: is the failure the delta from the rounded O?"""
import math
import sys
import torch
sys.path.insert(0, "tests/gpu")
import fa2gen
from test_torch_dropin import grads, ref_attention, max_err

DEV = "cuda"
torch.manual_seed(0)
q = torch.randn(2, 2, 5, 32, device=DEV, dtype=torch.float16) * 5
k, v = (torch.randn(2, 2, 5, 32, device=DEV, dtype=torch.float16) * 3 for _ in range(2))
do = torch.randn(2, 2, 5, 32, device=DEV, dtype=torch.float16)
ref = grads(lambda q, k, v: ref_attention(q, k, v, True), q.double(), k.double(), v.double(), do.double())
low = grads(lambda q, k, v: ref_attention(q, k, v, True, dtype=torch.float16), q, k, v, do)
print("fp16 torch: " + "  ".join(f"{n} {max_err(low[i], ref[i]):.3e}" for i, n in enumerate(("o", "dq", "dk", "dv"))))
for stab in ("none", "robust", "balanced"):
    for delta in ("lowp", "fp32"):
        got = grads(lambda q, k, v: fa2gen.attention(q, k, v, causal=True, stab=stab, delta=delta), q, k, v, do)
        errs = [max_err(got[i], ref[i]) for i in range(4)]
        print(f"{stab:9s} {delta:5s}: " + "  ".join(f"{n} {e:.3e}" for n, e in zip(("o", "dq", "dk", "dv"), errs)))
# where dq's error sits: (batch, row, head)
got = grads(lambda q, k, v: fa2gen.attention(q, k, v, causal=True, stab="none"), q, k, v, do)
e = (got[1].double() - ref[1]).abs().amax(-1)
print("none dq err by (b, row, head):", e.cpu().numpy().round(4).tolist())
s = torch.einsum("bqhd,bkhd->bhqk", q.double(), k.double()) / math.sqrt(32)
print("scores row 1 (b0):", s[0, :, 1].cpu().numpy().round(2).tolist())
