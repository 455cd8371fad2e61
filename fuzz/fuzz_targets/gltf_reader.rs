//! Fuzzes the glTF reader (JSON .gltf with embedded buffers, and binary .glb): parse, then
//! walk the animations' spans. No base folder, so no external buffer is opened.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = tress_formats::gltf::parse(data, None) {
        for a in &doc.animations {
            let _ = a.span();
        }
        let _ = doc.node_by_name("head");
    }
});
