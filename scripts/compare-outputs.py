#!/usr/bin/env python3
"""Compares the output folders of two runs of the same job (or of every example job: give the
two `out/` folders) file by file, for refactors that must not change results.

Every file must be in both folders and byte-identical, except what records the build or the
clock: stage records (`.tress/`), the build and commit strings (masked), and timings — JSON keys
naming seconds or milliseconds (anywhere), the time columns of `parts/times.*.json` and of the
two-way figures `guides.<row>.json`, the summary inside `.tnn` model files, the report's
stage table and time section, and the times in a batch's `batch.md`; `inputs.sha256` cache keys
(which hash the build) are left out. The checksums of `.tskin` files (which cover the build string) are left out too. Everything
else (caches, Alembic/USD/PLY files, models' weights,
metrics, previews, pictures) is compared byte for byte.

    scripts/compare-outputs.py BEFORE/out AFTER/out    # exit 0: identical
"""
import json
import os
import re
import struct
import sys

BUILD = re.compile(rb"build [0-9a-f]{32}")
COMMIT = re.compile(rb"commit [0-9a-f]{7,40}(\+dirty)?")
TIME_KEYS = re.compile(r"second|_ms$|^ms_|ms_per|_s$")
# Columns of seconds in files that have them under plain names.
ROW_TIMES = {"grouping", "interpolation", "projection", "transform", "correction"}


def drop_times(v, extra=()):
    if isinstance(v, dict):
        return {k: drop_times(x, extra) for k, x in v.items() if not TIME_KEYS.search(k) and k not in extra}
    if isinstance(v, list):
        return [drop_times(x, extra) for x in v]
    return v


def masked(b):
    return COMMIT.sub(b"commit C", BUILD.sub(b"build B", b))


def tnn(b):
    """A .tnn file with its header's timings dropped (the weights compared byte for byte)."""
    n = struct.unpack_from("<I", b, 12)[0]
    header = json.loads(masked(b[16 : 16 + n]))
    return json.dumps(drop_times(header), sort_keys=True).encode() + b[16 + n : -4]


def report_md(b):
    out, skip = [], False
    for line in masked(b).decode().splitlines():
        if line.startswith("## "):
            skip = line in ("## Stages", "## Time per frame")
        if not skip and not line.startswith("| tress |"):
            out.append(line)
    return "\n".join(out).encode()


def batch_md(b):
    """A batch summary with its timings (`38.9 s`, `0.044 ms per predicted frame`) masked."""
    return re.sub(rb"\d+(\.\d+)? m?s\b", b"T", masked(b))


def normal(rel, b):
    name = os.path.basename(rel)
    if name == "inputs.sha256":
        # A cache key over the inputs and the build (like the stage records).
        return b""
    if name == "batch.md":
        return batch_md(b)
    if rel.endswith(".tnn"):
        return tnn(b)
    if name == "report.md":
        return report_md(b)
    if rel.endswith(".tskin"):
        # The metadata names the build; the checksum after it covers it.
        return masked(b)[:-4]
    if rel.endswith(".json"):
        v = json.loads(masked(b))
        extra = ROW_TIMES if name.startswith("times.") or re.match(r"guides\..*\.json$", name) else ()
        if name == "report.json":
            v = {k: x for k, x in v.items() if k not in ("stages", "tress", "tress_build")}
        return json.dumps(drop_times(v, extra), sort_keys=True).encode()
    return masked(b)


def files(root):
    found = set()
    for dp, dn, fn in os.walk(root):
        dn[:] = [d for d in dn if d != ".tress" and d != "logs"]
        for f in fn:
            if f.endswith(".ckpt") or f.endswith(".tmp"):
                continue
            found.add(os.path.relpath(os.path.join(dp, f), root))
    return found


def main():
    a, b = sys.argv[1], sys.argv[2]
    fa, fb = files(a), files(b)
    bad = 0
    for rel in sorted(fa ^ fb):
        print(f"only in {'before' if rel in fa else 'after'}: {rel}")
        bad += 1
    same = 0
    for rel in sorted(fa & fb):
        x = normal(rel, open(os.path.join(a, rel), "rb").read())
        y = normal(rel, open(os.path.join(b, rel), "rb").read())
        if x != y:
            print(f"differs: {rel}")
            bad += 1
        else:
            same += 1
    print(f"{same} files identical, {bad} differences")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
