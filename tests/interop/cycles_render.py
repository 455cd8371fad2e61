"""Render strand sets with Blender's Cycles (thick round curves, Principled Hair BSDF, a sun
and a plain world) through the orthographic camera tress uses, one PNG per set, so tress's
renderer can be compared with a production path tracer on the same pictures.

Usage: python cycles_render.py SCENE.json   (a python with `bpy`: ../shared/tools/setup.sh
--with-blender). SCENE.json: {"width", "height", "samples", "camera": {"center", "right", "up",
"forward", "scale"}, "light", "background", "hair", "out_dir", "renders": [{"name", "points":
[x, y, z, ...], "counts": [...], "radius"}]}. Prints {"blender", "files": [...]} as JSON.
"""
import json
import os
import sys

import bpy
from mathutils import Matrix, Vector

scene_file = sys.argv[-1]
with open(scene_file) as f:
    s = json.load(f)
files = []
for r in s["renders"]:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    sc = bpy.context.scene
    sc.render.engine = "CYCLES"
    sc.cycles.device = "CPU"
    sc.cycles.samples = s["samples"]
    sc.cycles.use_denoising = False
    sc.cycles.seed = 1
    sc.render.resolution_x, sc.render.resolution_y = s["width"], s["height"]
    sc.render.resolution_percentage = 100
    sc.render.image_settings.file_format = "PNG"
    sc.render.image_settings.color_mode = "RGB"
    sc.view_settings.view_transform = "Standard"
    sc.render.threads_mode = "FIXED"
    sc.render.threads = 2
    if hasattr(sc, "cycles_curves"):
        sc.cycles_curves.shape = "THICK"
    # The world: the background colour seen by the camera; as light, tress's ambient share of it.
    world = bpy.data.worlds.new("w")
    world.use_nodes = True
    wt = world.node_tree
    seen = wt.nodes["Background"]
    seen.inputs[0].default_value = (*s["background"], 1.0)
    seen.inputs[1].default_value = 1.0
    lighting = wt.nodes.new("ShaderNodeBackground")
    lighting.inputs[0].default_value = (*s["background"], 1.0)
    lighting.inputs[1].default_value = s.get("ambient", 0.3)
    path = wt.nodes.new("ShaderNodeLightPath")
    mix = wt.nodes.new("ShaderNodeMixShader")
    wt.links.new(path.outputs["Is Camera Ray"], mix.inputs[0])
    wt.links.new(lighting.outputs[0], mix.inputs[1])
    wt.links.new(seen.outputs[0], mix.inputs[2])
    wt.links.new(mix.outputs[0], wt.nodes["World Output"].inputs["Surface"])
    sc.world = world
    # The hair.
    counts = r["counts"]
    curves = bpy.data.hair_curves.new("hair")
    curves.add_curves(counts)
    curves.attributes["position"].data.foreach_set("vector", r["points"])
    if "radius" not in curves.attributes:
        curves.attributes.new("radius", "FLOAT", "POINT")
    curves.attributes["radius"].data.foreach_set("value", [r["radius"]] * len(curves.points))
    curves.set_types(type="POLY")
    obj = bpy.data.objects.new("hair", curves)
    sc.collection.objects.link(obj)
    mat = bpy.data.materials.new("hair")
    mat.use_nodes = True
    nt = mat.node_tree
    for n in list(nt.nodes):
        nt.nodes.remove(n)
    hair = nt.nodes.new("ShaderNodeBsdfHairPrincipled")
    hair.parametrization = "COLOR"
    hair.inputs["Color"].default_value = (*s["hair"], 1.0)
    out = nt.nodes.new("ShaderNodeOutputMaterial")
    nt.links.new(hair.outputs[0], out.inputs["Surface"])
    curves.materials.append(mat)
    # The key light: a sun shining along −light.
    sun = bpy.data.objects.new("sun", bpy.data.lights.new("sun", "SUN"))
    sun.data.energy = 3.0
    sun.rotation_euler = Vector(s["light"]).to_track_quat("Z", "Y").to_euler()
    sc.collection.objects.link(sun)
    # tress's orthographic camera: x right, y up, looking along `forward`.
    c = s["camera"]
    right, up, fwd = Vector(c["right"]), Vector(c["up"]), Vector(c["forward"])
    loc = Vector(c["center"]) - fwd * 1000.0
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    cam.data.type = "ORTHO"
    cam.data.ortho_scale = max(s["width"], s["height"]) / c["scale"]
    cam.data.clip_start = 1.0
    cam.data.clip_end = 5000.0
    cam.matrix_world = Matrix(
        (
            (right.x, up.x, -fwd.x, loc.x),
            (right.y, up.y, -fwd.y, loc.y),
            (right.z, up.z, -fwd.z, loc.z),
            (0.0, 0.0, 0.0, 1.0),
        )
    )
    sc.collection.objects.link(cam)
    sc.camera = cam
    path = os.path.join(s["out_dir"], r["name"] + ".png")
    sc.render.filepath = path
    bpy.ops.render.render(write_still=True)
    files.append(path)
print(json.dumps({"blender": bpy.app.version_string, "files": files}))
