//! Fuzzes the head-track readers: CSV and JSON on the same text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = tress_formats::track::parse_csv(text);
    let _ = tress_formats::track::parse_json(text);
});
