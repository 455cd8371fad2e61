//! Format round trips keep positions bit-exact.

mod common;

use common::{temp_dir, tress};
use tress::groom::{GroomParams, Style, generate, read_groom, write_groom};

fn bits(points: &[glam::Vec3]) -> Vec<u32> {
    points
        .iter()
        .flat_map(|p| p.to_array())
        .map(f32::to_bits)
        .collect()
}

fn read(path: &std::path::Path) -> tress::groom::Groom {
    read_groom(path, &Default::default()).unwrap().groom
}

#[test]
fn generated_groom_through_every_writable_format() {
    let dir = temp_dir("roundtrip-generated");
    let g = generate(&GroomParams {
        strands: 200,
        ..GroomParams::for_style(Style::Wavy)
    })
    .unwrap();
    for ext in ["hair", "ply", "data", "tfx"] {
        let p = dir.join(format!("g.{ext}"));
        write_groom(&p, &g).unwrap();
        let back = read(&p);
        assert_eq!(back.counts(), g.counts(), "{ext}");
        assert_eq!(bits(back.points()), bits(g.points()), "{ext}");
    }
}

#[test]
fn hair_to_ply_to_hair_is_bit_exact() {
    let dir = temp_dir("roundtrip-hair");
    // The real file where the shared data is, else a generated groom (the property holds for
    // any .hair file; the real one is the stronger case).
    let src = match std::env::var_os("TRESS_DATA")
        .map(std::path::PathBuf::from)
        .filter(|d| d.is_dir())
    {
        Some(d) => d.join("grooms/straight.hair"),
        None => {
            let p = dir.join("src.hair");
            write_groom(&p, &generate(&GroomParams::for_style(Style::Curly)).unwrap()).unwrap();
            p
        }
    };
    let ply = dir.join("a.ply");
    let hair = dir.join("b.hair");
    for (i, o) in [(&src, &ply), (&ply, &hair)] {
        let out = tress(&["convert", i.to_str().unwrap(), o.to_str().unwrap()]);
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    let (a, b) = (read(&src), read(&hair));
    assert_eq!(a.counts(), b.counts());
    assert_eq!(bits(a.points()), bits(b.points()));
}

#[test]
fn ply_to_hair_to_ply_is_bit_exact() {
    let dir = temp_dir("roundtrip-ply");
    let src = dir.join("src.ply");
    let g = generate(&GroomParams {
        strands: 500,
        ..GroomParams::for_style(Style::Straight)
    })
    .unwrap();
    write_groom(&src, &g).unwrap();
    let hair = dir.join("mid.hair");
    let back = dir.join("back.ply");
    for (i, o) in [(&src, &hair), (&hair, &back)] {
        let out = tress(&["convert", i.to_str().unwrap(), o.to_str().unwrap()]);
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    let (a, b) = (read(&src), read(&back));
    assert_eq!(a.counts(), b.counts());
    assert!(bits(a.points()) == bits(b.points()), "positions changed");
    // The constant width went into the .hair header and came back per vertex, unchanged.
    assert_eq!(a.vertex_widths(), b.vertex_widths());
}

#[test]
fn resample_and_axis_conversion() {
    let dir = temp_dir("convert-options");
    let src = dir.join("z_up.ply");
    // A vertical strand along +Z, 10 units long, in a Z-up file at metre scale.
    let g = tress::groom::Groom::new(
        vec![glam::Vec3::ZERO, glam::Vec3::new(0.0, 0.0, 0.1)],
        vec![2],
        Default::default(),
    )
    .unwrap();
    write_groom(&src, &g).unwrap();
    let out_path = dir.join("y_up.ply");
    let out = tress(&[
        "convert",
        src.to_str().unwrap(),
        out_path.to_str().unwrap(),
        "--up",
        "z",
        "--scale",
        "100",
        "--resample",
        "11",
    ]);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(common::stdout(&out).contains("OUTPUT_FILE: "));
    let r = read(&out_path);
    assert_eq!(r.counts(), &[11]);
    let tip = r.strand(0)[10];
    assert!((tip - glam::Vec3::new(0.0, 10.0, 0.0)).length() < 1e-5, "{tip}");
    for w in r.strand(0).windows(2) {
        assert!((w[0].distance(w[1]) - 1.0).abs() < 1e-5);
    }
}
