"""bench/results stays evidence, not a second copy of the code: no template or
source copies in it, and its text lines under a tenth of the repository's
(binary files, .gz and .png, are not lines). A run that adds long logs keeps
summaries and gzips the raw files (bench/results/README.md says how).

Usage: python3 tests/test_results_budget.py [ROOT]; exit 0 or 1.
"""
import os
import subprocess
import sys

RESULTS = "bench/results/"
SOURCE_SUFFIXES = (".tpl", ".cu", ".cuh", ".c", ".h")
SHARE = 0.10


def text_lines(path):
    """Lines of a text file; None for a binary one (NUL bytes or not UTF-8)."""
    with open(path, "rb") as f:
        data = f.read()
    if b"\0" in data:
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return data.count(b"\n")


def main(root):
    files = subprocess.run(["git", "-C", root, "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split("\n")
    files = [f for f in files if f and os.path.isfile(os.path.join(root, f))]
    bad = [f for f in files if f.startswith(RESULTS) and f.endswith(SOURCE_SUFFIXES)]
    total = results = 0
    for f in files:
        n = text_lines(os.path.join(root, f))
        if n is None:
            continue
        total += n
        if f.startswith(RESULTS):
            results += n
    share = results / total if total else 0.0
    for f in bad:
        print(f"test_results_budget: {f}: a source copy in the results (name its commit instead)")
    print(f"test_results_budget: bench/results holds {results} of {total} text lines "
          f"({100 * share:.1f} %, limit {100 * SHARE:.0f} %)")
    if share >= SHARE:
        print("test_results_budget: over the limit: summarize long logs and gzip raw files")
    return 1 if bad or share >= SHARE else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")))
