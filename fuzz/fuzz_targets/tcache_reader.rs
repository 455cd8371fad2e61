//! Fuzzes the `.tcache` and `.sdf` readers: open, then decode every frame.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tress_formats::tcache::TcacheReader;

fuzz_target!(|data: &[u8]| {
    let _ = tress_formats::sdf::parse(data);
    let Ok(mut r) = TcacheReader::from_bytes(data.to_vec()) else { return };
    for i in 0..r.len().min(40) {
        let _ = r.frame(i);
    }
});
