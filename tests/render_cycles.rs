//! tress's strand renderer against a production path tracer: the same caches of several
//! methods rendered by tress and by Blender's Cycles (thick round curves, Principled Hair
//! BSDF, same orthographic camera, key light direction and widths) must rank the methods'
//! picture PSNR against the ground truth's in the same order.

mod common;

use std::path::Path;
use std::process::Command;

use glam::Vec3;
use serde_json::json;
use tress::formats::tcache::TcacheReader;
use tress::metrics::psnr;
use tress::render::camera::{Camera, View};
use tress::render::film::Film;
use tress::render::hair::{DEFAULT_WIDTH, draw_hair, preview_width_scale};
use tress::render::shade::Lighting;

fn last_frame(path: &Path) -> (Vec<Vec3>, Vec<u32>) {
    let mut r = TcacheReader::open(path).unwrap();
    let counts = r.header.rest.counts.clone();
    let n = r.len() - 1;
    (
        r.frame(n).unwrap().into_iter().map(Vec3::from_array).collect(),
        counts,
    )
}

fn rmse(a: &[Vec3], b: &[Vec3]) -> f64 {
    (a.iter()
        .zip(b)
        .map(|(p, q)| p.distance_squared(*q) as f64)
        .sum::<f64>()
        / a.len() as f64)
        .sqrt()
}

/// Renders the last frame of the ground truth, of `methods` (a finished job's row caches in
/// `out/parts/METHOD.RANGE.tcache`) and of the rest groom carried by the roots with tress and with
/// Cycles at `size`², asserts both rank the methods' PSNR alike, and returns the table.
fn rank_alike(bpy: &Path, dir: &Path, methods: &[&str], range: &str, size: u32) -> Vec<String> {
    let out = dir.join("out");
    let (gt, counts) = last_frame(&out.join("gt.tcache"));
    let mut methods: Vec<(String, Vec<Vec3>)> = methods
        .iter()
        .map(|m| {
            (
                m.to_string(),
                last_frame(&out.join(format!("parts/{m}.{range}.tcache"))).0,
            )
        })
        .collect();
    // The rest groom carried rigidly by the roots (no dynamics).
    let rest: Vec<Vec3> = TcacheReader::open(out.join("groom.tcache"))
        .unwrap()
        .header
        .rest
        .points
        .iter()
        .map(|p| Vec3::from_array(*p))
        .collect();
    let pose = tress::motion::fit::root_poses(&[rest.clone(), gt.clone()], &counts)[1];
    methods.push(("rest".into(), rest.iter().map(|p| pose.apply_f32(*p)).collect()));
    let (w, h) = (size, size);
    let camera = Camera::fit(View::ThreeQuarter, &gt, w, h);
    let lighting = Lighting::default();
    let width = DEFAULT_WIDTH * preview_width_scale(counts.len());
    let widths = vec![width; gt.len()];
    let render = |pts: &[Vec3]| {
        let mut film = Film::new(w, h, lighting.background);
        draw_hair(&mut film, pts, &counts, &widths, None, &camera, &lighting);
        film.resolve()
    };
    let tress_gt = render(&gt);
    let tress_psnr: Vec<f64> = methods.iter().map(|(_, p)| psnr(&tress_gt, &render(p))).collect();
    // The same with Cycles.
    let flat = |pts: &[Vec3]| pts.iter().flat_map(|p| [p.x, p.y, p.z]).collect::<Vec<f32>>();
    let mut renders =
        vec![json!({"name": "gt", "points": flat(&gt), "counts": counts, "radius": 0.5 * width})];
    for (name, p) in &methods {
        renders.push(json!({"name": name, "points": flat(p), "counts": counts, "radius": 0.5 * width}));
    }
    let scene = json!({
        "width": w, "height": h, "samples": 24,
        "camera": {
            "center": camera.center.to_array(), "right": camera.right.to_array(),
            "up": camera.up.to_array(), "forward": camera.forward.to_array(), "scale": camera.scale,
        },
        "light": lighting.light.to_array(),
        "background": lighting.background,
        "ambient": lighting.ambient,
        "hair": lighting.hair,
        "out_dir": dir.to_str().unwrap(),
        "renders": renders,
    });
    std::fs::write(dir.join("scene.json"), scene.to_string()).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/cycles_render.py");
    let o = Command::new(bpy)
        .arg(script)
        .arg(dir.join("scene.json"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let load = |name: &str| image::open(dir.join(format!("{name}.png"))).unwrap().into_rgb8();
    let cycles_gt = load("gt");
    let cycles_psnr: Vec<f64> = methods.iter().map(|(n, _)| psnr(&cycles_gt, &load(n))).collect();
    let errors: Vec<f64> = methods.iter().map(|(_, p)| rmse(&gt, p)).collect();
    let order = |v: &[f64]| {
        let mut i: Vec<usize> = (0..v.len()).collect();
        i.sort_by(|a, b| v[*b].total_cmp(&v[*a]));
        i
    };
    let table: Vec<String> = methods
        .iter()
        .enumerate()
        .map(|(i, (n, _))| {
            format!(
                "{n}: RMSE {:.3} cm, tress {:.2} dB, Cycles {:.2} dB",
                errors[i], tress_psnr[i], cycles_psnr[i]
            )
        })
        .collect();
    eprintln!("{}", table.join("\n"));
    assert_eq!(order(&tress_psnr), order(&cycles_psnr), "{}", table.join("\n"));
    // Both pictures of the ground truth show hair: not all background.
    let bg = tress_gt.get_pixel(0, 0);
    assert!(tress_gt.pixels().filter(|p| *p != bg).count() > 1000);
    table
}

/// Runs the job `toml` (its output in `out/`) in a fresh folder and [`rank_alike`]s its rows.
fn run_and_rank(test: &str, toml: &str, methods: &[&str], range: &str, size: u32) {
    let bpy = common::tool_from_env(test, "TRESS_BLENDER_PYTHON", "a python with Blender's bpy");
    let dir = common::temp_dir(test);
    std::fs::write(dir.join("job.toml"), toml).unwrap();
    common::tress_ok(&["run", dir.join("job.toml").to_str().unwrap()]);
    rank_alike(&bpy, &dir, methods, range, size);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
#[ignore = "needs Blender's bpy (TRESS_BLENDER_PYTHON); run with --include-ignored, as .ci/run does"]
fn tress_and_cycles_rank_the_methods_pictures_alike() {
    // A short violent shot with few guides: methods of clearly different error.
    run_and_rank(
        "tress_and_cycles_rank_the_methods_pictures_alike",
        r#"extends = "default"
name = "cycles"
output = "out"
frames = "1001-1012"
[groom]
preset = "straight"
strands = 300
[motion]
preset = "violent"
[guides]
count = 12
methods = ["idw", "nearest"]
oracle = false
[preview]
every = 6
size = "64x64"
"#,
        &["idw", "nearest"],
        "1001-1012",
        160,
    );
}

/// The same on the quickstart job's rows (IDW, the nearest guide, static skinning fitted on
/// `gentle`, and the rest groom), at the quickstart's preview size.
#[test]
#[ignore = "needs Blender's bpy (TRESS_BLENDER_PYTHON); run with --include-ignored, as .ci/run does"]
fn tress_and_cycles_rank_the_quickstarts_rows_alike() {
    let quickstart = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/quickstart.toml");
    run_and_rank(
        "tress_and_cycles_rank_the_quickstarts_rows_alike",
        &format!(
            r#"extends = {:?}
name = "quickstart-cycles"
output = "out"
[guides]
methods = ["idw", "nearest", "static"]
oracle = false
[training]
motion = "gentle"
frames = "1001-1100"
"#,
            quickstart.to_str().unwrap()
        ),
        &["idw", "nearest", "static"],
        "1001-1048",
        320,
    );
}
