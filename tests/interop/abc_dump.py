#!/usr/bin/env python3
"""Dump what the OFFICIAL Alembic library (PyPI alembic3d = PyAlembic 1.8.12) reads from an
archive, as JSON, so tress's tests can compare values with tress's own reader and writer.

Arrays are reported as sha256 (hex) of their little-endian bytes plus their length, so the
comparison is bit-exact without printing megabytes. Usage: abc_dump.py FILE.abc
"""
import hashlib
import json
import sys

import numpy as np
from alembic3d import Abc, AbcGeom as G

NEAR = Abc.ISampleSelector.TimeIndexType.kNearIndex


def sel(owner, i):
    # ISampleSelector(int) binds to the time overload in PyAlembic: select by exact time.
    ts = owner.getTimeSampling()
    s = Abc.ISampleSelector(float(ts.getSampleTime(i)), NEAR)
    assert s.getIndex(ts, owner.getNumSamples()) == i
    return s


def digest(arr, dtype):
    a = np.ascontiguousarray(np.asarray(arr), dtype=dtype)
    return {"sha256": hashlib.sha256(a.tobytes()).hexdigest(), "len": int(a.size)}


SCOPES = {
    G.GeometryScope.kConstantScope: "con",
    G.GeometryScope.kUniformScope: "uni",
    G.GeometryScope.kVaryingScope: "var",
    G.GeometryScope.kVertexScope: "vtx",
    G.GeometryScope.kFacevaryingScope: "fvr",
}

POD_DTYPE = {
    "bool_t": "u1", "uint8_t": "u1", "int8_t": "i1", "uint16_t": "<u2", "int16_t": "<i2",
    "uint32_t": "<u4", "int32_t": "<i4", "uint64_t": "<u8", "int64_t": "<i8",
    "float16_t": "<f2", "float32_t": "<f4", "float64_t": "<f8",
}


def geom_param(p, i):
    """Values of a GeomParam sample, expanded, with scope."""
    s = p.getExpandedValue(sel(p, i)) if p.getNumSamples() else None
    if s is None:
        return None
    return s.getVals(), SCOPES.get(s.getScope(), "unk")


def arb_params(arb):
    out = []
    if arb is None or not arb.valid():
        return out
    for k in range(arb.getNumProperties()):
        h = arb.getPropertyHeader(k)
        name = h.getName()
        dt = h.getDataType()
        pod = str(dt.getPod()).split(".")[-1]
        md = h.getMetaData().serialize()
        entry = {"name": name, "metadata": md, "extent": int(dt.getExtent())}
        if h.isArray():
            prop = Abc.IArrayProperty(arb, name)
            entry["samples"] = []
            for i in range(prop.getNumSamples()):
                v = prop.getValue(sel(prop, i))
                if pod == "kStringPOD":
                    entry["samples"].append({"strings": [str(x) for x in v]})
                    continue
                podname = {"kInt8POD": "int8_t", "kInt16POD": "int16_t", "kInt32POD": "int32_t",
                           "kFloat32POD": "float32_t", "kUint8POD": "uint8_t", "kUint32POD": "uint32_t",
                           "kBooleanPOD": "bool_t", "kFloat64POD": "float64_t"}.get(pod, pod)
                entry["samples"].append(digest(v, POD_DTYPE.get(podname, "<f4")))
            entry["pod"] = pod
        out.append(entry)
    return out


def curves(obj):
    c = G.ICurves(obj, Abc.WrapExistingFlag.kWrapExisting)
    s = c.getSchema()
    d = {"samples": [], "numSamples": s.getNumSamples(),
         "timeSampling": {"tpc": s.getTimeSampling().getTimeSamplingType().getTimePerCycle(),
                          "start": s.getTimeSampling().getSampleTime(0)}}
    for i in range(s.getNumSamples()):
        smp = s.getValue(sel(s, i))
        e = {
            "P": digest(smp.getPositions(), "<f4"),
            "nVertices": [int(x) for x in np.asarray(smp.getCurvesNumVertices())],
            "type": str(smp.getType()).split(".")[-1],
            "basis": str(smp.getBasis()).split(".")[-1],
            "wrap": str(smp.getWrap()).split(".")[-1],
        }
        v = smp.getVelocities()
        e["velocities"] = digest(v, "<f4") if v is not None and len(v) else None
        e["selfBounds"] = [[float(smp.getSelfBounds().min()[k]) for k in range(3)],
                           [float(smp.getSelfBounds().max()[k]) for k in range(3)]]
        w = s.getWidthsParam()
        if w.valid():
            vals, scope = geom_param(w, i)
            e["width"] = dict(digest(vals, "<f4"), scope=scope)
        u = s.getUVsParam()
        if u.valid():
            vals, scope = geom_param(u, i)
            e["uv"] = dict(digest(vals, "<f4"), scope=scope)
        d["samples"].append(e)
    d["arbGeomParams"] = arb_params(s.getArbGeomParams())
    return d


def xform(obj):
    x = G.IXform(obj, Abc.WrapExistingFlag.kWrapExisting)
    s = x.getSchema()
    d = {"numSamples": s.getNumSamples(), "matrices": [], "inherits": []}
    for i in range(s.getNumSamples()):
        smp = s.getValue(sel(s, i))
        m = smp.getMatrix()
        d["matrices"].append([[float(m[r][c]) for c in range(4)] for r in range(4)])
        d["inherits"].append(bool(smp.getInheritsXforms()))
    d["arbGeomParams"] = arb_params(s.getArbGeomParams())
    return d


def polymesh(obj):
    m = G.IPolyMesh(obj, Abc.WrapExistingFlag.kWrapExisting)
    s = m.getSchema()
    d = {"numSamples": s.getNumSamples(), "samples": []}
    for i in range(s.getNumSamples()):
        smp = s.getValue(sel(s, i))
        d["samples"].append({
            "P": digest(smp.getPositions(), "<f4"),
            "faceCounts": digest(smp.getFaceCounts(), "<i4"),
            "faceIndices": digest(smp.getFaceIndices(), "<i4"),
        })
    return d


def walk(obj, out):
    for k in range(obj.getNumChildren()):
        ch = obj.getChild(k)
        md = ch.getMetaData()
        e = {"path": ch.getFullName(), "schema": md.get("schema")}
        if G.ICurves.matches(md):
            e["curves"] = curves(ch)
        elif G.IXform.matches(md):
            e["xform"] = xform(ch)
        elif G.IPolyMesh.matches(md):
            e["polymesh"] = polymesh(ch)
        out.append(e)
        walk(ch, out)


def main():
    arch = Abc.IArchive(sys.argv[1])
    info = dict(Abc.GetArchiveInfo(arch))
    tss = []
    for i in range(arch.getNumTimeSamplings()):
        ts = arch.getTimeSampling(i)
        tt = ts.getTimeSamplingType()
        tss.append({"tpc": tt.getTimePerCycle(), "times": [float(t) for t in ts.getStoredTimes()],
                    "maxSamples": int(arch.getMaxNumSamplesForTimeSamplingIndex(i))})
    objects = []
    walk(arch.getTop(), objects)
    json.dump({"info": {k: (v if isinstance(v, (int, float, str)) else str(v)) for k, v in info.items()},
               "timeSamplings": tss, "objects": objects}, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
