//! Strand caches: conversions between .tcache, Alembic and PLY sequences, the lossy bound,
//! and damaged caches.

mod common;

use common::{stderr, temp_dir, tress};
use tress::cache::open_source;
use tress::formats::alembic::cache::{AbcWriter, CurvesSpec};
use tress::groom::{GroomParams, Style, generate};

/// A moving groom written as an Alembic cache; returns its frames.
fn moving_cache(path: &std::path::Path, frames: usize) -> Vec<Vec<[f32; 3]>> {
    let g = generate(&GroomParams {
        strands: 400,
        ..GroomParams::for_style(Style::Curly)
    })
    .unwrap();
    let s = g.to_strands();
    let mut w = AbcWriter::new(path, 24.0, 1001.0).unwrap();
    w.add_curves(&CurvesSpec::from_strands("groom", "hair", &s))
        .unwrap();
    let mut out = Vec::new();
    for f in 0..frames {
        let q = glam::Quat::from_rotation_y(0.03 * f as f32) * glam::Quat::from_rotation_x(0.01 * f as f32);
        let p: Vec<[f32; 3]> = g
            .points()
            .iter()
            .enumerate()
            .map(|(i, p)| {
                (q * *p
                    + glam::Vec3::new(
                        0.2 * f as f32,
                        0.0,
                        (i % 25) as f32 * 0.01 * (f as f32 * 0.4).sin(),
                    ))
                .to_array()
            })
            .collect();
        w.write_frame(&[&p]).unwrap();
        out.push(p);
    }
    w.finish().unwrap();
    out
}

fn read_all(path: &std::path::Path) -> Vec<Vec<[f32; 3]>> {
    let mut s = open_source(path, None, 24.0).unwrap();
    (0..s.info().frames.len()).map(|i| s.read(i).unwrap()).collect()
}

#[test]
fn lossless_round_trip_through_every_cache_format() {
    let dir = temp_dir("cache-lossless");
    let abc = dir.join("gt.abc");
    let truth = moving_cache(&abc, 20);
    let tc = dir.join("gt.tcache");
    let seq = dir.join("seq/hair.####.ply.zst");
    std::fs::create_dir_all(dir.join("seq")).unwrap();
    let back = dir.join("back.abc");
    for (a, b) in [(&abc, &tc), (&tc, &seq), (&seq, &back)] {
        let o = tress(&["convert", a.to_str().unwrap(), b.to_str().unwrap()]);
        assert!(
            o.status.success(),
            "{} → {}: {}",
            a.display(),
            b.display(),
            stderr(&o)
        );
    }
    assert!(dir.join("seq/hair.1001.ply.zst").exists() && dir.join("seq/hair.1020.ply.zst").exists());
    for p in [&tc, &seq, &back] {
        let got = read_all(p);
        assert_eq!(got.len(), 20);
        assert!(got == truth, "{} changed positions", p.display());
    }
    let s = open_source(&back, None, 24.0).unwrap();
    assert_eq!(s.info().frames.first(), Some(&1001.0));
}

#[test]
fn lossy_caches_hold_the_bound_and_ranges_cut() {
    let dir = temp_dir("cache-lossy");
    let abc = dir.join("gt.abc");
    let truth = moving_cache(&abc, 30);
    for bound in ["0.001", "0.01"] {
        let tc = dir.join(format!("l{bound}.tcache"));
        let o = tress(&[
            "convert",
            abc.to_str().unwrap(),
            tc.to_str().unwrap(),
            "--error",
            bound,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let b: f32 = bound.parse().unwrap();
        for (f, (got, want)) in read_all(&tc).iter().zip(&truth).enumerate() {
            for (p, q) in got.iter().zip(want) {
                let d = ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt();
                assert!(d <= b, "bound {b}, frame {f}: {d}");
            }
        }
        let raw = 30 * truth[0].len() * 12;
        let size = std::fs::metadata(&tc).unwrap().len() as usize;
        assert!(size * 4 < raw, "{bound}: {size} bytes for {raw} raw");
    }
    let part = dir.join("part.tcache");
    let o = tress(&[
        "convert",
        abc.to_str().unwrap(),
        part.to_str().unwrap(),
        "--frames",
        "1005-1009",
    ]);
    assert!(o.status.success());
    let got = read_all(&part);
    assert_eq!(got.len(), 5);
    assert!(got[0] == truth[4]);
    let o = tress(&[
        "convert",
        abc.to_str().unwrap(),
        part.to_str().unwrap(),
        "--frames",
        "2000-2100",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no frames in the requested range"));
}

#[test]
fn cut_and_damaged_caches_say_what_happened() {
    let dir = temp_dir("cache-damaged");
    let abc = dir.join("gt.abc");
    let truth = moving_cache(&abc, 12);
    let tc = dir.join("gt.tcache");
    assert!(
        tress(&["convert", abc.to_str().unwrap(), tc.to_str().unwrap()])
            .status
            .success()
    );
    let bytes = std::fs::read(&tc).unwrap();
    // Cut in the middle of the file: the frames before the cut read, the rest is reported.
    let cut = dir.join("cut.tcache");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let o = tress(&["inspect", cut.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["complete"], false);
    let n = v["frame_count"].as_u64().unwrap() as usize;
    assert!(n > 3 && n < 12, "{n}");
    assert!(v["stopped"].as_str().unwrap().contains("ends inside frame chunk"));
    let got = read_all(&cut);
    assert!(got[..] == truth[..n]);
    // A flipped byte in a frame is caught by its checksum.
    let mut bad = bytes.clone();
    let at = bytes.len() / 2;
    bad[at] ^= 0x20;
    let flipped = dir.join("flip.tcache");
    std::fs::write(&flipped, bad).unwrap();
    let o = tress(&["inspect", flipped.to_str().unwrap(), "--verify"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("checksum"), "{}", stderr(&o));
    let out = dir.join("out.abc");
    let o = tress(&["convert", flipped.to_str().unwrap(), out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists(), "no partial output");
}

/// `tress merge`: caches as the groom groups of one archive. Each source is read in the space it
/// records (an Alembic cache written in metres, Z up comes back to centimetres, Y up within
/// float rounding; a .tcache bit for bit), groups get ids in the order given and their names,
/// and caches that do not cover the same frames are refused naming the frame.
#[test]
fn merged_groom_groups_keep_each_cache_in_its_space() {
    use tress::formats::alembic::cache::AbcReader;
    use tress::formats::alembic::schema::curves::CurvesReader;
    let dir = temp_dir("cache-merge");
    let abc = dir.join("a.abc");
    let truth = moving_cache(&abc, 6);
    let (tc, metres, short) = (
        dir.join("hair.tcache"),
        dir.join("beard.abc"),
        dir.join("short.tcache"),
    );
    for args in [
        vec![abc.to_str().unwrap(), tc.to_str().unwrap()],
        vec![
            abc.to_str().unwrap(),
            metres.to_str().unwrap(),
            "--units",
            "m",
            "--out-up",
            "z",
        ],
        vec![
            abc.to_str().unwrap(),
            short.to_str().unwrap(),
            "--frames",
            "1001-1004",
        ],
    ] {
        let o = tress(&[&["convert"][..], &args].concat());
        assert!(o.status.success(), "{}", stderr(&o));
    }
    // The metre cache really is in metres, Z up.
    let m = read_all(&metres);
    let [x, y, z] = truth[0][0];
    let want = [x * 0.01, -z * 0.01, y * 0.01];
    assert!(
        (0..3).all(|k| (m[0][0][k] - want[k]).abs() < 1e-6),
        "{:?} vs {want:?}",
        m[0][0]
    );

    let out = dir.join("character.abc");
    let o = tress(&[
        "merge",
        tc.to_str().unwrap(),
        &format!("beard={}", metres.display()),
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["groups"][0]["name"], "hair");
    assert_eq!(v["groups"][1]["name"], "beard");
    assert_eq!(v["frames"], 6);

    let r = AbcReader::open(&out).unwrap();
    let objects = r.curves_objects().unwrap();
    let names: Vec<&str> = objects.iter().map(|o| o.full_name.as_str()).collect();
    assert_eq!(names, ["/groom/hair", "/groom/beard"]);
    for (id, o) in objects.iter().enumerate() {
        let c = CurvesReader::open(&r.archive, o).unwrap();
        assert_eq!(c.num_samples(), 6);
        let gid = c.arb::<i32>(&r.archive, "groom_group_id", 0).unwrap().unwrap();
        assert_eq!(gid.values, [id as i32]);
        for (f, want) in truth.iter().enumerate() {
            let p = c.positions(&r.archive, f).unwrap();
            if id == 0 {
                assert!(p == *want, "the .tcache group is bit for bit");
            } else {
                let worst = p
                    .iter()
                    .zip(want)
                    .flat_map(|(a, b)| (0..3).map(move |k| (a[k] - b[k]).abs() / b[k].abs().max(1.0)))
                    .fold(0.0f32, f32::max);
                assert!(worst < 1e-5, "metres back to cm: relative error {worst}");
            }
        }
    }
    // Group names as Unreal 5 reads them: a constant string per curves object.
    let props = |o: &tress::formats::alembic::abc::Object| {
        let top = r.archive.properties(o).unwrap();
        let geom = r.archive.compound(&top, ".geom").unwrap().unwrap();
        let arb = r.archive.compound(&geom, ".arbGeomParams").unwrap().unwrap();
        let p = r.archive.property(&arb, "groom_group_name").unwrap().unwrap();
        r.archive.read_strings(&p, 0).unwrap()
    };
    assert_eq!(props(&objects[0]), ["hair"]);
    assert_eq!(props(&objects[1]), ["beard"]);

    // A cache without frame 1005 is refused, naming it; nothing is written.
    let bad = dir.join("bad.abc");
    let o = tress(&[
        "merge",
        tc.to_str().unwrap(),
        short.to_str().unwrap(),
        "-o",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("short.tcache") && stderr(&o).contains("1005"),
        "{}",
        stderr(&o)
    );
    assert!(!bad.exists());
    // Two groups of one name, and a non-Alembic archive, are refused.
    let o = tress(&[
        "merge",
        tc.to_str().unwrap(),
        &format!("hair={}", metres.display()),
        "-o",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("twice"), "{}", stderr(&o));
    let o = tress(&[
        "merge",
        tc.to_str().unwrap(),
        "-o",
        dir.join("c.usda").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("Alembic"), "{}", stderr(&o));
}

/// `tress convert` reads a cache in the space it records: an Alembic cache tress wrote in metres,
/// Z up comes back to centimetres, Y up in a `.tcache` (which must be cm) and in a default
/// Alembic, and stays bit for bit when written again in metres, Z up.
#[test]
fn conversions_read_each_cache_in_its_space() {
    let dir = temp_dir("cache-space");
    let abc = dir.join("a.abc");
    let truth = moving_cache(&abc, 4);
    let metres = dir.join("m.abc");
    let convert = |a: &std::path::Path, b: &std::path::Path, more: &[&str]| {
        let o = tress(&[&["convert", a.to_str().unwrap(), b.to_str().unwrap()][..], more].concat());
        assert!(o.status.success(), "{}", stderr(&o));
    };
    convert(&abc, &metres, &["--units", "m", "--out-up", "z"]);
    let (tc, cm, again) = (dir.join("back.tcache"), dir.join("cm.abc"), dir.join("again.abc"));
    convert(&metres, &tc, &[]);
    convert(&metres, &cm, &[]);
    convert(&metres, &again, &["--units", "m", "--out-up", "z"]);
    for p in [&tc, &cm] {
        let got = read_all(p);
        for (f, want) in truth.iter().enumerate() {
            let worst = got[f]
                .iter()
                .zip(want)
                .flat_map(|(a, b)| (0..3).map(move |k| (a[k] - b[k]).abs() / b[k].abs().max(1.0)))
                .fold(0.0f32, f32::max);
            assert!(
                worst < 1e-5,
                "{}: frame {f} off by {worst} (relative)",
                p.display()
            );
        }
    }
    assert!(
        read_all(&again) == read_all(&metres),
        "the same space is copied bit for bit"
    );
}
