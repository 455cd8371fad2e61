//! Every groom in the shared data folder reads with the counts MANIFEST.md gives (counts there
//! were read with independent parsers).

mod common;

use common::{data_dir, stdout, tress};
use serde_json::Value;

fn inspect(path: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec!["inspect", path.to_str().unwrap(), "--json"];
    args.extend_from_slice(extra);
    let out = tress(&args);
    assert!(out.status.success(), "{}", common::stderr(&out));
    serde_json::from_str(&stdout(&out)).expect("inspect --json prints JSON")
}

#[test]
#[ignore = "needs the shared data (TRESS_DATA); run with --include-ignored, as .ci/run does"]
fn manifest_counts() {
    let d = data_dir("manifest_counts").expect("data");
    let g = d.join("grooms");
    let cases: &[(&str, &[&str], u64, u64, f64)] = &[
        ("straight.hair", &[], 10_000, 160_000, 16.0),
        ("harolongo.data", &[], 7_905, 7_905 * 21, 21.0),
        (
            "strands1900_points.ply",
            &["--points-per-strand", "100"],
            1_900,
            190_000,
            100.0,
        ),
        ("tressfx_ponytail/front_top.tfx", &[], 876, 876 * 16, 16.0),
        ("tressfx_ponytail/side.tfx", &[], 3_066, 3_066 * 16, 16.0),
        ("tressfx_ponytail/back.tfx", &[], 517, 517 * 16, 16.0),
        ("tressfx_ponytail/tail.tfx", &[], 255, 255 * 16, 16.0),
        ("tressfx_ponytail/ponytail.tfxproj", &[], 4_714, 4_714 * 16, 16.0),
        ("sintel_hair.tfx", &[], 228, 228 * 32, 32.0),
    ];
    for &(file, extra, strands, points, per) in cases {
        let v = inspect(&g.join(file), extra);
        assert_eq!(v["strand_count"].as_u64(), Some(strands), "{file}");
        assert_eq!(v["point_count"].as_u64(), Some(points), "{file}");
        assert_eq!(v["points_per_strand"]["min"].as_f64(), Some(per), "{file}");
        assert_eq!(v["points_per_strand"]["max"].as_f64(), Some(per), "{file}");
    }
}

#[test]
#[ignore = "needs the shared data (TRESS_DATA); run with --include-ignored, as .ci/run does"]
fn manifest_bounds_and_header_defaults() {
    let d = data_dir("manifest_bounds_and_header_defaults").expect("data");
    // MANIFEST: straight.hair bbox (-32.5,-33.9,-22.7)..(30.9,24.1,63.7).
    let v = inspect(&d.join("grooms/straight.hair"), &[]);
    let b = &v["bounds"];
    let want = [[-32.5, -33.9, -22.7], [30.9, 24.1, 63.7]];
    for (i, corner) in want.iter().enumerate() {
        for (k, w) in corner.iter().enumerate() {
            let got = b[i][k].as_f64().unwrap();
            assert!(
                (got - w).abs() < 0.06,
                "straight.hair bounds[{i}][{k}] = {got}, manifest {w}"
            );
        }
    }
    let attrs: Vec<&str> = v["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(attrs.contains(&"color (per vertex)"), "{attrs:?}");
    // MANIFEST: default thickness 0.1, transparency 0.3558, colour (1.0, 0.925, 0.569).
    let f = tress::formats::hair::read(d.join("grooms/straight.hair")).unwrap();
    assert_eq!(f.defaults.thickness, 0.1);
    assert!((f.defaults.transparency - 0.3558).abs() < 1e-4);
    assert!((f.defaults.color[1] - 0.925).abs() < 1e-3 && (f.defaults.color[2] - 0.569).abs() < 1e-3);
    assert_eq!(f.array_bits(), 0x12);

    // MANIFEST: harolongo bbox (-11.8,-14.3,-18.6)..(10.5,14.2,4.6); Sintel hair spans y 18.8..47.8.
    let v = inspect(&d.join("grooms/harolongo.data"), &[]);
    assert!((v["bounds"][0][1].as_f64().unwrap() + 14.3).abs() < 0.06);
    assert!((v["bounds"][1][2].as_f64().unwrap() - 4.6).abs() < 0.06);
    let v = inspect(&d.join("grooms/sintel_hair.tfx"), &[]);
    assert!((v["bounds"][0][1].as_f64().unwrap() - 18.8).abs() < 0.06);
    assert!((v["bounds"][1][1].as_f64().unwrap() - 47.8).abs() < 0.06);
}

#[test]
#[ignore = "needs the shared data (TRESS_DATA); run with --include-ignored, as .ci/run does"]
fn head_meshes() {
    let d = data_dir("head_meshes").expect("data");
    // MANIFEST: sintel.obj 3,046 vertices, 5,952 faces (triangles); USC head 6,900 vertices.
    let v = inspect(&d.join("heads/sintel/sintel.obj"), &[]);
    assert_eq!(v["vertex_count"].as_u64(), Some(3_046));
    assert_eq!(v["triangle_count"].as_u64(), Some(5_952));
    let v = inspect(&d.join("heads/usc_head_model.obj"), &[]);
    assert_eq!(v["vertex_count"].as_u64(), Some(6_900));
    assert!((v["bounds"][1][1].as_f64().unwrap() - 0.187).abs() < 1e-3);
}
