//! Fuzzes the Alembic reader: open, walk every object, verify every sample against its digest,
//! and read curves, meshes and transforms through their schemas. Errors are fine; panics,
//! hangs and runaway allocations are bugs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tress_formats::alembic::abc::Archive;
use tress_formats::alembic::schema::SchemaKind;
use tress_formats::alembic::schema::curves::CurvesReader;
use tress_formats::alembic::schema::polymesh::PolyMeshReader;
use tress_formats::alembic::schema::xform::XformReader;

fuzz_target!(|data: &[u8]| {
    let Ok(ar) = Archive::from_bytes(data.to_vec()) else { return };
    let _ = ar.verify();
    let Ok(objects) = ar.objects() else { return };
    for o in &objects {
        match SchemaKind::of(o) {
            SchemaKind::Curves => {
                if let Ok(c) = CurvesReader::open(&ar, o) {
                    for i in 0..c.num_samples().min(4) {
                        let _ = c.positions(&ar, i);
                        let _ = c.counts(&ar, i);
                        let _ = c.kind(&ar, i);
                        let _ = c.widths(&ar, i, 1, 1);
                        let _ = c.uvs(&ar, i);
                        let _ = c.velocities(&ar, i);
                    }
                }
            }
            SchemaKind::PolyMesh => {
                if let Ok(m) = PolyMeshReader::open(&ar, o) {
                    for i in 0..m.num_samples().min(4) {
                        let _ = m.sample(&ar, i).map(|s| s.triangles());
                    }
                }
            }
            SchemaKind::Xform => {
                if let Ok(x) = XformReader::open(&ar, o) {
                    for i in 0..x.num_samples().min(4) {
                        let _ = x.local(&ar, i);
                        let _ = x.inherits(&ar, i);
                    }
                }
            }
            _ => {}
        }
    }
});
