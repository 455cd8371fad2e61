#!/usr/bin/env python3
"""Time the OFFICIAL Alembic library (alembic3d 1.8.12) on the same data as `tress bench abc`:
read every P sample of the first curves object of INPUT (timed: the library's read, copied to
numpy as tress copies to a Vec), then write those frames as a new curves cache (timed: the
library's set() calls and archive close; the arrays are prepared before the clock starts).

Usage: abc_bench_official.py INPUT.abc OUT.abc   -> one JSON line
"""
import json
import os
import sys
import time

import numpy as np
import imath
from alembic3d import Abc, AbcGeom as G
from alembic3d.AbcCoreAbstract import TimeSampling

NEAR = Abc.ISampleSelector.TimeIndexType.kNearIndex


def first_curves(obj):
    for k in range(obj.getNumChildren()):
        ch = obj.getChild(k)
        if G.ICurves.matches(ch.getMetaData()):
            return ch
        found = first_curves(ch)
        if found is not None:
            return found
    return None


def main():
    src, out = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    arch = Abc.IArchive(src)
    schema = G.ICurves(first_curves(arch.getTop()), Abc.WrapExistingFlag.kWrapExisting).getSchema()
    ts = schema.getTimeSampling()
    n = schema.getNumSamples()
    read_s = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        frames = []
        for i in range(n):
            s = schema.getValue(Abc.ISampleSelector(float(ts.getSampleTime(i)), NEAR))
            frames.append(np.array(s.getPositions(), dtype=np.float32))
        read_s = min(read_s, time.perf_counter() - t0)
    counts = np.asarray(schema.getValue(Abc.ISampleSelector(float(ts.getSampleTime(0)), NEAR)).getCurvesNumVertices())
    read_bytes = sum(f.nbytes for f in frames)

    # Prepare the library's arrays before timing the write.
    nverts = imath.IntArray(len(counts))
    np.asarray(nverts)[:] = counts
    widths = imath.FloatArray(1)
    np.asarray(widths)[:] = 0.01
    pos = []
    for f in frames:
        a = imath.V3fArray(len(f))
        np.asarray(a)[:] = f
        pos.append(a)
    write_s = float("inf")
    for _ in range(runs):
        t0 = time.perf_counter()
        w = Abc.CreateArchiveWithInfo(out, 24.0, "bench", "bench")
        tsi = w.addTimeSampling(TimeSampling(1.0 / 24.0, 1.0 / 24.0))
        xf = G.OXform(w.getTop(), "groom", tsi)
        cv = G.OCurves(xf, "hair", tsi)
        cs = cv.getSchema()
        wp = G.OFloatGeomParamSample(widths, G.GeometryScope.kConstantScope)
        for a in pos:
            cs.set(G.OCurvesSchemaSample(a, nverts, G.CurveType.kLinear, G.CurvePeriodicity.kNonPeriodic, wp))
            xf.getSchema().set(G.XformSample())
        del cs, cv, xf, w
        write_s = min(write_s, time.perf_counter() - t0)
    size = os.path.getsize(out)
    os.remove(out)
    print(json.dumps({"read_s": read_s, "read_mb_per_s": read_bytes / 1e6 / read_s,
                      "write_s": write_s, "write_mb_per_s": size / 1e6 / write_s, "file_bytes": size}))


if __name__ == "__main__":
    main()
