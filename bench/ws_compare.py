#!/usr/bin/env python3
"""The warp-specialized forward (ws tiles) against the wgmma default it would
replace and PyTorch SDPA flash/cuDNN, from one call's fa2_bench --json and
sdpa_bench.py --json (bench/gpu_run.sh ws).

    python3 bench/ws_compare.py FA2.json SDPA.json [--peak 989] [--measured-peak 800]

Per head dim, causal flag, N and mode: the best ws tile's TFLOP/s (and which),
the wgmma default's ("wg" names, one tile per key), flash and cuDNN, ws/wg and
ws/cuDNN, and ws as % of the H100's dense bf16 peak (nominal and the ~800
TFLOP/s a plain GEMM reaches). Markdown."""
import argparse, json, re


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fa2")
    ap.add_argument("sdpa")
    ap.add_argument("--peak", type=float, default=989.0)
    ap.add_argument("--measured-peak", type=float, default=800.0)
    args = ap.parse_args()
    sdpa = json.load(open(args.sdpa))
    ref = {(r["backend"], r["head_dim"], r["causal"], r["seqlen"]): r["tflops"]
           for r in sdpa["rows"] if r.get("pass_", "fwd") == "fwd"}
    best = {}  # (family, mode, d, causal, N) -> (tflops, tile)
    for r in json.load(open(args.fa2)):
        if r.get("pass", "fwd") != "fwd":
            continue
        m = re.search(r"_(m\d+n\d+w\d+s\d+(wg|ws)?)_(none|paper|robust)", r["variant"])
        family = m.group(2) or "sync"
        key = (family, m.group(3), r["head_dim"], r["causal"], r["seqlen"])
        if r["tflops"] > best.get(key, (0, ""))[0]:
            best[key] = (r["tflops"], m.group(1))
    hdr = ["d", "causal", "N", "mode", "ws", "ws tile", "wg", "flash", "cudnn", "ws/wg", "ws/cudnn",
           f"% of {args.peak:.0f}", f"% of {args.measured_peak:.0f}"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "|".join("---" for _ in hdr) + "|")
    rows = sorted({k[1:] for k in best if k[0] == "ws"}, key=lambda k: (k[1], k[2], k[3], k[0]))
    for mode, d, causal, n in rows:
        ws, tile = best[("ws", mode, d, causal, n)]
        wg = best.get(("wg", mode, d, causal, n), (0, ""))[0]
        fl, cu = ref.get(("flash", d, causal, n), 0), ref.get(("cudnn", d, causal, n), 0)
        cells = [str(d), "yes" if causal else "no", str(n), mode, f"{ws:.1f}", tile, f"{wg:.1f}",
                 f"{fl:.1f}", f"{cu:.1f}", f"{ws / wg:.2f}" if wg else "-",
                 f"{ws / cu:.2f}" if cu else "-", f"{100 * ws / args.peak:.0f}",
                 f"{100 * ws / args.measured_peak:.0f}"]
        print("| " + " | ".join(cells) + " |")
    print(f"\n(device: {sdpa.get('device')}, torch {sdpa.get('torch')})")


if __name__ == "__main__":
    main()
