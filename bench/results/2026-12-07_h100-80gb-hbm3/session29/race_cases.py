"""One backward under compute-sanitizer (sessions 28-29): which case makes racecheck fail?
python3 race_cases.py CASE, CASE one of plain, window, alibi, sinks, softcap, softcap_d128, dropout, dropout_d128,
window_wide, varlen_equal, varlen_mixed, varlen_dropout (d 64 unless named, bf16)."""
import sys

import torch

import fa2gen

torch.manual_seed(0)
case, H = sys.argv[1], 4
d = 128 if case.endswith("_d128") else 64
dev, bf = "cuda", torch.bfloat16
r = lambda *s: torch.randn(*s, device=dev, dtype=bf).requires_grad_()
if case.startswith("varlen"):
    lens = [300, 300, 300] if case == "varlen_equal" else [17, 128, 300, 0, 65]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32, device=dev)
    q, k, v = r(sum(lens), H, d), r(sum(lens), H, d), r(sum(lens), H, d)
    o = fa2gen.flash_attn_varlen_func(q, k, v, cu, cu, max(lens), max(lens), causal=True, stab="none",
                                      dropout_p=0.2 if case == "varlen_dropout" else 0.0)
else:
    kw = {"plain": {}, "window": {"window_size": (127, 0)}, "window_wide": {"window_size": (1023, 0)},
          "alibi": {"alibi_slopes": torch.rand(H, device=dev), "causal": True},
          "sinks": {"sinks": torch.randn(H, device=dev).requires_grad_(), "causal": True},
          "softcap": {"softcap": 30.0, "causal": True}, "softcap_d128": {"softcap": 5.0},
          "dropout": {"dropout_p": 0.2, "causal": True}, "dropout_d128": {"dropout_p": 0.2}}[case]
    q, k, v = r(2, 300, H, d), r(2, 300, H, d), r(2, 300, H, d)
    o = fa2gen.flash_attn_func(q, k, v, stab="none", **kw)
o.backward(torch.randn_like(o))
torch.cuda.synchronize()
print(case, "ok", float(q.grad.float().abs().sum()))
