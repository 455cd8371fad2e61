//! Deforming colliders: animated body meshes (OBJ sequences, Alembic polymeshes) as colliders.

mod common;

use glam::Vec3;
use tress::collide::Colliders;
use tress::collide::deforming::{DeformingSdf, read_body_frames};
use tress::collide::mesh_sdf::{SdfParams, build};
use tress::formats::TriMesh;
use tress::motion::{HeadTrack, Pose};

/// A UV sphere of `radius` around `centre`.
fn ball(centre: Vec3, radius: f32, rings: u32, segments: u32) -> TriMesh {
    let mut m = TriMesh::default();
    m.positions.push((centre + Vec3::Y * radius).to_array());
    for r in 1..rings {
        let th = std::f32::consts::PI * r as f32 / rings as f32;
        for s in 0..segments {
            let ph = std::f32::consts::TAU * s as f32 / segments as f32;
            let d = Vec3::new(th.sin() * ph.cos(), th.cos(), th.sin() * ph.sin());
            m.positions.push((centre + d * radius).to_array());
        }
    }
    m.positions.push((centre - Vec3::Y * radius).to_array());
    let bottom = m.positions.len() as u32 - 1;
    let at = |r: u32, s: u32| 1 + (r - 1) * segments + s % segments;
    for s in 0..segments {
        m.triangles.push([0, at(1, s + 1), at(1, s)]);
        m.triangles.push([bottom, at(rings - 1, s), at(rings - 1, s + 1)]);
    }
    for r in 1..rings - 1 {
        for s in 0..segments {
            m.triangles.push([at(r, s), at(r, s + 1), at(r + 1, s)]);
            m.triangles.push([at(r, s + 1), at(r + 1, s + 1), at(r + 1, s)]);
        }
    }
    m
}

fn write_obj(path: &std::path::Path, m: &TriMesh) {
    let mut s = String::new();
    for p in &m.positions {
        s.push_str(&format!("v {} {} {}\n", p[0], p[1], p[2]));
    }
    for t in &m.triangles {
        s.push_str(&format!("f {} {} {}\n", t[0] + 1, t[1] + 1, t[2] + 1));
    }
    std::fs::write(path, s).unwrap();
}

const CENTRE: Vec3 = Vec3::new(0.0, -16.0, -11.0);

fn radius(frame: usize) -> f32 {
    2.0 + 5.0 * (frame - 1) as f32 / 11.0
}

/// 002 §4's test of deforming bodies: a ball behind the neck inflating from 2 to 7 cm in half a
/// second (OBJ sequence, `--body`) under a settled straight groom pushes the hair out: after
/// every frame no vertex is more than 0.5 mm inside the ball (its exact sphere, the mesh's
/// facets lying within 0.02 mm of it), while more than 100 vertices of the first frame's groom
/// lie inside the last ball.
#[test]
fn an_inflating_ball_pushes_a_settled_groom_out() {
    let dir = common::temp_dir("deforming-ball");
    for f in 1..=12 {
        write_obj(
            &dir.join(format!("ball.{f:04}.obj")),
            &ball(CENTRE, radius(f), 64, 128),
        );
    }
    let out = dir.join("hair.tcache");
    let pattern = dir.join("ball.####.obj");
    let o = common::tress(&[
        "simulate",
        "--groom",
        "straight",
        "--strands",
        "300",
        "--body",
        pattern.to_str().unwrap(),
        "--frames",
        "1-12",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("12 frames"), "{}", common::stderr(&o));
    let mut r = tress::formats::tcache::TcacheReader::open(&out).unwrap();
    let counts = r.header.rest.counts.clone();
    let roots: std::collections::HashSet<usize> = counts
        .iter()
        .scan(0usize, |o, &c| {
            let at = *o;
            *o += c as usize;
            Some(at)
        })
        .collect();
    let mut first: Vec<Vec3> = Vec::new();
    for i in 0..r.len() {
        let f = r.frames[i].frame as usize;
        let x: Vec<Vec3> = r.frame(i).unwrap().into_iter().map(Vec3::from_array).collect();
        if i == 0 {
            first = x.clone();
        }
        let deepest = x
            .iter()
            .enumerate()
            .filter(|(k, _)| !roots.contains(k))
            .map(|(_, p)| radius(f) - p.distance(CENTRE))
            .fold(f32::MIN, f32::max);
        eprintln!(
            "frame {f}: ball radius {:.2} cm, deepest vertex {deepest:.4} cm inside",
            radius(f)
        );
        assert!(
            deepest <= 0.05,
            "frame {f}: a vertex {deepest} cm inside the ball"
        );
    }
    let r12 = radius(12);
    let would_be_inside = first.iter().filter(|p| p.distance(CENTRE) < r12 - 0.5).count();
    eprintln!("{would_be_inside} vertices of the first frame inside the last ball");
    assert!(
        would_be_inside > 100,
        "the ball meets the hair: {would_be_inside} vertices of the first frame inside the last ball"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A body mesh that does not move gives the rigid path's simulation exactly: the same ball as
/// one rigid distance grid, or as three identical frames.
#[test]
fn a_still_body_mesh_simulates_as_the_rigid_grid() {
    use tress::collide::{BodyParams, HeadShape, body};
    use tress::groom::{GroomParams, Style, generate};
    use tress::sim::{Material, SimOptions, Simulation};
    let params = GroomParams {
        strands: 120,
        ..GroomParams::for_style(Style::Straight)
    };
    let groom = generate(&params).unwrap();
    let sdf = SdfParams {
        cell: 0.5,
        ..Default::default()
    };
    let mesh = ball(CENTRE, 5.0, 32, 64);
    let with = |shape: Box<dyn tress::collide::Shape>| -> Colliders {
        let mut c = body::colliders(
            HeadShape::Procedural(params.scalp),
            &BodyParams::preset("head_only").unwrap(),
            HeadTrack::still(Pose::IDENTITY),
        );
        c.add_prop("ball", shape, HeadTrack::still(Pose::IDENTITY));
        c
    };
    let rigid = with(Box::new(build(&mesh, &sdf).unwrap()));
    let frames = [(0.0, mesh.clone()), (0.5, mesh.clone()), (1.0, mesh.clone())];
    let still = with(Box::new(DeformingSdf::new(&frames, &sdf, None).unwrap()));
    let run = |c: Colliders| {
        let mut sim = Simulation::new(
            &groom,
            Material::preset("straight").unwrap(),
            SimOptions::default(),
            c,
            0.0,
        );
        for _ in 0..12 {
            sim.step_frame(1.0 / 24.0, true);
        }
        sim.x.clone()
    };
    let (a, b) = (run(rigid), run(still));
    assert!(a == b, "the still body mesh moves the hair differently");
    // The ball is in the hair's way (the result is not the same as without it).
    let free = run(body::colliders(
        HeadShape::Procedural(params.scalp),
        &BodyParams::preset("head_only").unwrap(),
        HeadTrack::still(Pose::IDENTITY),
    ));
    assert!(a != free);
}

/// An Alembic polymesh with animated points is read frame by frame at its samples' times.
#[test]
fn an_animated_alembic_polymesh_is_read_frame_by_frame() {
    use tress::formats::alembic::abc::TimeSampling;
    use tress::formats::alembic::abc::write::{ArchiveInfo, OArchive};
    use tress::formats::alembic::schema::polymesh::PolyMeshWriter;
    let dir = common::temp_dir("deforming-abc");
    let path = dir.join("ball.abc");
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
    let mut w = PolyMeshWriter::new(&mut ar, top, "body", ts).unwrap();
    for f in 1..=3 {
        let m = ball(CENTRE, radius(f), 8, 16);
        let idx: Vec<i32> = m.triangles.iter().flatten().map(|&i| i as i32).collect();
        let cnt = vec![3i32; m.triangles.len()];
        w.set(&mut ar, &m.positions, &idx, &cnt).unwrap();
    }
    ar.finish().unwrap();
    let frames = read_body_frames(path.to_str().unwrap(), &Default::default(), 24.0).unwrap();
    assert_eq!(frames.len(), 3);
    for (k, (t, m)) in frames.iter().enumerate() {
        assert!((t - (k + 1) as f64 / 24.0).abs() < 1e-9, "{t}");
        let far = m
            .positions
            .iter()
            .map(|p| Vec3::from_array(*p).distance(CENTRE))
            .fold(0.0f32, f32::max);
        assert!((far - radius(k + 1)).abs() < 1e-4, "{far}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
