#!/usr/bin/env python3
"""Do two `fa2 build -o DIR` outputs hold the same machine code?

Compares, per arch folder and cubin, the sections that decide what runs: the
SASS (.text.*), the kernels' metadata (.nv.info*: registers, parameters,
barriers), shared-memory and constant sections. Symbols, string tables and
debug sections are left out. A template refactor whose cubins all compare
equal cannot change speed or results, so it needs no GPU A/B:

    bin/fa2 build specs/full.lua --arch sm_80,sm_90 -o /tmp/a --templates OLD_TEMPLATES
    bin/fa2 build specs/full.lua --arch sm_80,sm_90 -o /tmp/b
    tools/same_machine_code.py [--text] /tmp/a /tmp/b

With --text, only the SASS is compared: for a change of the kernels' argument
block (a field added to fa2_params.h changes every kernel's parameter size in
.nv.info and .nv.constant0, not its instructions).

Exit 0 when every cubin matches (and both sides have the same cubins), 1 when
not (each difference named), 2 on bad usage.
"""
import os
import struct
import sys

KEPT = (".text", ".nv.info", ".nv.shared", ".nv.constant")
SHT_NOBITS = 8


def sections(path):
    """{name: bytes} of a 64-bit ELF's sections named KEPT* (NOBITS: their size)."""
    with open(path, "rb") as f:
        d = f.read()
    if d[:4] != b"\x7fELF" or d[4] != 2:
        raise ValueError(f"{path}: not a 64-bit ELF (cubin)")
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    names = hdrs[shstrndx][4]
    out = {}
    for name_off, kind, _, _, off, size, *_ in hdrs:
        name = d[names + name_off:d.index(b"\0", names + name_off)].decode()
        if name.startswith(KEPT):
            out[name] = ("nobits", size) if kind == SHT_NOBITS else d[off:off + size]
    return out


def cubins(root):
    return {os.path.join(a, f) for a in os.listdir(root) if os.path.isdir(os.path.join(root, a))
            for f in os.listdir(os.path.join(root, a)) if f.endswith(".cubin")}


def main(argv):
    text_only = "--text" in argv[1:]
    argv = [x for x in argv if x != "--text"]
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 and argv[1] in ("-h", "--help") else 2
    a, b = argv[1], argv[2]
    ca, cb = cubins(a), cubins(b)
    bad = [f"only in {a if f in ca else b}: {f}" for f in sorted(ca ^ cb)]
    same = 0
    for f in sorted(ca & cb):
        sa, sb = sections(os.path.join(a, f)), sections(os.path.join(b, f))
        if text_only:
            sa, sb = ({k: v for k, v in x.items() if k.startswith(".text")} for x in (sa, sb))
        if sa == sb:
            same += 1
        else:
            diff = sorted(k for k in set(sa) | set(sb) if sa.get(k) != sb.get(k))
            bad.append(f"differs: {f} ({', '.join(diff[:4])})")
    for line in bad:
        print("same_machine_code:", line)
    print(f"same_machine_code: {same} cubins with the same machine code, {len(bad)} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
