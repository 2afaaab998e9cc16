"""fa2_bench --json output, read once for the bench scripts."""
import json
import statistics


def median_ms(paths):
    """{(variant, pass, seqlen): median ms over every file that timed it}."""
    runs = {}
    for path in paths:
        with open(path) as f:
            for r in json.load(f):
                runs.setdefault((r["variant"], r["pass"], r["seqlen"]), []).append(r["ms"])
    return {k: statistics.median(v) for k, v in runs.items()}
