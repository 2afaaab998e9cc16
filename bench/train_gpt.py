#!/usr/bin/env python3
"""A small GPT trained in BF16 autocast with fa2gen attention (or PyTorch SDPA),
logging what the paper says precedes a BF16 flash-attention failure.

    python3 bench/train_gpt.py --modes sdpa-flash,sdpa-cudnn,none,robust --seconds S --out DIR
    python3 bench/train_gpt.py --plot DIR           # PNGs of every mode's log in DIR
    torchrun --nproc_per_node=N bench/train_gpt.py --ddp  --modes robust,sdpa-flash --steps S
    torchrun --nproc_per_node=N bench/train_gpt.py --fsdp --modes robust,sdpa-flash --steps S

The model is compiled (torch.compile, fullgraph) unless --no-compile; each mode
runs in turn in one call and a table of tokens/s and final loss ends the output
(tokens/s counts the steps after the first three, which compile and warm up).
Modes: none, paper, robust (fa2gen's stabilization), sdpa-flash and sdpa-cudnn
(PyTorch's SDPA restricted to that backend; sdpa = sdpa-flash).

Data: the repository's own text (C, Lua, Python, Markdown files), byte-level,
so nothing is downloaded. Every mode starts from the same seed, the same
weights and the same batches. Per step the log (DIR/<mode>.jsonl) has the loss;
with --no-compile, every --probe steps also, per layer, the tied-maximum rate (share of causal
score rows whose maximum is attained more than once, on the first sequence of
the batch), the spectral norm of W_Q, and for layer 0 the delta error
sum_T (delta_lp - delta_hp)[T], with delta = rowsum(dO * O) from the bf16
attention output and from an fp32 attention on the same bf16 inputs.

Several GPUs (--ddp or --fsdp, under torchrun: RANK, WORLD_SIZE, LOCAL_RANK;
without them a world of one): NCCL, each rank on cuda:LOCAL_RANK, NVLink
multicast off (NCCL_NVLS_ENABLE=0, TORCH_SYMM_MEM_DISABLE_MULTICAST=1,
NVSHMEM_DISABLE_NVLS=1 set unless given, and refused if given otherwise).
Every rank draws the same global batch of WORLD_SIZE x --batch sequences from
the same seed and trains on its own slice. --ddp wraps the model in
DistributedDataParallel around a torch.compile(fullgraph=True) forward, so a
graph break anywhere in it, fa2gen's attention included, is an error; --fsdp
shards each block and the root with FSDP2 (fully_shard) and compiles each
block's forward with fullgraph=True (FSDP's hooks stay outside the graphs).
Rank 0 logs the loss averaged over ranks (DIR/<mode>_<ddp|fsdp><N>.jsonl) and
the tokens/s of all ranks together; every rank's fa2gen cache counters and the
graph breaks dynamo counted are printed. The table is also written to
DIR/summary_<ddp|fsdp><N>.json; --baseline FILE (such a summary of a run on
one rank) or --baseline-tokens-per-s X adds the scaling efficiency,
tokens/s(N) / (N x tokens/s(1)). --device cpu runs that plumbing on CPU with
gloo and the sdpa modes (eager), for tests without a GPU.
"""
import argparse, contextlib, glob, json, math, os, subprocess, sys, time

MODES = ("none", "paper", "robust", "sdpa", "sdpa-flash", "sdpa-cudnn")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def corpus():
    try:
        files = subprocess.run(["git", "-C", ROOT, "ls-files", "*.c", "*.h", "*.lua", "*.py", "*.md",
                                "*.tpl"], capture_output=True, text=True).stdout.split()
    except OSError:
        files = []
    if not files:  # not a git checkout: take the files as they lie
        files = [os.path.relpath(p, ROOT) for ext in ("c", "h", "lua", "py", "md", "tpl")
                 for p in glob.glob(os.path.join(ROOT, "**", "*." + ext), recursive=True)]
    data = b"".join(open(os.path.join(ROOT, f), "rb").read() for f in sorted(files))
    return data


def build(args):
    import torch
    if not args.mode.startswith("sdpa"):
        import fa2gen
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.wq, self.wk, self.wv = (nn.Linear(dim, dim, bias=False) for _ in range(3))
            self.proj = nn.Linear(dim, dim, bias=False)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

        def attend(self, x):
            B, N, D = x.shape
            q, k, v = (w(x).view(B, N, self.heads, D // self.heads) for w in (self.wq, self.wk, self.wv))
            if args.mode.startswith("sdpa"):
                o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                                   is_causal=True).transpose(1, 2)
            else:
                o = fa2gen.attention(q, k, v, causal=True, stab=args.mode)
            if args.probe:  # the probe reads q, k (ties), and v, o, dO (delta) of layer 0
                o.retain_grad()
                self.saved = (q.detach(), k.detach(), v.detach(), o)
            return o.reshape(B, N, D)

        def forward(self, x):
            x = x + self.proj(self.attend(self.ln1(x)))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(256, args.dim)
            self.pos = nn.Embedding(args.seqlen, args.dim)
            self.blocks = nn.ModuleList(Block(args.dim, args.dim // 64) for _ in range(args.layers))
            self.ln = nn.LayerNorm(args.dim)
            self.head = nn.Linear(args.dim, 256, bias=False)

        def forward(self, idx):
            x = self.emb(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
            for b in self.blocks:
                x = b(x)
            return self.head(self.ln(x))

    return GPT()


def probe(model, torch):
    """Tied-maximum rate and ||W_Q||_2 per layer; the delta error of layer 0."""
    out = {"tied": [], "wq_norm": []}
    with torch.no_grad():
        for b in model.blocks:
            out["wq_norm"].append(torch.linalg.matrix_norm(b.wq.weight.float(), ord=2).item())
            q, k = b.saved[0], b.saved[1]
            s = torch.einsum("nhd,mhd->hnm", q[0].float(), k[0].float())  # (H, N, N), one sequence
            N = s.shape[-1]
            s = s.masked_fill(torch.ones(N, N, dtype=torch.bool, device=s.device).triu(1), float("-inf"))
            out["tied"].append(((s == s.max(-1, keepdim=True).values).sum(-1) > 1).float().mean().item())
        # delta_lp - delta_hp of layer 0 with this step's dO; O_hp: fp32 attention, same inputs
        q, k, v, o = model.blocks[0].saved
        do = o.grad.float()
        qf, kf, vf = (t.float().transpose(1, 2) for t in (q, k, v))
        o_hp = torch.nn.functional.scaled_dot_product_attention(qf, kf, vf, is_causal=True).transpose(1, 2)
        out["delta_err"] = ((do * o.detach().float()).sum(-1) - (do * o_hp).sum(-1)).sum().item()
    return out


def sdpa_backend(mode, torch):
    """The SDPA backend a mode pins (for the whole step, so that compiled and
    eager code choose the same kernel), or no restriction."""
    if not mode.startswith("sdpa"):
        return contextlib.nullcontext()
    from torch.nn.attention import SDPBackend, sdpa_kernel
    return sdpa_kernel(SDPBackend.CUDNN_ATTENTION if mode == "sdpa-cudnn" else SDPBackend.FLASH_ATTENTION)


# NVLink multicast stays off on every machine this runs on: the values each
# variable must have (set when absent, refused when given otherwise).
MULTICAST_OFF = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
                 "NVSHMEM_DISABLE_NVLS": "1"}


def multicast_off():
    for name, off in MULTICAST_OFF.items():
        os.environ.setdefault(name, off)
        if os.environ[name] != off:
            sys.exit(f"train_gpt.py: {name}={os.environ[name]!r}: NVLink multicast must stay off "
                     f"here; unset it or set {name}={off}")


class Dist:
    """The process group of a --ddp/--fsdp run (torchrun's environment, else a
    world of one), or a stand-in for one process."""

    def __init__(self, args):
        self.on = bool(args.ddp or args.fsdp)
        self.kind = "ddp" if args.ddp else "fsdp" if args.fsdp else ""
        self.rank, self.world, self.local = 0, 1, 0
        self.cuda = args.device == "cuda"
        if not self.on:
            self.device = args.device
            return
        import torch
        import torch.distributed as dist
        self.dist = dist
        env = {k: os.environ.get(k) for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
        if any(v is None for v in env.values()):  # started without torchrun: a world of one
            os.environ.update({"RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"})
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", "29512")
        self.rank, self.world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
        self.local = int(os.environ["LOCAL_RANK"])
        if self.cuda:
            multicast_off()
            if self.local >= torch.cuda.device_count():
                sys.exit(f"train_gpt.py: LOCAL_RANK {self.local} but {torch.cuda.device_count()} "
                         "CUDA devices: start at most that many processes per node")
            torch.cuda.set_device(self.local)
            self.device = f"cuda:{self.local}"
            dist.init_process_group("nccl", device_id=torch.device(self.device))
        else:
            self.device = "cpu"
            dist.init_process_group("gloo")

    def all_sum(self, values):
        """values (floats) summed over ranks (one collective)."""
        if not self.on:
            return values
        import torch
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        self.dist.all_reduce(t)
        return t.tolist()

    def gather(self, values):
        """Each rank's list of numbers, by rank (a sum of zero-padded rows:
        all_gather_object would need NumPy)."""
        if not self.on:
            return [values]
        import torch
        t = torch.zeros(self.world, len(values), dtype=torch.float64, device=self.device)
        t[self.rank] = torch.tensor(values, dtype=torch.float64)
        self.dist.all_reduce(t)
        return t.tolist()

    def close(self):
        if self.on:
            # every rank here before any tears down: gloo ranks that left while another
            # still wrote its summary aborted at exit ("terminate called without an
            # active exception") in about one run of three
            self.dist.barrier()
            self.dist.destroy_process_group()


def wrap(model, args, dist, torch):
    """The module a step calls: compiled, and under DDP or FSDP2 when asked."""
    if not dist.on:
        return model if args.no_compile else torch.compile(model, fullgraph=True)
    if dist.kind == "ddp":
        from torch.nn.parallel import DistributedDataParallel as DDP
        if not args.no_compile:  # the whole forward one graph; DDP's hooks around it
            model.forward = torch.compile(model.forward, fullgraph=True)
        return DDP(model, device_ids=[dist.local] if dist.cuda else None)
    from torch.distributed.fsdp import fully_shard
    for b in model.blocks:
        if not args.no_compile:  # one graph per block; FSDP's hooks run outside it
            b.forward = torch.compile(b.forward, fullgraph=True)
        fully_shard(b)
    fully_shard(model)
    return model


def dynamo_counts():
    """Graph breaks dynamo counted in this process (fullgraph would have
    raised on one) and the graphs it compiled, since the mode began."""
    from torch._dynamo.utils import counters
    return [sum(counters["graph_break"].values()), counters["stats"]["unique_graphs"]]


COUNTERS = ("misses", "disk_hits", "aot_hits", "memory_hits", "launches")


def fa2gen_counters(mode, dist):
    """This rank's fa2gen cache counters (zeros for the sdpa modes)."""
    if mode.startswith("sdpa"):
        return [0] * len(COUNTERS)
    import fa2gen
    s = fa2gen.context(dist.device).stats()
    return [s[k] for k in COUNTERS]


def train(args, dist):
    import torch
    from torch._dynamo.utils import counters
    counters.clear()
    torch.manual_seed(args.seed)
    dev = dist.device
    sync = torch.cuda.synchronize if dist.cuda else (lambda: None)
    data = torch.tensor(list(corpus()), dtype=torch.long)
    model = build(args).to(dev)
    step_model = wrap(model, args, dist, torch)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    gen = torch.Generator().manual_seed(args.seed)
    name = f"{args.mode}_{dist.kind}{dist.world}" if dist.on else args.mode
    log = None
    if dist.rank == 0:
        os.makedirs(args.out, exist_ok=True)
        log = open(os.path.join(args.out, f"{name}.jsonl"), "w")
    t0, step, t_warm, rec = time.time(), 0, None, {"loss": float("nan")}
    # every rank takes the same number of steps: the stop is decided together (below)
    stop = not (args.seconds > 0 and args.steps > 0)
    while not stop:
        if step == 3:
            sync()
            t_warm = time.time()
        # the same global batch on every rank (same generator), each rank its slice
        ix = torch.randint(len(data) - args.seqlen - 1, (dist.world * args.batch,), generator=gen)
        ix = ix[dist.rank * args.batch:(dist.rank + 1) * args.batch]
        x = torch.stack([data[i:i + args.seqlen] for i in ix]).to(dev)
        y = torch.stack([data[i + 1:i + 1 + args.seqlen] for i in ix]).to(dev)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=dist.cuda), \
                sdpa_backend(args.mode, torch):
            loss = torch.nn.functional.cross_entropy(step_model(x).float().view(-1, 256), y.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
        opt.step()
        want_stop = time.time() - t0 >= args.seconds or step + 1 >= args.steps
        loss_sum, stops = dist.all_sum([loss.item(), float(want_stop)])
        rec = {"step": step, "loss": loss_sum / dist.world, "t": round(time.time() - t0, 3)}
        if args.probe and step % args.probe == 0:
            rec.update(probe(model, torch))
        if log:
            log.write(json.dumps(rec) + "\n")
        if step % 100 == 0 and dist.rank == 0:
            print(f"{name} step {step} loss {rec['loss']:.4f} {time.time() - t0:.0f}s", flush=True)
        if not math.isfinite(rec["loss"]):  # the mean over ranks: all stop here
            if dist.rank == 0:
                print(f"{name}: loss is {rec['loss']} at step {step}: stopping", flush=True)
            break
        step += 1
        stop = stops > 0
    sync()
    if log:
        log.close()
    timed = step - 3
    elapsed = time.time() - t_warm if t_warm else 0.0
    # all ranks' tokens over the slowest rank's time
    rows = dist.gather([elapsed, dist.local] + dynamo_counts() + fa2gen_counters(args.mode, dist))
    elapsed = max(r[0] for r in rows)
    tok_s = timed * dist.world * args.batch * args.seqlen / elapsed if t_warm and timed > 0 else 0.0
    per_rank = [dict({"rank": i, "local_rank": int(r[1]), "graph_breaks": int(r[2]),
                      "graphs": int(r[3])}, **{k: int(v) for k, v in zip(COUNTERS, r[4:])})
                for i, r in enumerate(rows)]
    if dist.rank == 0:
        print(f"{name}: {step} steps in {time.time() - t0:.0f}s, last loss {rec['loss']:.4f}, "
              f"{tok_s:.0f} tokens/s" + (f" ({dist.world} ranks together)" if dist.on else ""),
              flush=True)
        for r in per_rank if dist.on else []:
            print(f"  rank {r['rank']} (local {r['local_rank']}): graph breaks {r['graph_breaks']}, "
                  f"graphs {r['graphs']}" +
                  ("" if args.mode.startswith("sdpa") else
                   f", fa2gen compiled {r['misses']}, loaded {r['disk_hits'] + r['aot_hits']}, "
                   f"memory hits {r['memory_hits']}, launches {r['launches']}"), flush=True)
    return {"mode": args.mode, "steps": step, "tokens_per_s": tok_s, "loss": rec["loss"],
            "world": dist.world, "kind": dist.kind or "single", "ranks": per_rank}


def plot_loss(d, runs, plt, k=25):
    """The loss of each mode, a k-step running mean, on one log axis."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for mode, recs in runs.items():
        loss = [r["loss"] for r in recs]
        mean = [sum(loss[max(0, i - k + 1):i + 1]) / (i + 1 - max(0, i - k + 1)) for i in range(len(loss))]
        ax.plot([r["step"] for r in recs], mean, label=mode, lw=1)
    ax.set(xlabel="step", ylabel=f"training loss ({k}-step mean)", yscale="log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(d, "training.png"), dpi=100)
    print("wrote", os.path.join(d, "training.png"))


def plot(d):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = {}
    for f in sorted(glob.glob(os.path.join(d, "*.jsonl"))):
        runs[os.path.basename(f)[:-6]] = [json.loads(l) for l in open(f)]
    if not any("tied" in r for recs in runs.values() for r in recs):
        return plot_loss(d, runs, plt)  # compiled runs: no probe, the loss alone
    fig, ax = plt.subplots(2, 2, figsize=(12, 8))
    for mode, recs in runs.items():
        st = [r["step"] for r in recs]
        ax[0][0].plot(st, [r["loss"] for r in recs], label=mode, lw=0.8)
        pr = [r for r in recs if "tied" in r]
        ax[0][1].plot([r["step"] for r in pr], [max(r["tied"]) for r in pr], label=mode)
        ax[1][0].plot([r["step"] for r in pr], [max(r["wq_norm"]) for r in pr], label=mode)
        acc, cum = 0.0, []
        for r in pr:
            acc += r["delta_err"]
            cum.append(acc)
        ax[1][1].plot([r["step"] for r in pr], cum, label=mode)
    for a, t in zip(ax.flat, ("training loss", "tied-maximum rate, max over layers",
                              "max over layers of ||W_Q||_2", "cumulative sum_T (delta_lp - delta_hp), layer 0")):
        a.set_title(t)
        a.set_xlabel("step")
        a.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(d, "training.png"), dpi=110)
    print("wrote", os.path.join(d, "training.png"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=MODES, help="one mode (same as --modes MODE)")
    ap.add_argument("--modes", help="comma-separated modes, run in turn: " + ",".join(MODES))
    ap.add_argument("--no-compile", action="store_true", help="eager PyTorch (the probe needs it)")
    ap.add_argument("--seconds", type=float, default=480)
    ap.add_argument("--steps", type=int, default=10 ** 9)
    ap.add_argument("--out", default="bench/results/train")
    ap.add_argument("--plot", metavar="DIR")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--dim", type=int, default=384, help="model width (heads of 64)")
    ap.add_argument("--seqlen", type=int, default=512)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--probe", type=int, default=None,
                    help="probe every N steps (default 10 with --no-compile, else off: 0)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ddp", action="store_true",
                    help="DistributedDataParallel over torchrun's ranks (NCCL)")
    ap.add_argument("--fsdp", action="store_true",
                    help="FSDP2 (fully_shard per block and the root) over torchrun's ranks")
    ap.add_argument("--baseline", metavar="FILE",
                    help="summary JSON of a one-rank run (DIR/summary_ddp1.json): prints the "
                         "scaling efficiency per mode")
    ap.add_argument("--baseline-tokens-per-s", type=float, metavar="X",
                    help="one rank's tokens/s, for every mode: prints the scaling efficiency")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: a dry run of --ddp/--fsdp on gloo with the sdpa modes, eager")
    args = ap.parse_args()
    if args.plot:
        return plot(args.plot)
    modes = args.modes.split(",") if args.modes else [args.mode] if args.mode else []
    if not modes:
        ap.error("--mode, --modes or --plot")
    for m in modes:
        if m not in MODES:
            ap.error(f"mode {m!r}: allowed {', '.join(MODES)}")
    if args.dim % 64:
        ap.error(f"--dim {args.dim}: must be a multiple of 64 (heads of 64)")
    if args.probe is None:
        args.probe = 10 if args.no_compile else 0
    if args.probe and not args.no_compile:
        ap.error("--probe reads tensors inside the model: it needs --no-compile")
    if args.ddp and args.fsdp:
        ap.error("--ddp and --fsdp: choose one")
    distributed = args.ddp or args.fsdp
    if args.probe and distributed:
        ap.error("--probe reads one process's tensors: run it without --ddp/--fsdp")
    if (args.baseline or args.baseline_tokens_per_s) and not distributed:
        ap.error("--baseline and --baseline-tokens-per-s go with --ddp or --fsdp")
    if args.baseline_tokens_per_s is not None and args.baseline_tokens_per_s <= 0:
        ap.error(f"--baseline-tokens-per-s {args.baseline_tokens_per_s}: must be > 0")
    if args.device == "cpu":
        if not distributed:
            ap.error("--device cpu is the dry run of --ddp/--fsdp: add one of them")
        bad = [m for m in modes if not m.startswith("sdpa")]
        if bad:
            ap.error(f"--device cpu: mode {bad[0]!r} needs a GPU; allowed sdpa, sdpa-flash")
        args.no_compile = True  # keeps a CPU test short; the GPU runs compile
    one = baseline(args, ap)
    dist = Dist(args)
    try:
        rows = []
        for m in modes:
            args.mode = m
            rows.append(train(args, dist))
        if dist.rank == 0:
            report(args, dist, rows, one)
    finally:
        dist.close()
    if dist.on:
        # A rank's interpreter teardown (gloo's and the compile workers' C++ threads)
        # still aborted now and then after a clean close ("terminate called without
        # an active exception", exit -6, seen in make test under load): everything is
        # written and the group is gone, so leave without running those destructors.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def baseline(args, ap):
    """One rank's tokens/s per mode (None: any mode), from --baseline or
    --baseline-tokens-per-s; {} without either."""
    if args.baseline_tokens_per_s:
        return {None: args.baseline_tokens_per_s}
    if not args.baseline:
        return {}
    try:
        with open(args.baseline) as f:
            rows = json.load(f)["rows"]
        out = {r["mode"]: r["tokens_per_s"] / r["world"] for r in rows if r["tokens_per_s"] > 0}
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        ap.error(f"--baseline {args.baseline}: not a summary JSON of train_gpt.py ({e})")
    if not out:
        ap.error(f"--baseline {args.baseline}: no mode with tokens/s in it")
    return out


def report(args, dist, rows, one):
    """The table (rank 0), with the scaling efficiency when a baseline is known."""
    base = rows[0]["tokens_per_s"] or 1.0
    how = "eager" if args.no_compile else "torch.compile"
    if dist.on:
        how += f", {dist.kind} over {dist.world} rank(s), {args.device}"
    print(f"\n{'mode':<12}{'steps':>7}{'tokens/s':>12}{'vs ' + rows[0]['mode']:>16}{'final loss':>12}"
          + (f"{'scaling':>10}" if one else "") + f"   ({how})")
    for r in rows:
        line = (f"{r['mode']:<12}{r['steps']:>7}{r['tokens_per_s']:>12.0f}"
                f"{r['tokens_per_s'] / base:>16.3f}{r['loss']:>12.4f}")
        ref = one.get(r["mode"], one.get(None))
        if ref:  # tokens/s(N) / (N x tokens/s(1))
            r["scaling_efficiency"] = r["tokens_per_s"] / (dist.world * ref)
            line += f"{r['scaling_efficiency']:>10.3f}"
        elif one:
            line += f"{'-':>10}"
        print(line)
    if dist.on:
        path = os.path.join(args.out, f"summary_{dist.kind}{dist.world}.json")
        with open(path, "w") as f:
            json.dump({"rows": rows, "world": dist.world, "kind": dist.kind, "device": args.device,
                       "compiled": not args.no_compile, "batch_per_rank": args.batch,
                       "seqlen": args.seqlen, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                    time.gmtime())}, f, indent=1)
        print("wrote", path)


if __name__ == "__main__":
    sys.exit(main())
