#!/usr/bin/env python3
"""A small GPT trained in BF16 autocast with fa2gen attention (or PyTorch SDPA),
logging what the paper says precedes a BF16 flash-attention failure.

    python3 bench/train_gpt.py --modes sdpa-flash,sdpa-cudnn,none,robust --seconds S --out DIR
    python3 bench/train_gpt.py --plot DIR           # PNGs of every mode's log in DIR

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


def train(args):
    import torch
    torch.manual_seed(args.seed)
    dev = "cuda"
    data = torch.tensor(list(corpus()), dtype=torch.long)
    model = build(args).to(dev)
    step_model = model if args.no_compile else torch.compile(model, fullgraph=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.0)
    gen = torch.Generator().manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, f"{args.mode}.jsonl"), "w")
    t0, step, t_warm, rec = time.time(), 0, None, {"loss": float("nan")}
    while time.time() - t0 < args.seconds and step < args.steps:
        if step == 3:
            torch.cuda.synchronize()
            t_warm = time.time()
        ix = torch.randint(len(data) - args.seqlen - 1, (args.batch,), generator=gen)
        x = torch.stack([data[i:i + args.seqlen] for i in ix]).to(dev)
        y = torch.stack([data[i + 1:i + 1 + args.seqlen] for i in ix]).to(dev)
        with torch.autocast("cuda", dtype=torch.bfloat16), sdpa_backend(args.mode, torch):
            loss = torch.nn.functional.cross_entropy(step_model(x).float().view(-1, 256), y.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
        opt.step()
        rec = {"step": step, "loss": loss.item(), "t": round(time.time() - t0, 3)}
        if args.probe and step % args.probe == 0:
            rec.update(probe(model, torch))
        log.write(json.dumps(rec) + "\n")
        if step % 100 == 0:
            print(f"{args.mode} step {step} loss {rec['loss']:.4f} {time.time() - t0:.0f}s", flush=True)
        if not math.isfinite(rec["loss"]):
            print(f"{args.mode}: loss is {rec['loss']} at step {step}: stopping", flush=True)
            break
        step += 1
    torch.cuda.synchronize()
    log.close()
    timed = step - 3
    tok_s = timed * args.batch * args.seqlen / (time.time() - t_warm) if t_warm and timed > 0 else 0.0
    print(f"{args.mode}: {step} steps in {time.time() - t0:.0f}s, last loss {rec['loss']:.4f}, "
          f"{tok_s:.0f} tokens/s", flush=True)
    return {"mode": args.mode, "steps": step, "tokens_per_s": tok_s, "loss": rec["loss"]}


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
    rows = []
    for m in modes:
        args.mode = m
        rows.append(train(args))
    base = rows[0]["tokens_per_s"] or 1.0
    print(f"\n{'mode':<12}{'steps':>7}{'tokens/s':>12}{'vs ' + rows[0]['mode']:>16}{'final loss':>12}"
          f"   ({'eager' if args.no_compile else 'torch.compile'})")
    for r in rows:
        print(f"{r['mode']:<12}{r['steps']:>7}{r['tokens_per_s']:>12.0f}{r['tokens_per_s'] / base:>16.3f}"
              f"{r['loss']:>12.4f}")


if __name__ == "__main__":
    sys.exit(main())
