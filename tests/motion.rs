//! Head tracks from real files and from rigidly moving meshes with a known motion.

mod common;

use glam::{DQuat, DVec3};
use tress::formats::alembic::abc::write::{ArchiveInfo, OArchive};
use tress::formats::alembic::abc::{Archive, TimeSampling};
use tress::formats::alembic::schema::SchemaKind;
use tress::formats::alembic::schema::polymesh::{PolyMeshReader, PolyMeshWriter};
use tress::motion::Pose;
use tress::motion::sources;

#[test]
#[ignore = "needs the shared data (TRESS_DATA); run with --include-ignored, as .ci/run does"]
fn cesium_man_neck_joint_has_two_seconds_of_motion() {
    let d = common::data_dir("cesium_man_neck_joint_has_two_seconds_of_motion").expect("data");
    let (track, report) = sources::from_gltf(
        &d.join("animation/CesiumMan.glb"),
        Some("Skeleton_neck_joint_1"),
        None,
        24.0,
    )
    .unwrap();
    // MANIFEST: 1 animation, 2.0 s; sampled at 24 fps from 0 to 2 s.
    assert!((track.duration() - 2.0).abs() < 1e-6, "{}", track.duration());
    assert_eq!(report.samples, 49);
    // The neck really moves: a walk cycle turns it by several degrees and moves it.
    let (lin, ang) = track.peak_speeds();
    assert!(ang > 10.0 && lin > 0.05, "peak {lin} units/s, {ang} deg/s");
    let mut moved: f64 = 0.0;
    for f in 0..=48 {
        moved = moved.max(track.angle_from_start(f as f64 / 24.0));
    }
    assert!(moved > 2.0, "{moved} degrees");
    // An unknown node is a clear error listing the nodes.
    let e = sources::from_gltf(
        &d.join("animation/CesiumMan.glb"),
        Some("Skeleton_tail"),
        None,
        24.0,
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("Skeleton_neck_joint_1"), "{e}");
    // Without --node, the upper neck joint is found by name (MANIFEST: the neck joints are
    // animated); it gives the same track as naming it.
    let (guessed, _) = sources::from_gltf(&d.join("animation/CesiumMan.glb"), None, None, 24.0).unwrap();
    let (named, _) = sources::from_gltf(
        &d.join("animation/CesiumMan.glb"),
        Some("Skeleton_neck_joint_2"),
        None,
        24.0,
    )
    .unwrap();
    assert_eq!(guessed, named);
}

#[test]
#[ignore = "needs the shared data (TRESS_DATA); run with --include-ignored, as .ci/run does"]
fn rigidly_moving_meshes_give_back_their_motion() {
    let d = common::data_dir("rigidly_moving_meshes_give_back_their_motion").expect("data");
    // The topology and rest shape of Maya's nCloth plane (MVPCloth.abc), moved rigidly.
    let src = Archive::open(d.join("alembic/MVPCloth.abc")).unwrap();
    let obj = src
        .objects()
        .unwrap()
        .into_iter()
        .find(|o| o.full_name.ends_with("outputCloth1"))
        .unwrap();
    let rest = PolyMeshReader::open(&src, &obj).unwrap().sample(&src, 0).unwrap();
    let truth: Vec<Pose> = (0..30)
        .map(|f| {
            let a = f as f64 * 0.05;
            Pose::new(
                DQuat::from_axis_angle(DVec3::new(0.3, 1.0, -0.2).normalize(), a),
                DVec3::new(2.0 * a, -a, 0.5 * a * a),
            )
        })
        .collect();
    let dir = common::temp_dir("rigid-mesh");
    let path = dir.join("rigid.abc");
    let info = ArchiveInfo {
        application: "test".into(),
        description: String::new(),
        fps: Some(24.0),
        date: std::time::UNIX_EPOCH,
        extra: Vec::new(),
    };
    let mut ar = OArchive::new(std::fs::File::create(&path).unwrap(), &info).unwrap();
    let ts = ar.add_time_sampling(TimeSampling::uniform(1.0 / 24.0, 1.0 / 24.0));
    let top = ar.top();
    let mut w = PolyMeshWriter::new(&mut ar, top, "head", ts).unwrap();
    let idx: Vec<i32> = rest.face_indices.iter().map(|&i| i as i32).collect();
    let cnt: Vec<i32> = rest.face_counts.iter().map(|&c| c as i32).collect();
    for p in &truth {
        let moved: Vec<[f32; 3]> = rest
            .positions
            .iter()
            .map(|q| {
                p.apply(DVec3::from_array(q.map(|c| c as f64)))
                    .as_vec3()
                    .to_array()
            })
            .collect();
        w.set(&mut ar, &moved, &idx, &cnt).unwrap();
    }
    ar.finish().unwrap();
    let (track, report) = sources::from_abc_mesh(&path, Some("/head")).unwrap();
    assert!(report.fit_max.unwrap() < 1e-4, "{report:?}");
    for (f, p) in truth.iter().enumerate() {
        let got = track.at((f + 1) as f64 / 24.0);
        assert!(got.rotation.angle_between(p.rotation) < 1e-5, "frame {f}");
        assert!((got.translation - p.translation).length() < 1e-4, "frame {f}");
    }
    // The cloth itself is not rigid, and the fit says so.
    let (_, r) =
        sources::from_abc_mesh(&d.join("alembic/MVPCloth.abc"), Some("/pPlane1/outputCloth1")).unwrap();
    assert!(r.fit_rms.unwrap() > 1.0);
    assert_eq!(SchemaKind::of(&obj), SchemaKind::PolyMesh);
}

#[test]
#[ignore = "needs the shared data (TRESS_DATA); run with --include-ignored, as .ci/run does"]
fn xform_tracks_follow_the_alembic_transform() {
    let t = common::tools_dir("xform_tracks");
    // ref_curves.abc: /groom translates by (0, 0.1 f, 0) at frame 1 + f.
    let (track, _) = sources::from_abc_xform(&t.join("ref_curves.abc"), Some("/groom")).unwrap();
    for f in 0..4 {
        let p = track.at((1 + f) as f64 / 24.0);
        assert!((p.translation - DVec3::new(0.0, 0.1 * f as f64, 0.0)).length() < 1e-12);
    }
}

#[test]
fn track_files_and_the_cli() {
    let dir = common::temp_dir("track-file");
    let csv = dir.join("head.csv");
    std::fs::write(&csv, "frame,tx,ty,tz,qx,qy,qz,qw\n1001,0,0,0,0,0,0,1\n1025,10,0,0,0,0.7071067811865476,0,0.7071067811865476\n").unwrap();
    let (track, _) = sources::from_track_file(&csv, 24.0).unwrap();
    let mid = track.at(1013.0 / 24.0);
    assert!((mid.translation.x - 5.0).abs() < 1e-9);
    assert!((mid.angle_deg() - 45.0).abs() < 1e-6);
    let o = common::tress(&["motion", "preview", "--track", csv.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["first_frame"], 1001);
    assert_eq!(v["last_frame"], 1025);
    assert!((v["peak_angular_speed_deg"].as_f64().unwrap() - 90.0).abs() < 1e-6);
    let o = common::tress(&["motion", "preview", "--motion", "violent", "--json"]);
    assert!(o.status.success());
    let o = common::tress(&["motion", "preview"]);
    assert_eq!(o.status.code(), Some(2));
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "frame,tx,ty,tz,qx,qy,qz,qw\n1,0,0,0,0,0,0,2\n").unwrap();
    let o = common::tress(&["motion", "preview", "--track", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(common::stderr(&o).contains("unit quaternion"));
}
