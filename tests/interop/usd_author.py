#!/usr/bin/env python3
"""Author a small groom and head with Pixar's USD library (usd-core), as a binary .usdc and a text
.usda, and print what Pixar computes from them as JSON: each frame's world-space curve points
(UsdGeom.XformCache, every ancestor's transform ops), the vertex counts and widths, and the head
mesh's world-space points and face counts. tress must read the same values.

Usage: usd_author.py OUT_DIR
"""
import json
import math
import sys

from pxr import Gf, Sdf, Usd, UsdGeom, Vt

out = sys.argv[1]
FRAMES = [1001, 1002, 1003, 1004]


def author(path):
    stage = Usd.Stage.CreateNew(path)
    stage.SetMetadata("metersPerUnit", 0.01)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    stage.SetTimeCodesPerSecond(24)
    stage.SetStartTimeCode(FRAMES[0])
    stage.SetEndTimeCode(FRAMES[-1])
    root = UsdGeom.Xform.Define(stage, "/char")
    # Translate (animated), rotate XYZ, scale: three ops in one order.
    t = root.AddTranslateOp()
    for f in FRAMES:
        t.Set(Gf.Vec3d(1.5 + 0.25 * (f - FRAMES[0]), -2.0, 0.5), f)
    root.AddRotateXYZOp().Set(Gf.Vec3f(10.0, 35.0, -20.0))
    root.AddScaleOp().Set(Gf.Vec3f(1.2, 1.2, 1.2))
    stage.SetDefaultPrim(root.GetPrim())
    # A nested transform given as a matrix.
    inner = UsdGeom.Xform.Define(stage, "/char/groom")
    m = Gf.Matrix4d().SetRotate(Gf.Rotation(Gf.Vec3d(0, 1, 0), 15.0)) * Gf.Matrix4d().SetTranslate(Gf.Vec3d(0, 3, 0))
    inner.AddTransformOp().Set(m)
    curves = UsdGeom.BasisCurves.Define(stage, "/char/groom/hair")
    curves.CreateTypeAttr("linear")
    counts = [4, 3, 5]
    curves.CreateCurveVertexCountsAttr(Vt.IntArray(counts))
    n = sum(counts)
    pts = curves.CreatePointsAttr()
    for f in FRAMES:
        k = f - FRAMES[0]
        pts.Set(Vt.Vec3fArray([Gf.Vec3f(0.3 * i, 1.0 + 0.5 * i + 0.1 * k, math.sin(i + k)) for i in range(n)]), f)
    curves.CreateWidthsAttr(Vt.FloatArray([0.01 + 0.001 * i for i in range(n)]))
    curves.SetWidthsInterpolation(UsdGeom.Tokens.vertex)
    head = UsdGeom.Mesh.Define(stage, "/char/head")
    head.CreateFaceVertexCountsAttr(Vt.IntArray([4, 3]))
    head.CreateFaceVertexIndicesAttr(Vt.IntArray([0, 1, 2, 3, 1, 4, 2]))
    hp = head.CreatePointsAttr()
    for f in FRAMES:
        k = f - FRAMES[0]
        hp.Set(Vt.Vec3fArray([Gf.Vec3f(0, 0, 0), Gf.Vec3f(1, 0, 0), Gf.Vec3f(1, 1, 0.1 * k), Gf.Vec3f(0, 1, 0), Gf.Vec3f(2, 0.5, 0)]), f)
    stage.GetRootLayer().Save()
    return stage


def world(stage, path, attr_name, f):
    prim = stage.GetPrimAtPath(path)
    m = UsdGeom.XformCache(f).GetLocalToWorldTransform(prim)
    return [list(map(float, m.Transform(Gf.Vec3d(p)))) for p in prim.GetAttribute(attr_name).Get(f)]


result = {}
for name in ["groom.usdc", "groom.usda"]:
    stage = author(f"{out}/{name}")
    stage = Usd.Stage.Open(f"{out}/{name}")
    result[name] = {
        "frames": FRAMES,
        "counts": list(UsdGeom.BasisCurves(stage.GetPrimAtPath("/char/groom/hair")).GetCurveVertexCountsAttr().Get()),
        "widths": [float(w) for w in UsdGeom.BasisCurves(stage.GetPrimAtPath("/char/groom/hair")).GetWidthsAttr().Get()],
        "curves": [world(stage, "/char/groom/hair", "points", f) for f in FRAMES],
        "head": [world(stage, "/char/head", "points", f) for f in FRAMES],
    }
print(json.dumps(result))
