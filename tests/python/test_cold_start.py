"""bench/cold_start.py on the stand-in driver (no GPU) with the real NVRTC:
3 ranks share one empty cache, each kernel is compiled once and loaded by the
others, a fresh process loads every entry; and a damaged entry is caught.

Run by `make test` (FA2_LIB and FA2_FAKE_CUDA set there); skips when the
stand-in driver or NVRTC is missing."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SCRIPT = os.path.join(ROOT, "bench", "cold_start.py")
FAKE = os.environ.get("FA2_FAKE_CUDA") or os.path.join(ROOT, "build", "libfakecuda.so")
ENV = dict(os.environ, FA2_CUDA_LIBRARY=os.path.abspath(FAKE),
           FA2_LIB=os.environ.get("FA2_LIB") or os.path.join(ROOT, "lib", "libfa2rt.so"))


def nvrtc_missing():
    """Why the runtime cannot compile here, or None."""
    code = ("import sys; sys.path.insert(0, %r); import fa2gen\n"
            "try:\n    fa2gen.Context(0, no_disk_cache=True).prepare([{'head_dim': 64}])\n"
            "except fa2gen.Fa2Error as e:\n    print(e)\n" % os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True)
    return (out.stdout + out.stderr).strip() or None


@unittest.skipUnless(os.path.exists(FAKE), f"no stand-in driver at {FAKE} (make build/libfakecuda.so)")
class ColdStart(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = nvrtc_missing()
        if why:
            raise unittest.SkipTest(f"the runtime cannot compile here: {why}")

    def run_script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, "--quick", "--devices", "1", *args],
                              env=ENV, capture_output=True, text=True, timeout=600)

    def test_three_ranks_compile_each_kernel_once(self):
        with tempfile.TemporaryDirectory() as d:
            cache, report = os.path.join(d, "cache"), os.path.join(d, "cold.json")
            out = self.run_script("--ranks", "3", "--cache-dir", cache, "--json", report)
            self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
            lines = out.stdout.strip().splitlines()
            self.assertRegex(lines[-1], r"^3 ranks: [0-9.]+ s vs one rank: [0-9.]+ s$")
            self.assertIn("OK: each of 8 kernels compiled once", lines[-2])
            with open(report) as f:
                rep = json.load(f)
            self.assertEqual(rep["fails"], [])
            stats = [r["stats"] for r in rep["ranks"]]
            self.assertEqual(sum(s["misses"] for s in stats), 8)
            for s in stats:  # every rank has all 8: compiled here or loaded from another's
                self.assertEqual(s["misses"] + s["disk_hits"], 8, s)
            self.assertEqual((rep["fresh"][0]["stats"]["disk_hits"],
                              rep["fresh"][0]["stats"]["misses"]), (8, 0))
            self.assertEqual(rep["one_rank"][0]["stats"]["misses"], 8)
            self.assertEqual(len(os.listdir(os.path.join(cache, "kernels"))), 8)

            # A truncated entry: the runtime drops it and compiles again, which the
            # script's fresh-process check reports.
            sys.path.insert(0, os.path.join(ROOT, "bench"))  # the ranks import it too
            self.addCleanup(sys.path.remove, os.path.join(ROOT, "bench"))
            import cold_start
            entry = sorted(os.listdir(os.path.join(cache, "kernels")))[0]
            path = os.path.join(cache, "kernels", entry)
            with open(path, "r+b") as f:
                f.truncate(os.path.getsize(path) // 2)
            args = type("A", (), {"quick": True, "spec": None, "jobs": 1, "timeout": 300})()
            saved = dict(os.environ)
            os.environ.update(ENV)
            try:
                fresh = cold_start.run_ranks(1, 1, cache, args)
            finally:
                os.environ.clear()
                os.environ.update(saved)
            fails = cold_start.check_cache(cache, rep["ranks"], fresh)
            self.assertIn("fresh process: 7 loaded from disk and 1 compiled; expected 8 and 0",
                          " ".join(fails))

    def test_bad_arguments(self):
        for args, text in ((["--ranks", "0"], "--ranks 0: must be >= 1"),
                           (["--devices", "0"], "--devices 0: must be >= 1"),
                           (["--cache-dir", ROOT], "is not empty: a cold start needs an empty folder")):
            out = self.run_script(*args)
            self.assertEqual(out.returncode, 2, out.stderr)
            self.assertIn(text, out.stderr)


if __name__ == "__main__":
    unittest.main()
