#!/usr/bin/env python3
"""Open two USD layers with Pixar's Sdf (usd-core) and say whether they hold the same data: each
is exported as text by Pixar's own writer and the two texts compared. Prints JSON: the formats
Pixar detected, whether the texts are equal, and the first lines that differ.

Usage: usd_same_layer.py A B
"""
import difflib
import json
import sys

from pxr import Sdf

layers = [Sdf.Layer.FindOrOpen(p) for p in sys.argv[1:3]]
if any(l is None for l in layers):
    print(json.dumps({"error": "a layer did not open"}))
    sys.exit(1)
texts = [l.ExportToString().splitlines() for l in layers]
diff = list(difflib.unified_diff(texts[0], texts[1], lineterm="", n=0))[:20]
print(json.dumps({
    "formats": [l.GetFileFormat().formatId for l in layers],
    "same": texts[0] == texts[1],
    "lines": len(texts[0]),
    "diff": [d[:200] for d in diff],
}))
