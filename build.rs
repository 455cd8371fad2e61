//! Embeds the build's identity: `TRESS_BUILD`, a hash of every source file that shapes tress's
//! results (both crates' sources, presets, manifests, lock file), and `TRESS_COMMIT` when built
//! from a git checkout. Stage records key on the build, so a binary with a changed solver
//! never reuses an older binary's results.

use std::path::{Path, PathBuf};

/// FNV-1a, 64-bit: enough to tell builds apart, and no build dependency.
fn fnv(h: &mut u64, bytes: &[u8]) {
    for b in bytes {
        *h ^= *b as u64;
        *h = h.wrapping_mul(0x100_0000_01b3);
    }
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let roots = [
        "src",
        "formats/src",
        "presets",
        "Cargo.toml",
        "formats/Cargo.toml",
        "Cargo.lock",
        "build.rs",
    ];
    let mut all = Vec::new();
    for r in roots {
        println!("cargo:rerun-if-changed={r}");
        let p = Path::new(r);
        if p.is_dir() {
            files(p, &mut all);
        } else if p.is_file() {
            all.push(p.to_path_buf());
        }
    }
    all.sort();
    let (mut a, mut b) = (0xcbf2_9ce4_8422_2325u64, 0x8422_2325_cbf2_9ce4u64);
    for f in &all {
        let rel = f.to_string_lossy().replace('\\', "/");
        let data = std::fs::read(f).unwrap_or_default();
        for h in [&mut a, &mut b] {
            fnv(h, rel.as_bytes());
            fnv(h, &(data.len() as u64).to_le_bytes());
            fnv(h, &data);
        }
        fnv(&mut b, &[0xff]);
    }
    println!("cargo:rustc-env=TRESS_BUILD={a:016x}{b:016x}");
    // The commit, for people (the build hash is what keys results).
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=TRESS_COMMIT={commit}");
    // Watch only what exists (a missing path would rerun this script on every build).
    if let Ok(head) = std::fs::read_to_string(".git/HEAD") {
        println!("cargo:rerun-if-changed=.git/HEAD");
        if let Some(r) = head.trim().strip_prefix("ref: ")
            && Path::new(".git").join(r).is_file()
        {
            println!("cargo:rerun-if-changed=.git/{r}");
        }
    }
}
