"""fa2gen's PyTorch layer without a GPU: the custom operators' schemas and fake
(meta) implementations, the argument checks, flash_attn's argument rules, the
transformers hook's refusals, and torch.compile / torch.export tracing on meta
tensors (one graph, no break, the backward operator in the backward graph).

Run by `make test` with a Python that has PyTorch (tools/torch_python.sh finds
or installs one); the GPU side is tests/gpu/test_torch_dropin.py."""
import copy
import os
import re
import sys
import unittest
from unittest import mock

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402

import fa2gen  # noqa: E402
from fa2gen import flash_api  # noqa: E402
from fa2gen.integrations import transformers as fa2gen_hf  # noqa: E402

BF16 = torch.bfloat16


def meta(*shape, dtype=BF16):
    return torch.empty(*shape, device="meta", dtype=dtype)


class Schemas(unittest.TestCase):
    def test_schemas(self):
        self.assertEqual(
            str(torch.ops.fa2gen.fwd.default._schema),
            "fa2gen::fwd(Tensor q, Tensor k, Tensor v, bool causal, str stab, float beta, "
            "float eps, float scale, bool want_o32, bool deterministic, SymInt window_left, "
            "SymInt window_right, Tensor? alibi_slopes, float softcap, float dropout_p=0., "
            "Tensor? rng=None, Tensor? sinks=None) -> (Tensor, Tensor, Tensor)")
        self.assertEqual(
            str(torch.ops.fa2gen.bwd.default._schema),
            "fa2gen::bwd(Tensor dout, Tensor q, Tensor k, Tensor v, Tensor o, Tensor lse, "
            "Tensor o32, bool causal, str stab, float beta, float eps, float scale, "
            "bool deterministic, SymInt window_left, SymInt window_right, Tensor? alibi_slopes, "
            "float softcap, float dropout_p=0., Tensor? rng=None, Tensor? sinks=None) -> "
            "(Tensor, Tensor, Tensor, Tensor)")
        self.assertIn("Tensor? sinks=None) -> (Tensor, Tensor, Tensor, Tensor)",
                      str(torch.ops.fa2gen.varlen_bwd.default._schema))
        self.assertEqual(
            str(torch.ops.fa2gen.dropout_mask.default._schema),
            "fa2gen::dropout_mask(Tensor rng, float dropout_p, SymInt batch, SymInt heads, "
            "SymInt seqlen_q, SymInt seqlen_k) -> Tensor")


class FakeImplementations(unittest.TestCase):
    def test_forward_outputs(self):
        q, k = meta(2, 100, 8, 64), meta(2, 50, 2, 64)
        for want_o32 in (False, True):
            o, lse, o32 = torch.ops.fa2gen.fwd(q, k, k, True, "robust", 0.0, 0.0, 0.0, want_o32,
                                               False, -1, -1, None, 0.0)
            self.assertEqual((o.shape, o.stride(), o.dtype), ((2, 100, 8, 64), (51200, 512, 64, 1), BF16))
            self.assertEqual((lse.shape, lse.stride(), lse.dtype),
                             ((2, 8, 100), (800, 100, 1), torch.float32))
            self.assertEqual((tuple(o32.shape), o32.dtype),
                             ((2, 100, 8, 64) if want_o32 else (0,), torch.float32))

    def test_dropout_outputs_and_rng_checks(self):
        q, k = meta(2, 100, 8, 64), meta(2, 50, 2, 64)
        rng = torch.empty(2, dtype=torch.int64, device="meta")
        o, lse, o32 = torch.ops.fa2gen.fwd(q, k, k, False, "none", 0.0, 0.0, 0.0, False, False,
                                           -1, -1, None, 0.0, 0.1, rng)
        self.assertEqual((o.shape, lse.shape), ((2, 100, 8, 64), (2, 8, 100)))
        dq, dk, dv, _ = torch.ops.fa2gen.bwd(o, q, k, k, o, lse, o32, False, "none", 0.0, 0.0,
                                             0.0, False, -1, -1, None, 0.0, 0.1, rng)
        self.assertEqual((dq.shape, dk.shape), (q.shape, k.shape))
        keep = torch.ops.fa2gen.dropout_mask(rng, 0.1, 2, 8, 100, 50)
        self.assertEqual((keep.shape, keep.dtype), ((2, 8, 100, 50), torch.bool))
        for bad, text in ((torch.empty(3, dtype=torch.int64, device="meta"), "shape (3,)"),
                          (torch.empty(2, dtype=torch.int32, device="meta"), "torch.int32"),
                          (torch.empty(4, dtype=torch.int64, device="meta")[::2], "contiguous")):
            with self.assertRaises(ValueError) as cm:
                torch.ops.fa2gen.fwd(q, k, k, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1,
                                     None, 0.0, 0.1, bad)
            self.assertIn("fa2gen.fwd: rng is torch.", str(cm.exception))
            self.assertIn("expected a contiguous torch.int64 tensor of 2 (seed, offset)",
                          str(cm.exception))
        with self.assertRaises(ValueError) as cm:  # another device than q's
            torch.ops.fa2gen.fwd(q, k, k, False, "none", 0.0, 0.0, 0.0, False, False, -1, -1,
                                 None, 0.0, 0.1, torch.zeros(2, dtype=torch.int64))
        self.assertIn("rng on cpu", str(cm.exception))

    def test_backward_gradients_are_contiguous_even_for_packed_inputs(self):
        qkv = meta(2, 77, 3, 4, 128, dtype=torch.float16)
        q, k, v = qkv.unbind(2)
        slopes = meta(4, dtype=torch.float32)
        o, lse, o32 = torch.ops.fa2gen.fwd(q, k, v, False, "none", 0.0, 0.0, 0.0, False, False,
                                           64, 0, slopes, 30.0)
        dq, dk, dv, dsinks = torch.ops.fa2gen.bwd(o, q, k, v, o, lse, o32, False, "none", 0.0, 0.0,
                                                  0.0, True, 64, 0, slopes, 30.0)
        for g in (dq, dk, dv):
            self.assertEqual((g.shape, g.dtype), ((2, 77, 4, 128), torch.float16))
            self.assertTrue(g.is_contiguous())
        self.assertEqual((dsinks.shape, dsinks.dtype), ((0,), torch.float32))  # no sinks

    def test_gradient_recorded_when_any_input_requires_it(self):
        # The autograd kernel calls the operator directly when no gradient is recorded (15 us
        # of a 66 us call, bench/host_path.py): it must still record one for any tensor input
        # that requires grad (sinks included), and none under no_grad.
        q, sinks = meta(1, 10, 2, 64), meta(2, dtype=torch.float32)
        self.assertIsNone(fa2gen.attention(q, q, q).grad_fn)
        self.assertIsNone(fa2gen.attention(q, q, q, sinks=sinks).grad_fn)
        self.assertIsNotNone(fa2gen.attention(q, q, q, sinks=sinks.requires_grad_()).grad_fn)
        qg = meta(1, 10, 2, 64).requires_grad_()
        self.assertIsNotNone(fa2gen.attention(q, q, qg).grad_fn)
        with torch.no_grad():
            self.assertIsNone(fa2gen.attention(qg, qg, qg).grad_fn)
        cu = meta(2, dtype=torch.int32)
        self.assertIsNotNone(fa2gen.flash_attn_varlen_func(qg[0], qg[0], qg[0], cu, cu, 10, 10).grad_fn)
        self.assertIsNone(fa2gen.flash_attn_varlen_func(q[0], q[0], q[0], cu, cu, 10, 10).grad_fn)

    def test_sinks_gradient_output(self):
        q, k = meta(2, 100, 8, 64), meta(2, 50, 2, 64)
        sinks = meta(8, dtype=torch.float32)
        o, lse, o32 = torch.ops.fa2gen.fwd(q, k, k, True, "robust", 0.0, 0.0, 0.0, False, False,
                                           -1, -1, None, 0.0, sinks=sinks)
        self.assertEqual((o.shape, lse.shape), ((2, 100, 8, 64), (2, 8, 100)))
        *_, dsinks = torch.ops.fa2gen.bwd(o, q, k, k, o, lse, o32, True, "none", 0.0, 0.0, 0.0,
                                          False, -1, -1, None, 0.0, sinks=sinks)
        self.assertEqual((dsinks.shape, dsinks.dtype), ((8,), torch.float32))
        qv, kv = meta(300, 8, 64), meta(200, 2, 64)
        cu = meta(4, dtype=torch.int32)
        o, lse, o32 = torch.ops.fa2gen.varlen_fwd(qv, kv, kv, cu, cu, 100, 100, False, "none", 0.0,
                                                  0.0, 0.0, False, False, -1, -1, None, 0.0, sinks=sinks)
        *_, dsinks = torch.ops.fa2gen.varlen_bwd(o, qv, kv, kv, o, lse, o32, cu, cu, 100, 100, False,
                                                 "none", 0.0, 0.0, 0.0, False, -1, -1, None, 0.0, sinks=sinks)
        self.assertEqual((dsinks.shape, dsinks.dtype), ((8,), torch.float32))
        # the operators take fp32 (heads,) only: fa2gen.attention converts others
        for bad in (meta(8, dtype=BF16), meta(4, dtype=torch.float32), meta(1, 8, dtype=torch.float32)):
            with self.assertRaises(ValueError) as cm:
                torch.ops.fa2gen.fwd(q, k, k, True, "none", 0.0, 0.0, 0.0, False, False, -1, -1, None,
                                     0.0, sinks=bad)
            self.assertIn("fa2gen.fwd: sinks is", str(cm.exception))
            self.assertIn("expected a contiguous torch.float32 tensor of shape (8,)", str(cm.exception))


class ArgumentChecks(unittest.TestCase):
    def raises(self, exc, text, fn, *args, **kw):
        with self.assertRaises(exc) as cm:
            fn(*args, **kw)
        self.assertIn(text, str(cm.exception))

    def test_inputs(self):
        q = meta(1, 10, 4, 64)
        self.raises(ValueError, "fa2gen.attention: q is on cpu: fa2gen runs on CUDA tensors",
                    fa2gen.attention, torch.zeros(1, 10, 4, 64, dtype=BF16), q, q)
        self.raises(TypeError, "dtype torch.float32 is not supported", fa2gen.attention,
                    meta(1, 10, 4, 64, dtype=torch.float32), meta(1, 10, 4, 64, dtype=torch.float32),
                    meta(1, 10, 4, 64, dtype=torch.float32))
        self.raises(ValueError, "q has 4 heads and k 3: the query heads must be a multiple",
                    fa2gen.attention, q, meta(1, 10, 3, 64), meta(1, 10, 3, 64))
        self.raises(ValueError, "expected 4 dimensions", fa2gen.attention, meta(10, 4, 64), q, q)
        self.raises(ValueError, "stab='fast': allowed 'none', 'paper', 'robust', 'tuned', 'balanced'",
                    fa2gen.attention, q, q, q, stab="fast")
        self.raises(ValueError, "delta='fp64': allowed 'lowp', 'fp32'", fa2gen.attention, q, q, q,
                    delta="fp64")
        o, lse = fa2gen.attention(q, q, q, return_lse=True)
        self.assertEqual((o.shape, lse.shape), ((1, 10, 4, 64), (1, 4, 10)))
        # varlen: the same checks on (total, heads, head_dim), totals of q and k may differ
        cu = torch.empty(3, dtype=torch.int32, device="meta")
        fn = fa2gen.flash_attn_varlen_func
        self.raises(ValueError, "q (20, 4, 64) and k (24, 4, 32): head_dim must match", fn,
                    meta(20, 4, 64), meta(24, 4, 32), meta(24, 4, 32), cu, cu, 10, 12)
        self.raises(ValueError, "q has 4 heads and k 3: the query heads must be a multiple", fn,
                    meta(20, 4, 64), meta(24, 3, 64), meta(24, 3, 64), cu, cu, 10, 12)
        self.raises(ValueError, "k (24, 4, 64) and v (24, 2, 64) differ", fn,
                    meta(20, 4, 64), meta(24, 4, 64), meta(24, 2, 64), cu, cu, 10, 12)
        self.raises(ValueError, "expected 3 dimensions", fn, q, q, q, cu, cu, 10, 10)
        self.assertEqual(fn(meta(20, 4, 64), meta(24, 2, 64), meta(24, 2, 64), cu, cu, 10, 12).shape,
                         (20, 4, 64))
        self.assertEqual(fa2gen.attention(q, q, q, causal=True, window_size=(3, -1)).shape, q.shape)
        self.raises(ValueError, "window_size=(-3, 0): each side >= 0, or -1", fa2gen.attention,
                    q, q, q, window_size=(-3, 0))

    def test_attention_takes_softcap_and_alibi_as_flash_attn_func(self):
        q = meta(2, 10, 4, 64)
        self.raises(ValueError, "fa2gen.attention: softcap=-1.0: allowed 0.0 (none) or a finite cap > 0",
                    fa2gen.attention, q, q, q, softcap=-1.0)
        self.raises(ValueError, "softcap=inf", fa2gen.attention, q, q, q, softcap=float("inf"))
        self.raises(ValueError, "fa2gen.attention: alibi_slopes is torch.float32 of shape (3,): "
                    "expected torch.float32 of shape (4,) or (2, 4)", fa2gen.attention, q, q, q,
                    alibi_slopes=torch.zeros(3, device="meta"))
        self.raises(ValueError, "alibi_slopes is torch.bfloat16", fa2gen.attention, q, q, q,
                    alibi_slopes=meta(4))
        from unittest import mock
        seen = []
        with mock.patch.object(fa2gen._ops.fwd, "call", lambda *a: seen.append(a) or
                               (torch.empty_like(a[0]), meta(2, 4, 10, dtype=torch.float32), None)):
            slopes = torch.zeros(2, 4, device="meta")
            o = fa2gen.attention(q, q, q, causal=True, softcap=30.0, alibi_slopes=slopes)
        self.assertEqual(o.shape, q.shape)
        # fwd(q, k, v, causal, stab, beta, eps, scale, o32, det, wl, wr, alibi, softcap, ...)
        self.assertIs(seen[0][12], slopes)
        self.assertEqual((seen[0][3], seen[0][13]), (True, 30.0))

    def test_any_head_dim_to_256_pads_to_a_multiple_of_8(self):
        for d, kernel in ((8, 8), (17, 24), (40, 40), (59, 64), (80, 80), (81, 88), (111, 112),
                          (200, 200), (255, 256)):
            q = meta(2, 10, 4, d).requires_grad_()
            o, lse = fa2gen.attention(q, q, q, return_lse=True)
            self.assertEqual((o.shape, lse.shape), ((2, 10, 4, d), (2, 4, 10)))
            self.assertEqual(fa2gen._torch.padded_head_dim("f", d), kernel)
            o.sum().backward()
            self.assertEqual(q.grad.shape, q.shape)
        for d in (0, 257):
            self.raises(ValueError, f"head_dim {d} is not supported: allowed 1 to 256",
                        fa2gen.attention, meta(1, 10, 4, d), meta(1, 10, 4, d), meta(1, 10, 4, d))

    def test_head_dims_33_to_48_are_not_padded(self):
        # the C layer puts them on Hopper's wgmma tiles of 64 itself (columns masked)
        for d, kernel in ((40, 40), (48, 48), (37, 40), (33, 40), (32, 32), (59, 64)):
            self.assertEqual(fa2gen._torch.padded_head_dim("f", d), kernel)

    def test_flash_attn_refuses_what_it_cannot_honour(self):
        q = meta(1, 10, 4, 64)
        for p in (1.0, -0.1, float("nan"), "0.1"):
            self.raises(ValueError, f"fa2gen.flash_attn_func: dropout_p={p!r}: allowed 0.0 <= "
                        "dropout_p < 1.0", fa2gen.flash_attn_func, q, q, q, dropout_p=p)
        self.raises(ValueError, "fa2gen.attention: dropout_p=1.5: allowed", fa2gen.attention,
                    q, q, q, dropout_p=1.5)
        self.assertEqual(fa2gen.flash_attn_func(q, q, q, dropout_p=0.1).shape, q.shape)
        self.assertEqual(fa2gen.attention(q, q, q, dropout_p=0.1).shape, q.shape)
        self.raises(ValueError, "qkv has shape (1, 10, 4, 64): expected (batch, seqlen, 3, heads",
                    fa2gen.flash_attn_qkvpacked_func, q)
        self.raises(ValueError, "softcap=-1.0: allowed 0.0 (none) or a finite cap > 0",
                    fa2gen.flash_attn_func, q, q, q, softcap=-1.0)
        self.assertEqual(fa2gen.flash_attn_func(q, q, q, softcap=30.0).shape, q.shape)
        self.raises(ValueError, "alibi_slopes is torch.float32 of shape (3,): expected "
                    "torch.float32 of shape (4,) or (1, 4)", fa2gen.flash_attn_func, q, q, q,
                    alibi_slopes=meta(3, dtype=torch.float32))
        self.assertEqual(fa2gen.flash_attn_func(q, q, q, alibi_slopes=meta(1, 4, dtype=torch.float32),
                                                causal=True).shape, q.shape)
        for p in (0.0, 0.1):
            out, lse, probs = fa2gen.flash_attn_func(q, q, q, dropout_p=p, return_attn_probs=True)
            self.assertEqual((out.shape, lse.shape, probs.shape, probs.dtype),
                             ((1, 10, 4, 64), (1, 4, 10), (1, 4, 10, 10), torch.float32))

    def test_sinks(self):
        q, k = meta(2, 10, 4, 64), meta(2, 12, 2, 64)
        for fn in (fa2gen.attention, fa2gen.flash_attn_func):
            self.raises(ValueError, "sinks is torch.float32 of shape (2,): expected a float tensor "
                        "of shape (4,), one logit per query head", fn, q, k, k,
                        sinks=meta(2, dtype=torch.float32))
            self.raises(ValueError, "sinks is torch.int64 of shape (4,)", fn, q, k, k,
                        sinks=meta(4, dtype=torch.int64))
            self.raises(ValueError, "sinks is list: expected a float tensor", fn, q, k, k,
                        sinks=[0.0] * 4)
            self.raises(ValueError, "sinks is on cpu and q on meta", fn, q, k, k,
                        sinks=torch.zeros(4))
        # differentiable in the model's dtype: gpt-oss keeps its sinks in bf16
        for dtype in (BF16, torch.float32):
            sinks = meta(4, dtype=dtype).requires_grad_()
            qq = q.clone().requires_grad_()
            o, lse = fa2gen.attention(qq, k, k, causal=True, sinks=sinks, return_lse=True)
            self.assertEqual((o.shape, lse.shape), ((2, 10, 4, 64), (2, 4, 10)))
            o.sum().backward()
            self.assertEqual((sinks.grad.shape, sinks.grad.dtype, qq.grad.shape), ((4,), dtype, q.shape))
        # every flash_attn function takes the keyword, varlen included
        sinks = meta(4, dtype=BF16).requires_grad_()
        qkv = meta(2, 10, 3, 4, 64)
        fa2gen.flash_attn_qkvpacked_func(qkv, causal=True, sinks=sinks).sum().backward()
        self.assertEqual(sinks.grad.shape, (4,))
        self.assertEqual(fa2gen.flash_attn_kvpacked_func(q, meta(2, 12, 2, 2, 64), sinks=sinks).shape,
                         q.shape)
        cu = meta(3, dtype=torch.int32)
        qv = meta(20, 4, 64).requires_grad_()
        sinks.grad = None
        out = fa2gen.flash_attn_varlen_func(qv, meta(24, 2, 64), meta(24, 2, 64), cu, cu, 10, 12,
                                            sinks=sinks)
        out.sum().backward()
        self.assertEqual((out.shape, sinks.grad.shape), ((20, 4, 64), (4,)))
        self.assertEqual(fa2gen.flash_attn_varlen_qkvpacked_func(meta(20, 3, 4, 64), cu, 10,
                                                                 sinks=sinks).shape, (20, 4, 64))
        self.assertEqual(fa2gen.flash_attn_varlen_kvpacked_func(qv, meta(24, 2, 2, 64), cu, cu, 10, 12,
                                                                sinks=sinks).shape, (20, 4, 64))

    def test_equal_length_varlen_batches_take_the_fixed_length_call(self):
        from fa2gen import _ops, _torch
        cu = meta(4, dtype=torch.int32)  # 3 sequences
        calls = []
        record = lambda op, call: (lambda *args: calls.append(op.short) or call(*args))
        with mock.patch.object(_ops.fwd, "call", record(_ops.fwd, _ops.fwd.call)), \
                mock.patch.object(_ops.varlen_fwd, "call", record(_ops.varlen_fwd, _ops.varlen_fwd.call)):
            for total_q, total_k, max_q, max_k, want in ((30, 36, 10, 12, "fwd"),     # 3 x 10, 3 x 12
                                                         (29, 36, 10, 12, "varlen_fwd"),  # one shorter
                                                         (30, 35, 10, 12, "varlen_fwd"),
                                                         (0, 0, 0, 0, "varlen_fwd")):   # empty
                calls.clear()
                out = fa2gen.flash_attn_varlen_func(meta(total_q, 4, 64), meta(total_k, 2, 64),
                                                    meta(total_k, 2, 64), cu, cu, max_q, max_k,
                                                    causal=True)
                self.assertEqual((calls, out.shape), ([want], (total_q, 4, 64)))
            _torch.EQUAL_LENGTHS_FIXED = False  # the varlen kernels' own table (varlen_bench.py)
            try:
                calls.clear()
                fa2gen.flash_attn_varlen_func(meta(30, 4, 64), meta(36, 2, 64), meta(36, 2, 64), cu,
                                              cu, 10, 12)
                self.assertEqual(calls, ["varlen_fwd"])
            finally:
                _torch.EQUAL_LENGTHS_FIXED = True
        # LSE comes back in the varlen layout (heads, total): row b * N + i of head h
        B, N, H = 3, 10, 4
        lse = torch.arange(B * H * N, dtype=torch.float32).reshape(B, H, N)
        o = torch.zeros(B, N, H, 64, dtype=BF16)
        with mock.patch.object(_torch, "forward", lambda *args, **kwargs: (o, lse)):
            out, lse_v = _torch.varlen_forward(o.flatten(0, 1), o.flatten(0, 1), o.flatten(0, 1),
                                               torch.zeros(B + 1, dtype=torch.int32), None, N, N,
                                               False, "none", None, None, None, "lowp", False, True)
        self.assertEqual((out.shape, lse_v.shape), ((B * N, H, 64), (H, B * N)))
        for b, h, i in ((0, 0, 0), (1, 2, 3), (2, 3, 9)):
            self.assertEqual(lse_v[h, b * N + i].item(), lse[b, h, i].item())

    def test_window_size_as_flash_attention_reads_it(self):
        f = flash_api._causal_and_window
        sk = 100
        none = (-1, -1)
        for causal, window, want in ((False, (-1, -1), (False, none)), (True, (-1, -1), (True, none)),
                                     (False, (-1, 0), (True, none)), (False, (100, 100), (False, none)),
                                     (False, (-1, 100), (False, none)), (True, (100, -1), (True, none)),
                                     (True, (250, 7), (True, none)), (False, (100, 0), (True, none)),
                                     (False, (99, 0), (False, (99, 0))), (False, (-1, 3), (False, (-1, 3))),
                                     (True, (5, -1), (False, (5, 0))), (False, (0, 0), (False, (0, 0))),
                                     (True, (5, 40), (False, (5, 0)))):
            self.assertEqual(f("fn", causal, window, 10, sk), want, (causal, window))
        for bad in ((-2, 0), (1,), "full"):
            with self.assertRaises(ValueError):
                f("fn", False, bad, 10, sk)


class TransformersHook(unittest.TestCase):
    """The attention function transformers calls (no transformers needed)."""

    class Module:
        is_causal = True

    def test_shapes_and_refusals(self):
        fn = fa2gen_hf.make_attention_forward("robust")
        q, k = meta(2, 4, 30, 64), meta(2, 2, 30, 64)  # transformers' (B, H, S, d)
        out, weights = fn(self.Module(), q, k, k, None, scaling=0.125)
        self.assertEqual((tuple(out.shape), weights), ((2, 30, 4, 64), None))
        for kw, text in (({"attention_mask": meta(2, 1, 30, 30)}, "an attention mask of shape "
                          "(2, 1, 30, 30) with 30 queries and 30 keys"),):
            args = {"attention_mask": None, **kw}
            with self.assertRaises(NotImplementedError) as cm:
                fn(self.Module(), q, k, k, **args)
            self.assertIn(text, str(cm.exception))
        # gpt-oss's sinks (s_aux, the model's dtype) pass through, differentiable
        s_aux = meta(4).requires_grad_()
        out, _ = fn(self.Module(), q, k, k, None, scaling=0.125, sliding_window=16, s_aux=s_aux)
        out.sum().backward()
        self.assertEqual((tuple(out.shape), s_aux.grad.shape, s_aux.grad.dtype), ((2, 30, 4, 64), (4,), BF16))
        with self.assertRaises(ValueError) as cm:
            fn(self.Module(), q, k, k, None, s_aux=meta(2))
        self.assertIn("fa2gen attention: sinks is torch.bfloat16 of shape (2,)", str(cm.exception))
        fn(self.Module(), q, k, k, None, sliding_window=30)  # a window wider than the keys: none
        fn(self.Module(), q, k, k, None, sliding_window=16)  # a real one
        fn(self.Module(), q, k, k, None, dropout=0.1)  # attention dropout, passed along
        with self.assertRaises(TypeError):
            fn(self.Module(), q.float(), k.float(), k.float(), None)
        with self.assertRaises(ValueError):
            fa2gen_hf.make_attention_forward("fast")


def reference_forward(q, k, v, causal, stab, beta, eps, scale, delta, deterministic, return_lse,
                      window=(-1, -1), alibi_slopes=None, softcap=0.0, sinks=None):
    """_torch.forward's arguments, computed on the CPU (float64 models): what the hook
    hands the kernels, checked against transformers' own eager attention."""
    B, Sq, H, d = q.shape
    Sk = k.shape[1]
    kk, vv = (t.repeat_interleave(H // t.shape[2], 2) for t in (k, v))
    s = torch.einsum("bqhd,bkhd->bhqk", q, kk) * scale
    i, j = torch.arange(Sq)[:, None] + Sk - Sq, torch.arange(Sk)[None, :]
    hidden = (j > i) if causal else torch.zeros(Sq, Sk, dtype=torch.bool)
    if window[0] >= 0:
        hidden |= j < i - window[0]
    if window[1] >= 0:
        hidden |= j > i + window[1]
    s = s.masked_fill(hidden, float("-inf"))
    if sinks is not None:
        s = torch.cat([s, sinks.to(s.dtype).view(1, H, 1, 1).expand(B, H, Sq, 1)], -1)
    p = torch.softmax(s, -1)[..., :Sk]
    return torch.einsum("bhqk,bkhd->bqhd", p, vv)


class TransformersGptOss(unittest.TestCase):
    """gpt-oss (transformers >= 4.55, when installed) through the hook, on the CPU: the
    kernels' call replaced by a float64 reference, so that what is checked is what
    transformers hands over (the sinks s_aux, sliding and full layers) against its own
    eager attention: same logits, same sinks' gradients."""

    def test_sinks_and_windows_reach_the_kernels(self):
        try:
            import transformers as tr
            tr.GptOssConfig
        except (ImportError, AttributeError):
            self.skipTest("no transformers with gpt-oss here (pip install transformers)")
        from unittest import mock
        calls = []

        def forward(*args):  # as the hook calls it: positional
            calls.append((args[3], args[14] is not None, args[11]))  # causal, sinks, window
            return reference_forward(*args)

        cfg = tr.GptOssConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                              num_key_value_heads=2, head_dim=16, intermediate_size=64, num_local_experts=4,
                              num_experts_per_tok=2, sliding_window=16, max_position_embeddings=128,
                              layer_types=["sliding_attention", "full_attention"])
        fa2gen_hf.register()
        torch.manual_seed(0)
        eager, ours = (tr.AutoModelForCausalLM.from_config(copy.deepcopy(cfg), attn_implementation=impl,
                                                           experts_implementation="eager").double()
                       for impl in ("eager", "fa2gen"))
        with torch.no_grad():  # sinks of unit size (their init is tiny), fp32 values as the kernels'
            [p.copy_(p.normal_().float()) for n, p in eager.named_parameters() if n.endswith("sinks")]
        ours.load_state_dict(eager.state_dict())
        ids = torch.randint(0, 100, (2, 40))
        out = {}
        with mock.patch.object(fa2gen._torch, "forward", forward), \
                mock.patch.object(fa2gen._torch, "check_inputs", lambda *a: None):
            for impl, m in (("eager", eager), ("fa2gen", ours)):
                logits = m(ids).logits
                logits.square().mean().backward()
                out[impl] = (logits.detach(),
                             [p.grad for n, p in m.named_parameters() if n.endswith("sinks")])
        # the sliding layer (a window: keys i - 15 .. i), then the full one (causal), sinks in both
        self.assertEqual(calls, [(False, True, (15, 0)), (True, True, (-1, -1))])
        self.assertLess((out["fa2gen"][0] - out["eager"][0]).abs().max().item(), 1e-9)
        for a, b in zip(out["fa2gen"][1], out["eager"][1]):  # (through fp32 sinks, as the kernels)
            self.assertLess((a - b).abs().max().item(), 1e-6 * b.abs().max().item())


class Block(torch.nn.Module):
    def __init__(self, api, dropout_p=0.0):
        super().__init__()
        self.api, self.p = api, dropout_p
        self.qkv = torch.nn.Linear(256, 768, bias=False)
        self.sinks = torch.nn.Parameter(torch.zeros(4)) if api == "sinks" else None

    def forward(self, x):
        B, N, D = x.shape
        qkv = self.qkv(x).view(B, N, 3, 4, 64)
        if self.api == "attention":
            o = fa2gen.attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=True,
                                 dropout_p=self.p)
        elif self.api == "sinks":
            o = fa2gen.flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=True,
                                       window_size=(63, 0), sinks=self.sinks)
        elif self.api == "flash_attn_func":
            o = fa2gen.flash_attn_func(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=True,
                                       dropout_p=self.p)
        else:
            o = fa2gen.flash_attn_qkvpacked_func(qkv, causal=True, dropout_p=self.p)
        return x + o.reshape(B, N, D)


def model(api, dropout_p=0.0):
    return torch.nn.Sequential(Block(api, dropout_p), Block(api, dropout_p)).to("meta", BF16)


class Tracing(unittest.TestCase):
    APIS = ("attention", "flash_attn_func", "flash_attn_qkvpacked_func", "sinks")

    def test_dynamo_one_graph_no_breaks(self):
        for api in self.APIS:
            for p in (0.0, 0.1):  # dropout: the seed's torch.randint is in the graph
                torch._dynamo.reset()
                ex = torch._dynamo.explain(model(api, p))(meta(2, 128, 256))
                self.assertEqual((ex.graph_count, ex.graph_break_count), (1, 0),
                                 (api, p, ex.break_reasons))

    def test_dropout_rng_drawn_in_the_forward_graph_and_saved_for_the_backward(self):
        from functorch.compile import make_boxed_func
        from torch._dynamo.backends.common import aot_autograd
        graphs = {}

        def keep(kind):
            def compiler(gm, example_inputs):
                graphs[kind] = gm
                return make_boxed_func(gm.forward)
            return compiler

        torch._dynamo.reset()
        m = torch.compile(model("attention", 0.1), fullgraph=True,
                          backend=aot_autograd(fw_compiler=keep("fw"), bw_compiler=keep("bw")))
        m(meta(2, 128, 256).requires_grad_()).sum().backward()
        fw = [n for n in graphs["fw"].graph.nodes if n.op == "call_function"]
        bw = [n for n in graphs["bw"].graph.nodes if n.op == "call_function"]
        rngs = [n for n in fw if "randint" in str(n.target)]
        fwds = [n for n in fw if n.target == torch.ops.fa2gen.fwd.default]
        bwds = [n for n in bw if n.target == torch.ops.fa2gen.bwd.default]
        self.assertEqual((len(rngs), len(fwds), len(bwds)), (2, 2, 2))
        # each forward reads its own draw; each backward gets a saved draw and p
        self.assertEqual({n.args[15] for n in fwds}, set(rngs))
        self.assertEqual({n.args[14] for n in fwds}, {0.1})
        self.assertTrue(all(n.args[17] == 0.1 and n.args[18] is not None for n in bwds))

    def test_fullgraph_forward_and_backward_graphs(self):
        from functorch.compile import make_boxed_func
        from torch._dynamo.backends.common import aot_autograd
        graphs = {}

        def keep(kind):
            def compiler(gm, example_inputs):
                graphs[kind] = gm.code
                return make_boxed_func(gm.forward)
            return compiler

        for api in ("attention", "sinks"):
            torch._dynamo.reset()
            net = model(api)
            m = torch.compile(net, fullgraph=True,
                              backend=aot_autograd(fw_compiler=keep("fw"), bw_compiler=keep("bw")))
            y = m(meta(2, 128, 256).requires_grad_())
            y.sum().backward()
            self.assertEqual(graphs["fw"].count("torch.ops.fa2gen.fwd.default"), 2)
            self.assertEqual(graphs["bw"].count("torch.ops.fa2gen.bwd.default"), 2)
        # the sinks' gradient comes out of the compiled backward
        self.assertEqual([tuple(b.sinks.grad.shape) for b in net], [(4,), (4,)])

    def test_export(self):
        ep = torch.export.export(model("flash_attn_func"), (meta(2, 128, 256),))
        self.assertEqual(str(ep.graph).count("fa2gen.fwd.default"), 2)


if __name__ == "__main__":
    unittest.main()
