//! Damaged and hostile files give errors, never panics, and never allocate more than a small
//! multiple of the file's size (a counting allocator measures every parse).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use common::{corruptions, data_dir, temp_dir, tress};
use tress::formats::{hair, obj, ply, tfx, usc_data};
use tress::groom::{GroomParams, Style, generate};

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let _ = LIVE.try_with(|c| {
            c.set(c.get() + l.size() as isize);
            let _ = PEAK.try_with(|p| p.set(p.get().max(c.get())));
        });
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let _ = LIVE.try_with(|c| c.set(c.get() - l.size() as isize));
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let _ = LIVE.try_with(|c| {
            c.set(c.get() + new as isize - l.size() as isize);
            let _ = PEAK.try_with(|q| q.set(q.get().max(c.get())));
        });
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak bytes allocated (on this thread) by `f`, above what was live before.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let r = f();
    let peak = PEAK.with(Cell::get) - base;
    (r, peak.max(0) as usize)
}

/// Runs a parser on every corruption of `good`: no panic (a panic fails the test), and the
/// allocation stays under 12 × the damaged file's size + 64 KiB.
fn survive<T, E: std::fmt::Display>(name: &str, good: &[u8], parse: impl Fn(&[u8]) -> Result<T, E>) -> usize {
    let mut errors = 0;
    for (what, bad) in corruptions(good, good.len() as u64) {
        let (r, peak) = peak_of(|| parse(&bad));
        let limit = 12 * bad.len() + 64 * 1024;
        assert!(
            peak <= limit,
            "{name} {what}: allocated {peak} bytes for a {}-byte file",
            bad.len()
        );
        if let Err(e) = r {
            errors += 1;
            assert!(!e.to_string().is_empty());
        }
    }
    errors
}

fn sample_groom() -> tress::groom::Groom {
    let mut g = generate(&GroomParams {
        strands: 60,
        points: 12,
        ..GroomParams::for_style(Style::Curly)
    })
    .unwrap();
    // Uneven strands exercise segment arrays and strand elements.
    g = g.filter_strands(|i| i % 7 != 3);
    let pts: Vec<glam::Vec3> = g
        .strands()
        .enumerate()
        .flat_map(|(i, s)| s[..s.len() - i % 5].to_vec())
        .collect();
    let counts: Vec<u32> = g
        .counts()
        .iter()
        .enumerate()
        .map(|(i, &c)| c - (i % 5) as u32)
        .collect();
    tress::groom::Groom::new(pts, counts, Default::default()).unwrap()
}

#[test]
fn every_reader_survives_damage() {
    let s = sample_groom().to_strands();
    let hair_bytes = hair::to_bytes(&hair::HairFile::from_strands(&s, "t").unwrap()).unwrap();
    assert!(survive("hair", &hair_bytes, hair::parse) > 10);
    let data_bytes = usc_data::to_bytes(&s).unwrap();
    assert!(survive("data", &data_bytes, usc_data::parse) > 10);
    let ply_bytes = ply::to_bytes(&s, "c").unwrap();
    assert!(survive("ply", &ply_bytes, |d| ply::parse(d, &Default::default())) > 10);
    let uniform = tress::groom::resample(&sample_groom(), 8).to_strands();
    let tfx_bytes = tfx::to_bytes_v4(&uniform).unwrap();
    assert!(survive("tfx", &tfx_bytes, tfx::parse) > 10);
    let obj_text = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3\nf 1 3 4\n".repeat(20);
    survive("obj", &obj_text, obj::parse);
    let mss_text =
        b"p 0 1 0 0 0 0 2\np 0.025 1 0 0 0 0 2\ns 0 1 25\nz 0 0 1 0 200\nc 0 0 0\nh 1 0 0\n".repeat(10);
    survive("mss", &mss_text, tress::formats::mss::parse);
    // Head-motion files: a glTF with a node hierarchy and an animation over embedded buffers,
    // and track files in both forms.
    let gltf = gltf_sample();
    match tress::formats::gltf::parse(&gltf, None) {
        Ok(doc) => {
            assert!(doc.nodes.len() == 3 && doc.animations.len() == 1 && doc.nodes[2].parent == Some(1))
        }
        Err(e) => panic!("the sample glTF does not read: {e}"),
    }
    assert!(survive("gltf", &gltf, |d| tress::formats::gltf::parse(d, None)) > 10);
    let csv = format!(
        "# exported\nframe,tx,ty,tz,qx,qy,qz,qw\n{}",
        (0..40)
            .map(|f| format!(
                "{},{},0.5,0,0,{:.6},0,{:.6}\n",
                1001 + f,
                f as f64 * 0.1,
                (f as f64 * 0.01).sin(),
                (f as f64 * 0.01).cos()
            ))
            .collect::<String>()
    );
    let text = |d: &[u8]| String::from_utf8(d.to_vec()).map_err(|e| e.to_string());
    assert!(tress::formats::track::parse_csv(&csv).is_ok());
    survive("track csv", csv.as_bytes(), |d| {
        text(d).and_then(|t| tress::formats::track::parse_csv(&t).map_err(|e| e.to_string()))
    });
    let json = format!(
        "{{\"fps\": 24, \"keys\": [{}]}}",
        (0..30)
            .map(|f| format!(
                "{{\"frame\": {}, \"translation\": [0, {}, 0], \"rotation\": [0, 0, 0, 1]}}",
                1001 + f,
                f
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    assert!(tress::formats::track::parse_json(&json).is_ok());
    survive("track json", json.as_bytes(), |d| {
        text(d).and_then(|t| tress::formats::track::parse_json(&t).map_err(|e| e.to_string()))
    });
    // Job and preset TOML: the default job preset (every section), read as a job and as each
    // preset kind's loader would.
    let job = include_str!("../presets/jobs/default.toml");
    survive("job toml", job.as_bytes(), |d| {
        text(d).and_then(|t| {
            let table: toml::Table = toml::from_str(&t).map_err(|e| e.to_string())?;
            tress::pipeline::job::Job::from_table(table, "job.toml", std::path::Path::new("/nonexistent"))
                .map(|_| ())
                .map_err(|e| e.to_string())
        })
    });
    let material = include_str!("../presets/materials/curly.toml");
    survive("material toml", material.as_bytes(), |d| {
        text(d).and_then(|t| {
            tress::presets::parse::<tress::sim::Material>(&t, "m.toml").map_err(|e| e.to_string())
        })
    });
}

/// A small binary glTF 2.0 file (GLB: JSON chunk and BIN chunk): a root, a neck and a head
/// node, and an animation of the neck's rotation over 10 keys.
fn gltf_sample() -> Vec<u8> {
    let times: Vec<f32> = (0..10).map(|i| i as f32 / 24.0).collect();
    let rots: Vec<[f32; 4]> = (0..10)
        .map(|i| {
            let a = i as f32 * 0.05;
            [0.0, (a / 2.0).sin(), 0.0, (a / 2.0).cos()]
        })
        .collect();
    let mut bin: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    bin.extend(rots.iter().flatten().flat_map(|v| v.to_le_bytes()));
    let doc = serde_json::json!({
        "asset": {"version": "2.0"},
        "scenes": [{"nodes": [0]}],
        "nodes": [
            {"name": "root", "children": [1]},
            {"name": "neck", "children": [2], "translation": [0.0, 1.5, 0.0]},
            {"name": "head", "translation": [0.0, 0.1, 0.0]}
        ],
        "buffers": [{"byteLength": bin.len()}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 40},
            {"buffer": 0, "byteOffset": 40, "byteLength": 160}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 10, "type": "SCALAR", "min": [0.0], "max": [times[9]]},
            {"bufferView": 1, "componentType": 5126, "count": 10, "type": "VEC4"}
        ],
        "animations": [{"name": "nod", "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}],
                        "channels": [{"sampler": 0, "target": {"node": 1, "path": "rotation"}}]}]
    });
    let mut json = serde_json::to_vec(&doc).unwrap();
    while !json.len().is_multiple_of(4) {
        json.push(b' ');
    }
    while !bin.len().is_multiple_of(4) {
        bin.push(0);
    }
    let total = 12 + 8 + json.len() + 8 + bin.len();
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&json);
    out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(&bin);
    out
}

#[test]
fn hostile_headers_do_not_allocate() {
    // Headers claiming billions of items in a tiny file.
    let mut hairf = vec![0u8; 128];
    hairf[..4].copy_from_slice(b"HAIR");
    hairf[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    hairf[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    hairf[12..16].copy_from_slice(&3u32.to_le_bytes());
    let (r, peak) = peak_of(|| hair::parse(&hairf));
    assert!(r.is_err() && peak < 4096, "hair: {peak}");
    let plyf = b"ply\nformat binary_little_endian 1.0\nelement vertex 3000000000\nproperty float x\nproperty float y\nproperty float z\nelement strand 1\nproperty int vertex_count\nend_header\n";
    let (r, peak) = peak_of(|| ply::parse(plyf, &Default::default()));
    assert!(r.is_err() && peak < 64 * 1024, "ply: {peak}");
    let (r, peak) = peak_of(|| usc_data::parse(&[0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0]));
    assert!(r.is_err() && peak < 4096, "data: {peak}");
}

#[test]
#[ignore = "needs the shared data (TRESS_DATA); run with --include-ignored, as .ci/run does"]
fn real_files_survive_damage() {
    let d = data_dir("real_files_survive_damage").expect("data");
    let g = d.join("grooms");
    let read = |p: &str| std::fs::read(g.join(p)).unwrap();
    survive("straight.hair", &read("straight.hair"), hair::parse);
    survive("harolongo.data", &read("harolongo.data"), usc_data::parse);
    survive("strands1900_points.ply", &read("strands1900_points.ply"), |b| {
        ply::parse(
            b,
            &ply::ReadOptions {
                points_per_strand: Some(100),
            },
        )
    });
    survive("sintel_hair.tfx", &read("sintel_hair.tfx"), tfx::parse);
    survive("back.tfx", &read("tressfx_ponytail/back.tfx"), tfx::parse);
    let shared_ply = d.join("../tools/ply");
    if shared_ply.is_dir() {
        for entry in std::fs::read_dir(&shared_ply).unwrap() {
            let p = entry.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            let r = ply::parse(&bytes, &Default::default());
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            // The shared checker's bad_* files are broken on purpose; the others are good.
            assert_eq!(
                r.is_err(),
                name.starts_with("bad_"),
                "{name}: {:?}",
                r.err().map(|e| e.to_string())
            );
        }
    }
}

#[test]
fn cli_reports_damage_with_exit_code_2_and_the_file_name() {
    let dir = temp_dir("corrupt-cli");
    let g = sample_groom();
    let good = dir.join("good.hair");
    tress::groom::write_groom(&good, &g).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let cases = [
        ("trunc.hair", bytes[..bytes.len() / 2].to_vec(), "ends after"),
        (
            "magic.hair",
            [b"XXXX".as_slice(), &bytes[4..]].concat(),
            "not a Cem Yuksel .hair file",
        ),
        (
            "garbage.ply",
            b"ply\nformat what 1.0\nend_header\n".to_vec(),
            "bad PLY header",
        ),
        ("empty.data", Vec::new(), "strand count"),
    ];
    for (name, content, msg) in cases {
        let p = dir.join(name);
        std::fs::write(&p, content).unwrap();
        let out = dir.join("out.ply");
        let o = tress(&["convert", p.to_str().unwrap(), out.to_str().unwrap()]);
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name) && err.contains(msg), "{name}: {err}");
        assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
        assert!(!out.exists(), "no output may appear when the input is bad");
    }
}
