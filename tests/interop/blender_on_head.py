"""Does a strand cache land on its head in Blender? Import a head OBJ as an artist does (Blender's
OBJ importer turns Y-up files Z-up; `global_scale` 0.01 brings centimetres into a metre scene),
then each cache (Alembic or USD) into its own fresh scene with the head, and print as JSON, per
cache, the distance from every strand's root (world space) to the head's surface (median and
maximum, metres), the hair's and the head's highest points.

Usage: python blender_on_head.py HEAD.obj CACHE.abc|CACHE.usda …   (a python with `bpy`)
"""
import json
import statistics
import sys

import bpy
from mathutils.bvhtree import BVHTree

head, caches = sys.argv[1], sys.argv[2:]
out = {"blender": bpy.app.version_string}
for f in caches:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.wm.obj_import(filepath=head, global_scale=0.01)
    h = [o for o in bpy.data.objects if o.type == "MESH"][0]
    dg = bpy.context.evaluated_depsgraph_get()
    he = h.evaluated_get(dg)
    verts = [h.matrix_world @ v.co for v in he.data.vertices]
    tree = BVHTree.FromPolygons(verts, [list(p.vertices) for p in he.data.polygons])
    if f.endswith(".abc"):
        bpy.ops.wm.alembic_import(filepath=f)
    else:
        bpy.ops.wm.usd_import(filepath=f)
    dg = bpy.context.evaluated_depsgraph_get()
    dist, top = [], float("-inf")
    for o in bpy.data.objects:
        if o.type != "CURVES":
            continue
        e = o.evaluated_get(dg)
        pts = e.data.points
        for c in e.data.curves:
            root = o.matrix_world @ pts[c.first_point_index].position
            dist.append(tree.find_nearest(root)[3])
        top = max([top] + [(o.matrix_world @ p.position).z for p in pts])
    out[f] = {
        "curves": len(dist),
        "median_root_distance_m": statistics.median(dist) if dist else None,
        "max_root_distance_m": max(dist) if dist else None,
        "hair_top_z": top,
        "head_top_z": max(v.z for v in verts),
    }
print(json.dumps(out))
