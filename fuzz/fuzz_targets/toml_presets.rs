//! Fuzzes the TOML readers of the main crate: job files (with their batch items expanded) and
//! every preset kind (material, motion with its track, groom, body, poses, training), each read
//! the way `tress` reads a file the user names, from a file written with the input.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let dir = std::env::temp_dir().join(format!("tress-fuzz-toml-{}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let path = dir.join("input.toml");
    if std::fs::write(&path, text).is_err() {
        return;
    }
    let p = path.to_string_lossy().to_string();
    if let Ok(job) = tress::pipeline::Job::load(&path) {
        let _ = job.items();
    }
    let _ = tress::sim::Material::preset(&p);
    if let Ok(m) = tress::motion::RandomMotion::preset(&p) {
        let _ = m.track();
    }
    let _ = tress::groom::presets::load(&p);
    let _ = tress::collide::BodyParams::preset(&p);
    let _ = tress::neural::drape::pose::PoseSet::load(&p);
    let _ = tress::neural::interp::train::InterpConfig::load(&p);
});
