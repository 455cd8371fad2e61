//! The job reader's unit tests: defaults and overrides, materials by style, batches, and
//! mistakes named.

use super::*;
use crate::upsample::Method;

fn job(text: &str) -> Result<Job> {
    Job::from_table(parse_table(text, "job.toml")?, "job.toml", Path::new("/tmp"))
}

#[test]
fn constant_motion_and_experiments_are_checked() {
    let j = job("name = 'c'\n[motion]\nvelocity = [10.0, 0.0, 0.0]\nangular_velocity = [0.0, 45.0, 0.0]\nmoving = 1.5")
        .unwrap();
    assert!(
        j.motion.preset.is_none(),
        "a constant motion replaces the default preset"
    );
    assert_eq!(j.motion.moving, Some(1.5));
    let e = job("name = 'c'\n[motion]\npivot = [0.0, 1.0, 0.0]")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("motion.pivot") && e.contains("angular_velocity"),
        "{e}"
    );
    let e = job("name = 'c'\n[motion]\nvelocity = [1.0, 0.0, 0.0]\nmoving = -1.0")
        .unwrap_err()
        .to_string();
    assert!(e.contains("motion.moving"), "{e}");
    let e = job("name = 'c'\n[motion]\nvelocity = [1.0, 0.0, 0.0]\npreset = 'walk'")
        .unwrap_err()
        .to_string();
    assert!(e.contains("one motion source"), "{e}");
    let b = job("name = 'b'\n[batch.experiments]\ncount = 3\nseed = 4").unwrap();
    let items = b.items().unwrap();
    let names: Vec<_> = items
        .iter()
        .map(|i| i.output.file_name().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["exp01", "exp02", "exp03"]);
    assert!(
        items
            .iter()
            .all(|i| i.motion.is_constant() && i.motion.moving.is_some())
    );
    assert_ne!(items[0].motion, items[1].motion);
    let e = job("name = 'b'\n[batch]\nmotions = ['walk']\n[batch.experiments]\ncount = 3")
        .unwrap_err()
        .to_string();
    assert!(e.contains("leave out batch.motions"), "{e}");
    let e = job("name = 'b'\n[batch.experiments]\nspeed = [5.0, 1.0]")
        .unwrap_err()
        .to_string();
    assert!(e.contains("batch.experiments.speed"), "{e}");
    let e = job("name = 'b'\n[guides]\nmethods = ['trajectory']")
        .unwrap_err()
        .to_string();
    assert!(e.contains("[batch.trajectory]"), "{e}");
    let e = job("name = 'b'\n[batch.trajectory]\nheld_out = 0")
        .unwrap_err()
        .to_string();
    assert!(e.contains("batch.trajectory.held_out"), "{e}");
    let e = job("name = 's'\n[scene]\nmss = 'no-such.mss'")
        .unwrap_err()
        .to_string();
    assert!(e.contains("scene.mss") && e.contains("no-such.mss"), "{e}");
}

#[test]
fn defaults_extends_and_overrides() {
    let j = job("name = 'x'\nframes = '1-10'\n[material]\nbend = 9000.0\n[simulate]\nsubsteps = 3").unwrap();
    assert_eq!((j.first, j.last), (1, 10));
    assert_eq!(j.material.bend, 9000.0);
    // Other material keys come from the straight preset.
    assert_eq!(j.material.stretch, Material::preset("straight").unwrap().stretch);
    assert_eq!(j.simulate.substeps, 3);
    assert_eq!(j.guides.methods, vec!["idw".to_string()]);
    assert_eq!(j.rows[0].method, Method::Idw);
    assert_eq!(j.output, Path::new("/tmp/out/job"));
    assert_eq!(j.groom.strands, Some(2000));
}

#[test]
fn the_material_follows_the_groom_style_unless_the_job_sets_one() {
    let curly = Material::preset("curly").unwrap();
    let straight = Material::preset("straight").unwrap();
    assert_ne!(curly, straight);
    let j = job("name = 'x'\n[groom]\npreset = 'curly'").unwrap();
    assert_eq!((j.material_preset.as_str(), &j.material), ("curly", &curly));
    let j = job("name = 'x'\n[groom]\npreset = 'wavy'").unwrap();
    assert_eq!(j.material, Material::preset("wavy").unwrap());
    // Per-key overrides apply over the style's preset.
    let j = job("name = 'x'\n[groom]\npreset = 'curly'\n[material]\nbend = 7.0").unwrap();
    assert_eq!((j.material.bend, j.material.stretch), (7.0, curly.stretch));
    // A preset the job names wins.
    let j = job("name = 'x'\n[groom]\npreset = 'curly'\n[material]\npreset = 'straight'").unwrap();
    assert_eq!(j.material, straight);
    // Batch items: each groom gets its own style's material, unless the job names one.
    let b = job("name = 'b'\n[batch]\ngrooms = ['straight', 'curly', 'wavy']").unwrap();
    let items = b.items().unwrap();
    assert_eq!(items[0].material, straight);
    assert_eq!(
        (items[1].material_preset.as_str(), &items[1].material),
        ("curly", &curly)
    );
    assert_eq!(items[2].material_preset, "wavy");
    let b = job("name = 'b'\n[material]\npreset = 'wavy'\n[batch]\ngrooms = ['straight', 'curly']").unwrap();
    assert!(b.items().unwrap().iter().all(|i| i.material_preset == "wavy"));
    // An unknown groom preset is reported when the job is read.
    let e = job("name = 'x'\n[groom]\npreset = 'curlyy'")
        .unwrap_err()
        .to_string();
    assert!(e.contains("curlyy"), "{e}");
}

#[test]
fn a_batch_expands_to_grooms_times_motions() {
    let j = job("name = 'b'\n[batch]\ngrooms = ['straight', 'curly']\nmotions = ['gentle', 'walk', 'turn']")
        .unwrap();
    let items = j.items().unwrap();
    assert_eq!(items.len(), 6);
    assert_eq!(items[4].name, "b/curly-walk");
    assert_eq!(items[4].output, Path::new("/tmp/out/job/curly-walk"));
    assert_eq!(items[4].groom.preset.as_deref(), Some("curly"));
    assert_eq!(items[4].motion.preset.as_deref(), Some("walk"));
    assert!(items.iter().all(|i| i.batch.is_none()));
    assert_eq!(job("name = 'x'").unwrap().items().unwrap().len(), 1);
}

#[test]
fn mistakes_are_named() {
    let e = job("name = 'x'\n[simulate]\nsubsteep = 3")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`simulate.substeep`") && e.contains("`substeps`"),
        "{e}"
    );
    let e = job("nmae = 'x'").unwrap_err().to_string();
    assert!(e.contains("`nmae`") && e.contains("`name`"), "{e}");
    let e = job("[material]\nbendd = 3.0").unwrap_err().to_string();
    assert!(e.contains("`material.bendd`") && e.contains("`bend`"), "{e}");
    let e = job("[guides]\nmethod = 'neurl'").unwrap_err().to_string();
    assert!(e.contains("idw") && e.contains("adaptive"), "{e}");
    let e = job("[guides]\nmethods = ['adaptive']").unwrap_err().to_string();
    assert!(e.contains("[training]"), "{e}");
    let e = job("[guides]\nmethods = ['idw+two_way']")
        .unwrap_err()
        .to_string();
    assert!(e.contains("skinning"), "{e}");
    let e = job("frames = 'soon'").unwrap_err().to_string();
    assert!(e.contains("frames"), "{e}");
    let e = job("[material]\nfriction = -1.0").unwrap_err().to_string();
    assert!(e.contains("material"), "{e}");
    let e = job("extends = 'nope.toml'").unwrap_err().to_string();
    assert!(e.contains("nope.toml"), "{e}");
    let e = job("extends = 'defualt'").unwrap_err().to_string();
    assert!(e.contains("did you mean the preset `default`"), "{e}");
    // Caught when the job is read, before any stage runs.
    let e = job("[groom]\npreset = 'wavey'").unwrap_err().to_string();
    assert!(e.contains("groom.preset") && e.contains("`wavy`"), "{e}");
    let e = job("[motion]\npreset = 'turn'\ngltf = 'a.glb'")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("`preset` and `gltf`") && e.contains("one motion source"),
        "{e}"
    );
    let e = job("[motion]\npreset = 'trun'").unwrap_err().to_string();
    assert!(e.contains("motion") && e.contains("`turn`"), "{e}");
    let e = job("[motion]\npreset = 'turn'\nnode = 'Head'")
        .unwrap_err()
        .to_string();
    assert!(e.contains("motion.node"), "{e}");
}

/// A value of the wrong kind names the key, the file's line and what was expected in plain
/// words.
#[test]
fn a_wrong_type_names_key_line_and_kind() {
    let dir = std::env::temp_dir().join(format!("tress-job-type-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("job.toml");
    std::fs::write(
        &path,
        "name = 'x'\n\n[groom]\npreset = 'wavy'\nstrands = \"2000\"\n",
    )
    .unwrap();
    let e = Job::load(&path).unwrap_err().to_string();
    assert!(e.contains(&format!("{}:5", path.display())), "{e}");
    assert!(
        e.contains("`groom.strands`") && e.contains("a whole number"),
        "{e}"
    );
    assert!(!e.contains("usize"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `groom.strands` counts a procedural groom's strands: with a groom file it would be ignored, so
/// it is an error naming the key and its line.
#[test]
fn strands_with_a_groom_file_is_an_error() {
    let dir = std::env::temp_dir().join(format!("tress-job-strands-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("g.ply"), b"").unwrap();
    let path = dir.join("job.toml");
    std::fs::write(
        &path,
        "name = 'x'\n[head]\ncollider = 'sphere'\n[groom]\nfile = 'g.ply'\nstrands = 500\n",
    )
    .unwrap();
    let e = Job::load(&path).unwrap_err().to_string();
    assert!(e.contains(&format!("{}:6", path.display())), "{e}");
    assert!(e.contains("groom.strands") && e.contains("procedural"), "{e}");
    // Without it the same job loads.
    std::fs::write(
        &path,
        "name = 'x'\n[head]\ncollider = 'sphere'\n[groom]\nfile = 'g.ply'\n",
    )
    .unwrap();
    Job::load(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

/// `groom.points_per_strand` cuts a PLY point cloud into strands when the job reads it; on a
/// preset or another format it would be ignored, so it is an error naming the key and its line,
/// as is a strand of fewer than 2 points.
#[test]
fn points_per_strand_cuts_a_ply_point_cloud_and_nothing_else() {
    let dir = std::env::temp_dir().join(format!("tress-job-pps-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Two strands of three points, no strand layout in the file.
    std::fs::write(
        dir.join("c.ply"),
        "ply\nformat ascii 1.0\nelement vertex 6\nproperty float x\nproperty float y\nproperty float z\nend_header\n\
         0 10 0\n0 11 0\n0 12 0\n3 10 0\n3 11 0\n3 12.5 0\n",
    )
    .unwrap();
    std::fs::write(dir.join("g.hair"), b"").unwrap();
    let path = dir.join("job.toml");
    let load = |groom: &str| {
        std::fs::write(
            &path,
            format!("name = 'x'\n[head]\ncollider = 'sphere'\n[groom]\n{groom}\npoints = 0\n"),
        )
        .unwrap();
        Job::load(&path)
    };
    let j = load("file = 'c.ply'\npoints_per_strand = 3").unwrap();
    let g = j.scene_spec().unwrap().load_groom().unwrap().groom;
    assert_eq!(g.counts(), &[3, 3]);
    assert_eq!(g.strand(1)[2], glam::Vec3::new(3.0, 12.5, 0.0));
    // Without the key the cloud has no strands to read; with a count that does not divide it,
    // the reader says so.
    let j = load("file = 'c.ply'").unwrap();
    assert!(j.scene_spec().unwrap().load_groom().is_err());
    let Err(e) = load("file = 'c.ply'\npoints_per_strand = 4")
        .unwrap()
        .scene_spec()
        .unwrap()
        .load_groom()
    else {
        panic!("4 points a strand read from 6 points");
    };
    let e = e.to_string();
    assert!(e.contains("c.ply") && e.contains("strands of 4 points"), "{e}");
    for (groom, why) in [
        ("preset = 'wavy'\npoints_per_strand = 3", "PLY"),
        ("file = 'g.hair'\npoints_per_strand = 3", "PLY"),
        ("file = 'c.ply'\npoints_per_strand = 1", "at least 2"),
    ] {
        let e = load(groom).unwrap_err().to_string();
        assert!(e.contains(&format!("{}:", path.display())), "{groom}: {e}");
        assert!(
            e.contains("groom.points_per_strand") && e.contains(why),
            "{groom}: {e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `[training]` alone trains on the whole range of motion; `frames = "all"` is a motion's whole
/// length at the job's rate.
#[test]
fn training_defaults_to_the_whole_range_of_motion() {
    let j = job("name = 't'\n[guides]\nmethods = ['static']\n[training]\n").unwrap();
    let t = j.training.unwrap();
    assert_eq!(t.motion.preset.as_deref(), Some("rom"));
    let (track, _) = crate::motion::sources::MotionSource::Preset {
        name: "rom".into(),
        seed: None,
    }
    .load(24.0)
    .unwrap();
    let frames = (track.duration() * 24.0).round() as i64;
    assert_eq!((t.first, t.last), (1, 1 + frames));
    assert!(frames > 1000, "{frames}");
    let j = job("name = 't'\nfps = 12.0\n[guides]\nmethods = ['static']\n[training]\nmotion = 'violent'\nframes = 'all'\n")
        .unwrap();
    let t = j.training.unwrap();
    assert_eq!((t.first, t.last), (1, 14), "1.1 s of violent at 12 fps");
    let e = job("name = 't'\n[guides]\nmethods = ['static']\n[training]\nframes = 'most'\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("training.frames"), "{e}");
}

/// `frames = "all"` of the shot is its motion's whole length (the dataset items' `all`), and a
/// constant motion has no length to take.
#[test]
fn shot_frames_all_take_the_whole_motion() {
    let j = job("name = 'a'\nframes = 'all'\n[motion]\npreset = 'violent'\n").unwrap();
    assert_eq!((j.first, j.last), (1, 27), "1.1 s of violent at 24 fps");
    let e = job("name = 'a'\nframes = 'all'\n[motion]\nvelocity = [1.0, 0.0, 0.0]\n")
        .unwrap_err()
        .to_string();
    assert!(e.contains("frames"), "{e}");
}

/// A job extending a job file in another folder keeps that file's relative paths pointing where
/// it meant them (book: "Paths are relative to the file that names them"); the job's own paths
/// stay relative to itself, and preset names are not paths.
#[test]
fn an_extended_jobs_paths_stay_relative_to_its_own_file() {
    let dir = std::env::temp_dir().join(format!("tress-job-extends-{}", std::process::id()));
    let shared = dir.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(
        shared.join("base.toml"),
        "name = 'base'\noutput = 'renders/base'\n[groom]\npreset = 'long.toml'\n[material]\npreset = 'soft.toml'\n[motion]\npreset = 'turn'\n",
    )
    .unwrap();
    std::fs::write(shared.join("soft.toml"), "extends = 'straight'\nbend = 123.0\n").unwrap();
    std::fs::write(shared.join("long.toml"), "extends = 'wavy'\nlength = 31.0\n").unwrap();
    let child = dir.join("shot.toml");
    std::fs::write(&child, "extends = 'shared/base.toml'\nname = 'shot'\n").unwrap();
    let j = Job::load(&child).unwrap();
    assert_eq!(j.output, shared.join("renders/base"));
    assert_eq!(j.material.bend, 123.0);
    assert_eq!(j.motion.preset.as_deref(), Some("turn"));
    let groom = crate::groom::presets::load(j.groom.preset.as_deref().unwrap()).unwrap();
    assert_eq!(groom.length, 31.0);
    // A groom preset file is the job's own file's neighbour too, not the working folder's.
    std::fs::write(
        shared.join("own.toml"),
        "name = 'own'\n[groom]\npreset = 'long.toml'\n",
    )
    .unwrap();
    let own = Job::load(&shared.join("own.toml")).unwrap();
    assert_eq!(
        Path::new(own.groom.preset.as_deref().unwrap()),
        shared.join("long.toml")
    );
    // The child's own output is its own folder's.
    std::fs::write(&child, "extends = 'shared/base.toml'\noutput = 'mine'\n").unwrap();
    assert_eq!(Job::load(&child).unwrap().output, dir.join("mine"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Corrections are named by id and joined by `+`, in any order; a row's name and its
/// correction say all of them; an unknown or repeated one is an error naming the entry.
#[test]
fn corrections_combine_and_mistakes_in_them_are_named() {
    let j = job(
        "[training]\nmotion = 'turn'\n[guides]\nmethods = ['idw+contact', 'adaptive+contact+two_way', 'static+projection+contact', 'static+none']",
    )
    .unwrap();
    let flags: Vec<(bool, bool, bool)> = j
        .rows
        .iter()
        .map(|r| (r.two_way, r.projection, r.contact))
        .collect();
    assert_eq!(
        flags,
        [
            (false, false, true),
            (true, false, true),
            (false, true, true),
            (false, false, false)
        ]
    );
    let corrections: Vec<String> = j.rows.iter().map(|r| r.correction()).collect();
    assert_eq!(
        corrections,
        ["contact", "two_way+contact", "projection+contact", "none"]
    );
    assert_eq!(
        j.rows[1].name(200),
        "200 guides + adaptive skinning + two-way correction + prop contact"
    );
    let e = job("[training]\nmotion = 'turn'\n[guides]\nmethods = ['static+push']")
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"push\"") && e.contains("contact"), "{e}");
    let e = job("[training]\nmotion = 'turn'\n[guides]\nmethods = ['static+contact+contact']")
        .unwrap_err()
        .to_string();
    assert!(e.contains("static+contact+contact") && e.contains("twice"), "{e}");
    // The spread projection: a correction of its own, joined like the others, and not with
    // `projection` (two ways of the same clean-up).
    let j = job("[training]\nmotion = 'turn'\n[guides]\nmethods = ['idw+spread', 'static+contact+spread']")
        .unwrap();
    let flags: Vec<(bool, bool, bool)> = j
        .rows
        .iter()
        .map(|r| (r.projection, r.contact, r.spread))
        .collect();
    assert_eq!(flags, [(false, false, true), (false, true, true)]);
    let corrections: Vec<String> = j.rows.iter().map(|r| r.correction()).collect();
    assert_eq!(corrections, ["spread", "contact+spread"]);
    assert_eq!(j.rows[0].name(200), "200 guides + IDW + spread projection");
    let e = job("[training]\nmotion = 'turn'\n[guides]\nmethods = ['static+projection+spread']")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("static+projection+spread") && e.contains("name one"),
        "{e}"
    );
}
