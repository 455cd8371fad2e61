"""Import a USD strand cache into an empty Blender scene (bpy wheel, headless) as an artist
would (File > Import > USD), and print what came in as JSON: object types, curve and point
counts, attributes, the scene's frame range, and a positions hash of the object-space points at
the first and last frame (sha256 of little-endian float32 xyz, first 16 hex, as usd_inspect.py).

Usage: python blender_usd_import.py FILE.usda   (a python with `bpy`, e.g. from
../shared/tools/setup.sh --with-blender)
"""
import hashlib
import json
import struct
import sys

import bpy
path = sys.argv[1]
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.wm.usd_import(filepath=path)
out = {"blender": bpy.app.version_string, "objects": []}
sc = bpy.context.scene
out["frame_start"], out["frame_end"] = sc.frame_start, sc.frame_end
for f in [sc.frame_start, sc.frame_end]:
    sc.frame_set(f)
    dg = bpy.context.evaluated_depsgraph_get()
    for o in bpy.data.objects:
        e = o.evaluated_get(dg)
        rec = {"frame": f, "name": o.name, "type": o.type, "modifiers": [m.type for m in o.modifiers]}
        if o.type == "CURVES":
            d = e.data
            rec["curves"] = len(d.curves)
            rec["points"] = len(d.points)
            rec["attributes"] = sorted(a.name for a in d.attributes)
            co = [0.0] * (3 * len(d.points))
            d.attributes["position"].data.foreach_get("vector", co)
            # Blender is Z-up: the importer turns Y-up stages with the object's rotation.
            rec["rotation_x"] = round(o.matrix_world.to_euler().x, 4)
            h = hashlib.sha256()
            for i in range(0, len(co), 3):
                h.update(struct.pack("<3f", co[i], co[i + 1], co[i + 2]))
            rec["hash_object_space"] = h.hexdigest()[:16]
        out["objects"].append(rec)
print(json.dumps(out))
