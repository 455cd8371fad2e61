//! Fuzzes every groom and mesh reader on the same input: .hair, USC .data, PLY (with and without
//! a points-per-strand hint), TressFX, .tfxproj, .mss and OBJ.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tress_formats::{hair, mss, obj, ply, tfx, tfxproj, usc_data};

fuzz_target!(|data: &[u8]| {
    let _ = hair::parse(data).map(|f| f.into_strands());
    let _ = usc_data::parse(data);
    let _ = ply::parse(data, &ply::ReadOptions::default());
    let _ = ply::parse(data, &ply::ReadOptions { points_per_strand: Some(4) });
    let _ = tfx::parse(data);
    let _ = tfxproj::parse(data);
    let _ = mss::parse(data).map(|s| s.strands());
    let _ = obj::parse(data);
});
