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
