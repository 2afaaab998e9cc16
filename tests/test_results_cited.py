"""Every result the docs cite exists: README.md, bench/NOTES.md, lab/README.md,
ARCHITECTURE.md and bench/results/README.md name runs as bench/results/<path>
or, inside backquotes, relative to a results folder (`suite_run3/check.txt`,
`2026-11-23_h200/wgmma_run2b/`). Each such path must match a file or folder
under bench/results (`...` stands for any folders, `{2..6}` for one digit of
the range, `*` as in the shell). Bare file names (`tune.json`) are output
names of commands, not citations, and `git show COMMIT:bench/results/...`
names a file in history: neither is checked.

Usage: python3 tests/test_results_cited.py [ROOT]; exit 0 or 1, one line per
missing path with the file and line that cite it.
"""
import fnmatch
import os
import re
import subprocess
import sys

DOCS = ["README.md", "bench/NOTES.md", "lab/README.md", "ARCHITECTURE.md",
        "bench/results/README.md"]
RESULTS = "bench/results"


def results_paths(root):
    """Every file and folder under bench/results, relative to it, folders with
    '/': the tracked ones in a git checkout (a stray local file does not count)."""
    try:
        files = subprocess.run(["git", "-C", root, "ls-files", "--", RESULTS], check=True,
                               capture_output=True, text=True).stdout.split("\n")
        files = [f[len(RESULTS) + 1:] for f in files if f]
    except (OSError, subprocess.CalledProcessError):
        base = os.path.join(root, RESULTS)
        files = [os.path.relpath(os.path.join(d, f), base).replace(os.sep, "/")
                 for d, _, fs in os.walk(base) for f in fs]
    out = set(files)
    for f in files:
        parts = f.split("/")
        for i in range(1, len(parts)):
            out.add("/".join(parts[:i]) + "/")
    return out


def pattern(path):
    """A cited path as an fnmatch pattern over results paths."""
    p = re.sub(r"\{(\d)\.\.(\d)\}", r"[\1-\2]", path)
    return p.replace("...", "*")


def cited(text):
    """(line number, path relative to bench/results, absolute?) of each citation."""
    for n, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"bench/results/([^\s`'\")\],;]*)", line):
            if re.search(r"[0-9a-f]{7,40}:$", line[:m.start()]):
                continue  # git show COMMIT:bench/results/...: in history, not here
            p = m.group(1).rstrip(".:")
            if p and "<" not in p:  # bench/results/<date>_<device>/: a form, not a path
                yield n, p, True
        for m in re.finditer(r"`([^`\s]+)`", line):
            t = m.group(1).rstrip(".:,")
            if t.startswith("bench/") or "/" not in t or t.startswith(("/", "$", "<", "DIR")):
                continue
            yield n, t, False


def main(root):
    have = results_paths(root)
    folders = {p.rstrip("/").split("/")[-1] for p in have if p.endswith("/")}
    missing = []
    checked = 0
    for doc in DOCS:
        path = os.path.join(root, doc)
        if not os.path.isfile(path):
            continue
        for n, p, absolute in cited(open(path, encoding="utf-8").read()):
            first = p.split("/")[0]
            if not absolute and first not in folders and not re.search(r"\{\d\.\.\d\}", first):
                continue  # not a results path: src/x.cu, gen/variant.lua, ...
            pat = pattern(p)
            # relative citations may start at any results folder
            pats = [pat, pat + "/"] if absolute else [pat, pat + "/", "*/" + pat, "*/" + pat + "/"]
            checked += 1
            if not any(fnmatch.fnmatchcase(h, q) for h in have for q in pats):
                missing.append(f"{doc}:{n}: {'bench/results/' if absolute else ''}{p} does not exist")
    for m in missing:
        print("test_results_cited: missing:", m)
    if checked < 20:
        print(f"test_results_cited: only {checked} citations found: the parser is broken")
        return 1
    if not missing:
        print(f"test_results_cited: {checked} cited results paths in {len(DOCS)} docs all exist")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
