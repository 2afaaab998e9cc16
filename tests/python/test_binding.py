"""The Python binding without PyTorch or a GPU: import, version, clean
errors, the NVRTC folder search, and the ctypes structures against the C
runtime (each field is checked through the message that names it).

Run by `make test`: FA2_LIB points at the library just built and
FA2_FAKE_CUDA at the stand-in driver (tests/fake)."""
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.modules["torch"] = None  # as if PyTorch were not installed, even where it is

import fa2gen  # noqa: E402
from fa2gen import _lib  # noqa: E402


def good_args():
    n, h, hkv, d = 100, 8, 2, 64
    T = _lib.Tensor
    return _lib.FwdArgs(
        q=T(0x10000, _lib.BF16, n * h * d, h * d, d), k=T(0x20000, _lib.BF16, n * hkv * d, hkv * d, d),
        v=T(0x30000, _lib.BF16, n * hkv * d, hkv * d, d), o=T(0x40000, _lib.BF16, n * h * d, h * d, d),
        lse=0x50000, batch=2, seqlen_q=n, seqlen_k=n, heads_q=h, heads_kv=hkv, head_dim=d,
        scale=0.0, causal=0, stab=2, beta=0.0, eps=0.0)


class ImportAndErrors(unittest.TestCase):
    def test_import_without_torch_and_version(self):
        with open(os.path.join(ROOT, "VERSION")) as f:
            self.assertEqual(fa2gen.version(), f.read().strip())

    def test_attention_without_torch_is_a_clear_error(self):
        with self.assertRaises(ImportError) as cm:
            fa2gen.attention(None, None, None)
        self.assertIn("fa2gen.attention needs PyTorch with CUDA", str(cm.exception))

    # The driver is loaded once per process: these run in a fresh one.
    def run_fresh(self, code, **env):
        code = "import sys; sys.path.insert(0, %r); import fa2gen\n" % os.path.join(
            ROOT, "python") + code
        out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout

    def test_no_driver_is_a_clean_error(self):
        out = self.run_fresh("try:\n    fa2gen.Context()\nexcept fa2gen.Fa2Error as e:\n"
                             "    print(e.status_name, e)\n",
                             FA2_CUDA_LIBRARY="/nonexistent/libcuda.so.1")
        self.assertTrue(out.startswith("FA2_ERR_NO_DRIVER fa2_create: cannot load the CUDA "
                                       "driver (/nonexistent/libcuda.so.1)"), out)

    def test_missing_library_is_a_clean_error(self):
        out = self.run_fresh("try:\n    fa2gen.version()\nexcept fa2gen.Fa2Error as e:\n"
                             "    print(e)\n", FA2_LIB="/nonexistent/libfa2rt.so")
        self.assertIn("libfa2rt.so not found (tried /nonexistent/libfa2rt.so", out)
        self.assertIn("set FA2_LIB", out)


class Structures(unittest.TestCase):
    """Each FwdArgs field, set to a bad value, must come back named in C's message."""

    def expect(self, field_path, value, message):
        a = good_args()
        obj = a
        parts = field_path.split(".")
        for p in parts[:-1]:
            obj = getattr(obj, p)
        setattr(obj, parts[-1], value)
        with self.assertRaises(fa2gen.Fa2Error) as cm:
            fa2gen.check_forward(a)
        self.assertEqual(str(cm.exception).rsplit(" [", 1)[0], message)

    def test_good_args_pass(self):
        fa2gen.check_forward(good_args())

    def test_every_field_reaches_c(self):
        self.expect("q.data", 0x10008, "q.data 0x10008 is not 16-byte aligned: q.data must "
                    "start on a 16-byte boundary")
        self.expect("k.dtype", 1, "k.dtype is 1 (FA2_FP16) but q.dtype is FA2_BF16: q, k, v "
                    "and o must have the same dtype")
        self.expect("v.batch_stride", 12801, "v.batch_stride 12801 breaks 16-byte alignment: "
                    "strides are in elements and must be multiples of 8 (16 bytes of bf16/fp16)")
        self.expect("q.seq_stride", 516, "q.seq_stride 516 breaks 16-byte alignment: strides "
                    "are in elements and must be multiples of 8 (16 bytes of bf16/fp16)")
        self.expect("o.head_stride", 0, "o.head_stride is 0: rows of the output would overlap")
        self.expect("lse", 0x50002, "lse 0x50002 is not 4-byte aligned: lse must start on a "
                    "4-byte boundary")
        self.expect("batch", 70000, "batch 70000 exceeds the CUDA grid limit 65535 (grid z is "
                    "batch)")
        self.expect("seqlen_q", -5, "seqlen_q is -5: must be >= 0")
        self.expect("seqlen_k", -2, "seqlen_k is -2: must be >= 0")
        self.expect("heads_kv", 3, "heads_q 8 is not a multiple of heads_kv 3 (GQA/MQA share "
                    "each K/V head among heads_q / heads_kv query heads)")
        self.expect("heads_q", 0, "heads_q is 0: must be >= 1")
        self.expect("head_dim", 100, "head_dim 100 is not supported: allowed multiples of 8 from 8 to 256")
        self.expect("scale", float("inf"), "scale is inf: must be finite (0 picks "
                    "1/sqrt(head_dim))")
        self.expect("stab", 9, "stab is 9: allowed FA2_STAB_NONE (0), FA2_STAB_PAPER (1), "
                    "FA2_STAB_ROBUST (2), FA2_STAB_TUNED (3), FA2_STAB_BALANCED (4)")
        self.expect("beta", 0.5, "beta is 0.5: must be a finite number > 1 (0 picks 2)")
        self.expect("eps", -1.0, "eps is -1: must be a finite number > 0 (0 picks 0.001)")

    def test_varlen_fields_reach_c(self):
        self.expect("cu_seqlens_q", 0xc0000, "cu_seqlens_k is NULL but cu_seqlens_q is not: a "
                    "variable-length call gives both (batch + 1 int32 offsets each), a "
                    "fixed-length one neither")
        a = good_args()
        a.cu_seqlens_q, a.cu_seqlens_k, a.total_q, a.total_k = 0xc0000, 0xd0002, 150, 160
        self.fails_naming(a, "cu_seqlens_k 0xd0002 is not 4-byte aligned")
        a.cu_seqlens_k, a.total_k = 0xd0000, -3
        self.fails_naming(a, "total_k is -3: must be >= 0")
        a.total_k = 160
        fa2gen.check_forward(a)

    def test_window_fields_reach_c(self):
        self.expect("window", 3, "window is 3: allowed 0 (none) or 1")
        a = good_args()
        a.window, a.window_left, a.window_right = 1, 5, -4
        self.fails_naming(a, "window_right is -4: must be >= 0, or -1")
        a.window_right = 0
        fa2gen.check_forward(a)

    def test_dropout_fields_reach_c(self):
        self.expect("dropout", 2, "dropout is 2: allowed 0 (none) or 1")
        self.expect("dropout_p", 0.25, "dropout_p is 0.25 but dropout is 0: set dropout = 1 to "
                    "drop (with 0, dropout_p must be 0)")
        a = good_args()
        a.dropout, a.dropout_p = 1, 1.0
        self.fails_naming(a, "dropout_p is 1: must be >= 0 and < 1")
        a.dropout_p, a.dropout_rng = 0.25, 0xf0004
        self.fails_naming(a, "dropout_rng 0xf0004 is not 8-byte aligned")
        a.dropout_rng = 0xf0000
        fa2gen.check_forward(a)

    def test_dropout_mask_on_the_host(self):
        # the fields after dropout_rng: seed and offset reach C (offset 1 is the next matrix)
        a = _lib.FwdArgs(batch=1, heads_q=2, seqlen_q=20, seqlen_k=24, dropout=1, dropout_p=0.5,
                         dropout_seed=2 ** 64 - 3, dropout_offset=0)
        m = (ctypes.c_ubyte * (2 * 20 * 24))()
        _lib.check(_lib.lib().fa2_dropout_mask_host(ctypes.byref(a), m))
        a.dropout_offset, a.heads_q = 1, 1
        m1 = (ctypes.c_ubyte * (20 * 24))()
        _lib.check(_lib.lib().fa2_dropout_mask_host(ctypes.byref(a), m1))
        self.assertEqual(bytes(m1), bytes(m)[20 * 24:])
        self.assertTrue(400 < sum(m) < 560, sum(m))  # about half of 960 kept (sd 15.5)
        a.dropout_seed = 2 ** 64 - 4
        _lib.check(_lib.lib().fa2_dropout_mask_host(ctypes.byref(a), m1))
        self.assertNotEqual(bytes(m1), bytes(m)[20 * 24:])

    def test_sinks_field_reaches_c(self):
        # the last field: a misplaced ctypes field would leave it unread
        self.expect("sinks", 0xe0002, "sinks 0xe0002 is not 4-byte aligned: sinks must start on "
                    "a 4-byte boundary")
        a = good_args()
        a.sinks = 0xe0000
        fa2gen.check_forward(a)

    def fails_naming(self, args, text):
        with self.assertRaises(fa2gen.Fa2Error) as cm:
            fa2gen.check_forward(args)
        self.assertIn(text, str(cm.exception))

    def test_causal_is_the_field_after_scale(self):
        a = good_args()
        a.causal = 1
        a.stab = 0
        a.beta = -3.0  # ignored for stab none: proves stab was read from its own slot
        fa2gen.check_forward(a)


def good_bwd():
    f = good_args()
    T = _lib.Tensor
    return _lib.BwdArgs(q=f.q, k=f.k, v=f.v, o=f.o, dout=T(0x60000, _lib.BF16, f.o.batch_stride,
                                                          f.o.seq_stride, 64),
                        dq=T(0x70000, _lib.BF16, f.q.batch_stride, f.q.seq_stride, 64),
                        dk=T(0x80000, _lib.BF16, f.k.batch_stride, f.k.seq_stride, 64),
                        dv=T(0x90000, _lib.BF16, f.v.batch_stride, f.v.seq_stride, 64),
                        lse=f.lse, batch=2, seqlen_q=100, seqlen_k=100, heads_q=8, heads_kv=2,
                        head_dim=64, stab=2)


class BackwardStructure(unittest.TestCase):
    """Each BwdArgs field, set to a bad value, must come back named in C's message."""

    def expect(self, field_path, value, message):
        a = good_bwd()
        obj = a
        parts = field_path.split(".")
        for p in parts[:-1]:
            obj = getattr(obj, p)
        setattr(obj, parts[-1], value)
        with self.assertRaises(fa2gen.Fa2Error) as cm:
            fa2gen.check_backward(a)
        self.assertEqual(str(cm.exception).rsplit(" [", 1)[0], message)

    def test_good_args_pass_and_workspace_size(self):
        a = good_bwd()
        fa2gen.check_backward(a)
        self.assertEqual(_lib.lib().fa2_backward_workspace_size(ctypes.byref(a)),
                         2 * 100 * 8 * 64 * 4 + 2 * 100 * 8 * 4 + 2 * 2 * 8 * 128 * 4)

    def test_every_field_reaches_c(self):
        self.expect("dout.dtype", 1, "dout.dtype is 1 (FA2_FP16) but q.dtype is FA2_BF16: q, k, "
                    "v and o must have the same dtype")
        self.expect("dq.seq_stride", 4, "dq.seq_stride 4 breaks 16-byte alignment: strides are "
                    "in elements and must be multiples of 8 (16 bytes of bf16/fp16)")
        self.expect("dk.data", 0x80008, "dk.data 0x80008 is not 16-byte aligned: dk.data must "
                    "start on a 16-byte boundary")
        self.expect("dv.head_stride", 0, "dv.head_stride is 0: rows of the output would overlap")
        self.expect("delta", 7, "delta is 7: allowed FA2_DELTA_LOWP (0) or FA2_DELTA_FP32 (1)")
        self.expect("delta", 1, "o_fp32 is NULL: FA2_DELTA_FP32 reads O in fp32 (the forward "
                    "writes it when fa2_fwd_args.o_fp32 is set)")
        self.expect("workspace", 0x100000, "workspace_bytes 0 is too small: these sizes need "
                    "432384 (fa2_backward_workspace_size)")
        self.expect("deterministic", 2, "deterministic is 2: allowed 0 or 1")
        self.expect("head_dim", 100, "head_dim 100 is not supported: allowed multiples of 8 from 8 to 256")
        self.expect("heads_kv", 3, "heads_q 8 is not a multiple of heads_kv 3 (GQA/MQA share "
                    "each K/V head among heads_q / heads_kv query heads)")
        self.expect("eps", -1.0, "eps is -1: must be a finite number > 0 (0 picks 0.001)")
        self.expect("dropout_p", 0.5, "dropout_p is 0.5 but dropout is 0: set dropout = 1 to "
                    "drop (with 0, dropout_p must be 0)")
        self.expect("dropout_rng", 0xf0002, "dropout_rng 0xf0002 is not 8-byte aligned: it "
                    "points to two 8-byte words {seed, offset}")

    def test_sinks_and_their_gradient_reach_c(self):
        self.expect("sinks", 0xe0000, "dsinks is NULL with sinks set: the backward of a sinks "
                    "call writes their gradient there (heads_q fp32 on the device)")
        self.expect("dsinks", 0xe1000, "dsinks is set but sinks is NULL: dsinks is the gradient "
                    "of the sinks; give both or neither")
        a = good_bwd()
        a.sinks, a.dsinks = 0xe0000, 0xe1002
        with self.assertRaises(fa2gen.Fa2Error) as cm:
            fa2gen.check_backward(a)
        self.assertIn("dsinks 0xe1002 is not 4-byte aligned", str(cm.exception))
        a.dsinks = 0xe1000
        fa2gen.check_backward(a)


class FakeDriver(unittest.TestCase):
    """A Context on the stand-in driver: options and stats cross ctypes intact."""

    def setUp(self):
        fake = os.environ.get("FA2_FAKE_CUDA", os.path.join(ROOT, "build", "libfakecuda.so"))
        if not os.path.isfile(fake):
            self.fail(f"{fake} missing: build it with `make test-bins`")
        os.environ["FA2_CUDA_LIBRARY"] = fake

    def tearDown(self):
        del os.environ["FA2_CUDA_LIBRARY"]

    def test_context_options_and_stats(self):
        with tempfile.TemporaryDirectory() as tmp:
            c = fa2gen.Context(cache_dir=os.path.join(tmp, "cache"), jobs=2)
            s = c.stats()
            c.close()
            self.assertEqual(s["arch"], "sm_90")
            self.assertEqual(s["device_name"], "Fake GPU")
            self.assertEqual(s["cache_dir"], os.path.join(tmp, "cache", "kernels"))
            self.assertEqual(s["disk_cache"], 1)
            self.assertEqual(s["misses"] + s["memory_hits"] + s["launches"], 0)
            self.assertTrue(os.path.isdir(os.path.join(tmp, "cache", "kernels")))

    def test_prepare_compiles_with_the_real_generator(self):
        with tempfile.TemporaryDirectory() as tmp:
            c = fa2gen.Context(cache_dir=tmp)
            c.prepare([{"dtype": "bf16", "head_dim": 64, "causal": True, "stab": "paper",
                        "beta": 4}, "fwd_bf16_d64_m128n64w4s2_none"])
            s = c.stats()
            c.close()
            self.assertEqual(s["misses"], 2)
            self.assertGreater(s["compile_ms"], 0)
            names = os.listdir(os.path.join(tmp, "kernels"))
            self.assertEqual(len([n for n in names if n.endswith(".fa2k")]), 2, names)

    def test_prepare_takes_the_tuned_tiles_of_a_length(self):
        with tempfile.TemporaryDirectory() as tmp:
            db = os.path.join(tmp, "t.json")
            tiles = {"block_m": 64, "block_n": 32, "warps": 2, "stages": 2}
            with open(db, "w") as f:
                json.dump({"format": "fa2gen-tuning", "version": 2,
                           "gpu": {"name": "Fake GPU", "arch": "sm_90", "sm_count": 132},
                           "made_with": {"fa2gen": fa2gen.version(), "driver": 13000,
                                         "nvrtc": "13.0"},
                           "entries": {"fwd_bf16_d64_none": {
                               "block_m": 128, "block_n": 64, "warps": 4, "stages": 1,
                               "by_seqlen": {"1024": {"block_m": 128, "block_n": 64, "warps": 4,
                                                      "stages": 1}, "4096": tiles}}}}, f)
            c = fa2gen.Context(cache_dir=os.path.join(tmp, "cache"), tuning_db=db)
            c.prepare([{"head_dim": 64, "stab": "none", "seqlen": 8192},
                       {"head_dim": 64, "stab": "none"}])
            s = c.stats()
            c.close()
            self.assertEqual(s["misses"], 2)
            kernels = os.path.join(tmp, "cache", "kernels")
            blobs = b"".join(open(os.path.join(kernels, n), "rb").read()
                             for n in os.listdir(kernels))  # cubins name their source (-lineinfo)
            self.assertIn(b"fwd_bf16_d64_m64n32w2s2_none", blobs)
            self.assertIn(b"fwd_bf16_d64_m128n64w4s1_none", blobs)

    def test_bad_device_ordinal(self):
        with self.assertRaises(fa2gen.Fa2Error) as cm:
            fa2gen.Context(device=3)
        self.assertIn("options.device is 3 but this machine has 1 CUDA device(s)",
                      str(cm.exception))

    def test_prepare_reports_bad_descriptions(self):
        with tempfile.TemporaryDirectory() as tmp:
            c = fa2gen.Context(cache_dir=tmp)
            with self.assertRaises(fa2gen.Fa2Error) as cm:
                c.prepare([{"dtype": "bf16", "head_dim": 100, "stab": "none"}])
            self.assertIn("kernels[0]: head_dim 100 is not supported", str(cm.exception))
            with self.assertRaises(ValueError):
                c.prepare([{"head_dim": 64, "stab": "wild"}])
            c.close()


class NvrtcFolders(unittest.TestCase):
    def test_finds_pip_nvidia_lib_folders(self):
        with tempfile.TemporaryDirectory() as site:
            for sub in ("nvidia/cu13/lib", "nvidia/cuda_nvrtc/lib", "nvidia/cublas/lib"):
                os.makedirs(os.path.join(site, sub))
            found = fa2gen.find_nvrtc_dirs([site, "/nonexistent"])
            self.assertEqual(found, [os.path.join(site, "nvidia/cu13/lib"),
                                     os.path.join(site, "nvidia/cuda_nvrtc/lib")])


if __name__ == "__main__":
    unittest.main()
