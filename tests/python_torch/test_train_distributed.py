"""bench/train_gpt.py --ddp / --fsdp without a GPU: the --device cpu dry run
(gloo, SDPA, eager) on 2 ranks under torchrun checks the plumbing a GPU run
shares: the same steps on every rank, each rank its slice of one global
batch (so DDP and FSDP2 give the same losses), rank 0's log and summary, the
scaling efficiency against a one-rank summary; and the refusals (multicast
switched on, --ddp with --fsdp, fa2gen modes on CPU).

Run by `make test` with the Python of tools/torch_python.sh."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))
SCRIPT = os.path.join(ROOT, "bench", "train_gpt.py")
SMALL = ["--device", "cpu", "--modes", "sdpa-flash", "--steps", "5", "--layers", "2",
         "--dim", "128", "--seqlen", "64", "--batch", "2"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(args, ranks=None, **env):
    cmd = [sys.executable, SCRIPT] + args
    if ranks:
        cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={ranks}",
               f"--master_port={free_port()}"] + cmd[1:]
    clean = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    return subprocess.run(cmd, env=dict(clean, OMP_NUM_THREADS="1", **env), capture_output=True,
                          text=True, timeout=300)


class DryRun(unittest.TestCase):
    def test_ddp_and_fsdp_on_two_ranks(self):
        with tempfile.TemporaryDirectory() as d:
            one = run(["--ddp", "--out", d] + SMALL)  # no torchrun: a world of one
            self.assertEqual(one.returncode, 0, one.stdout + one.stderr)
            base = os.path.join(d, "summary_ddp1.json")
            losses = {}
            for kind in ("ddp", "fsdp"):
                out = run([f"--{kind}", "--out", d, "--baseline", base] + SMALL, ranks=2)
                self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
                self.assertIn(f"sdpa-flash_{kind}2: 5 steps", out.stdout)
                self.assertIn("rank 1 (local 1): graph breaks 0", out.stdout)
                self.assertRegex(out.stdout, rf"scaling .*{kind} over 2 rank\(s\), cpu")
                with open(os.path.join(d, f"sdpa-flash_{kind}2.jsonl")) as f:
                    losses[kind] = [json.loads(line)["loss"] for line in f]
                with open(os.path.join(d, f"summary_{kind}2.json")) as f:
                    row = json.load(f)["rows"][0]
                self.assertEqual((row["world"], row["steps"]), (2, 5))
                self.assertGreater(row["scaling_efficiency"], 0)
            self.assertEqual(len(losses["ddp"]), 5)
            for a, b in zip(losses["ddp"], losses["fsdp"]):  # the same batches, the same model
                self.assertAlmostEqual(a, b, delta=1e-3 * abs(a))

    def test_refusals(self):
        for args, env, text in (
                (["--ddp", "--fsdp", "--mode", "sdpa"], {}, "--ddp and --fsdp: choose one"),
                (["--ddp", "--device", "cpu", "--mode", "robust"], {},
                 "--device cpu: mode 'robust' needs a GPU"),
                (["--device", "cpu", "--mode", "sdpa"], {}, "--device cpu is the dry run of "
                 "--ddp/--fsdp"),
                (["--mode", "sdpa", "--baseline-tokens-per-s", "5"], {},
                 "--baseline and --baseline-tokens-per-s go with --ddp or --fsdp"),
                (["--ddp", "--mode", "sdpa", "--baseline", "/nonexistent.json"], {},
                 "--baseline /nonexistent.json: not a summary JSON of train_gpt.py"),
                (["--ddp", "--mode", "sdpa"], {"NCCL_NVLS_ENABLE": "1"},
                 "NCCL_NVLS_ENABLE='1': NVLink multicast must stay off here")):
            out = run(args, **env)
            self.assertNotEqual(out.returncode, 0, args)
            self.assertIn(text, out.stderr, args)


if __name__ == "__main__":
    unittest.main()
