#!/usr/bin/env python3
"""The loops of a cubin's SASS, counted by opcode: static numbers without a GPU.

  sass_loops.py CUBIN                 every loop (a backward branch) that issues an MMA
  sass_loops.py CUBIN_A CUBIN_B       the same for both, then the opcodes whose counts differ:
                                      in the whole kernels and in their innermost MMA loops
  sass_loops.py --all CUBIN           every loop, MMA or not
  sass_loops.py --by-line FROM TO CUBIN
                                      instructions per source line, for the lines from the
                                      first that contains FROM to the next that contains TO
                                      (the source: fa2 build's src/NAME.cu beside sm_XX/)

Loops are printed innermost first: address range, instructions, MMAs (HGMMA or
HMMA), MUFU, shuffles, shared-memory instructions, global reductions and the source lines they
come from (fa2 build's cubins carry -lineinfo). A loop is the code from a
backward branch's target to the branch, so an outer loop's range may take in
code the compiler placed there (an epilogue). Two cubins: the counts that differ,
so a template change can be weighed before any GPU run (bench/NOTES.md
"Session 33").

nvdisasm comes from $NVDISASM, PATH, the CUDA toolkit, or the PyPI wheel
nvidia-cuda-nvdisasm (`pip install nvidia-cuda-nvdisasm`; a CUDA toolkit
installed without its binary utilities has no nvdisasm)."""
import argparse
import collections
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig


def find_nvdisasm():
    cands = [os.environ.get("NVDISASM"), shutil.which("nvdisasm")]
    for root in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if root:
            cands.append(os.path.join(root, "bin", "nvdisasm"))
    site = sysconfig.get_paths()["purelib"]
    cands += sorted(glob.glob(os.path.join(site, "nvidia", "*", "bin", "nvdisasm")), reverse=True)
    for c in cands:
        if c and os.access(c, os.X_OK):
            return c
    sys.exit("sass_loops.py: no nvdisasm (set NVDISASM, or `pip install nvidia-cuda-nvdisasm`)")


INSTR = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LINE = re.compile(r'\s*//## File ".*", line (\d+)')
LABEL = re.compile(r"\s*\.L_x_(\d+):")
BRANCH = re.compile(r"\bBRA\b.*`\(\.L_x_(\d+)\)")


def opcode(text):
    words = text.split()
    return words[1] if words[0].startswith("@") else words[0]


def parse(path, nvdisasm):
    """[(address, text, source line)] and {label: address} of the cubin's code."""
    out = subprocess.run([nvdisasm, "-c", "-g", path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"sass_loops.py: nvdisasm failed on {path}: {out.stderr.strip()[:300]}")
    ins, labels, pending, line = [], {}, [], None
    for raw in out.stdout.splitlines():
        m = LINE.match(raw)
        if m:
            line = int(m.group(1))
            continue
        m = LABEL.match(raw)
        if m:
            pending.append(m.group(1))
            continue
        m = INSTR.match(raw)
        if m:
            addr = int(m.group(1), 16)
            for lab in pending:
                labels[lab] = addr
            pending = []
            ins.append((addr, m.group(2), line))
    return ins, labels


def loops(ins, labels):
    """Every backward branch's body as (start, end, [instructions]), innermost (smallest) first."""
    found = []
    for addr, text, _ in ins:
        m = BRANCH.search(text)
        if m and labels.get(m.group(1), addr + 1) <= addr:
            start = labels[m.group(1)]
            found.append((start, addr, [x for x in ins if start <= x[0] <= addr]))
    return sorted(found, key=lambda f: len(f[2]))


def classes(body):
    ops = collections.Counter(opcode(t) for _, t, _ in body)
    pick = lambda pred: sum(n for op, n in ops.items() if pred(op))
    return {
        "mma": pick(lambda op: op.startswith(("HGMMA", "HMMA"))),
        "mufu": pick(lambda op: op.startswith("MUFU")),
        "shfl": pick(lambda op: op.startswith("SHFL")),
        "smem": pick(lambda op: op.startswith(("LDS", "STS", "LDSM", "STSM"))),
        "red": pick(lambda op: op.startswith(("RED", "ATOM"))),
    }, ops


def show(path, nvdisasm, every):
    """Prints the cubin's loops; returns them (start, end, opcode counts, size) and its instructions."""
    ins, labels = parse(path, nvdisasm)
    print(f"{path}: {len(ins)} instructions")
    kept = []
    for start, end, body in loops(ins, labels):
        c, ops = classes(body)
        if not every and c["mma"] == 0:
            continue
        lines = [ln for _, _, ln in body if ln]
        src = f"lines {min(lines)}-{max(lines)}" if lines else ""
        print(f"  {start:05x}-{end:05x} {len(body):5d} instr  mma {c['mma']:3d}  mufu {c['mufu']:3d}  "
              f"shfl {c['shfl']:3d}  smem {c['smem']:3d}  red {c['red']:3d}  {src}")
        kept.append((start, end, ops, len(body)))
    return kept, ins


def by_line(path, nvdisasm, first, last):
    """Instructions per source line between the lines holding `first` and `last`."""
    name = os.path.splitext(os.path.basename(path))[0]
    src_path = os.path.join(os.path.dirname(os.path.abspath(path)), os.pardir, "src", name + ".cu")
    try:
        src = open(src_path).read().splitlines()
    except OSError as e:
        sys.exit(f"sass_loops.py: --by-line needs the source beside the cubin: {e}")
    try:
        lo = next(i for i, text in enumerate(src) if first in text)
        hi = next(i for i in range(lo, len(src)) if last in src[i])
    except StopIteration:
        sys.exit(f"sass_loops.py: no line with {first!r} followed by one with {last!r} in {src_path}")
    count, ops = collections.Counter(), collections.defaultdict(collections.Counter)
    for _, text, line in parse(path, nvdisasm)[0]:
        count[line] += 1
        ops[line][opcode(text).split(".")[0]] += 1
    total = 0
    for line in range(lo + 1, hi + 2):
        if count[line]:
            total += count[line]
            top = ", ".join(f"{op} {n}" for op, n in ops[line].most_common(4))
            print(f"{line:5d} {count[line]:5d}  {src[line - 1].strip()[:64]:64s}  {top}")
    print(f"{total} instructions from source lines {lo + 1}-{hi + 1} (inlined helpers count at their own lines)")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # (piped into head)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("cubins", nargs="+", help="one cubin, or two to compare")
    ap.add_argument("--all", action="store_true", help="every loop, not only those that issue MMAs")
    ap.add_argument("--by-line", nargs=2, metavar=("FROM", "TO"), help="instructions per source line")
    a = ap.parse_args()
    if len(a.cubins) > 2 or (a.by_line and len(a.cubins) > 1):
        ap.error("one cubin, or two to compare (--by-line: one)")
    nvdisasm = find_nvdisasm()
    if a.by_line:
        by_line(a.cubins[0], nvdisasm, *a.by_line)
        return
    shown = [show(p, nvdisasm, a.all) for p in a.cubins]
    if len(shown) < 2:
        return
    kept = [loops_of for loops_of, _ in shown]
    whole = [collections.Counter(opcode(t) for _, t, _ in ins) for _, ins in shown]
    print("\nthe whole kernels: opcodes that differ")
    print_diff(whole[0], whole[1])
    if kept[0] and kept[1]:  # the innermost MMA loops (their code layout may differ past them)
        (sa, ea, oa, na), (sb, eb, ob, nb) = kept[0][0], kept[1][0]
        print(f"\nthe innermost loops, {sa:05x}-{ea:05x} ({na}) and {sb:05x}-{eb:05x} ({nb}): opcodes that differ")
        print_diff(oa, ob)


def print_diff(a, b):
    diff = [(op, a[op], b[op]) for op in sorted(set(a) | set(b)) if a[op] != b[op]]
    for op, x, y in diff:
        print(f"  {op:36s} {x:5d} {y:5d}")
    if not diff:
        print("  none")

if __name__ == "__main__":
    main()
