//! Checkpoints: the simulation state (time, positions, velocities, exact bits) with a digest of
//! everything that produced it, so a resumed run continues bit-identically — or refuses to
//! resume from a checkpoint of different inputs.

use std::path::Path;

use glam::Vec3;

use super::solver::Simulation;
use crate::error::{Error, Result};
use tress_formats::bytes::ByteReader;

const MAGIC: &[u8; 8] = b"TRSCKPT\0";
const VERSION: u32 = 1;

/// A digest of the simulation's inputs: rest groom, springs, material, options, head motion.
pub fn setup_digest(sim: &Simulation) -> [u8; 16] {
    let mut bytes: Vec<u8> = bytemuck::cast_slice(&sim.model.rest).to_vec();
    bytes.extend_from_slice(bytemuck::cast_slice(&sim.model.counts));
    bytes.extend_from_slice(format!("{:?}{:?}", sim.material, sim.options).as_bytes());
    for (t, p) in sim.colliders.head.keys() {
        bytes.extend_from_slice(&t.to_le_bytes());
        for v in p
            .rotation
            .to_array()
            .iter()
            .chain(p.translation.to_array().iter())
        {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
    }
    for c in &sim.colliders.parts {
        bytes.extend_from_slice(c.name.as_bytes());
    }
    tress_formats::alembic::abc::hash::digest(&bytes).to_bytes()
}

/// Saves the state after output frame `frame`.
pub fn save(path: &Path, sim: &Simulation, frame: f64) -> Result<()> {
    let mut out = Vec::with_capacity(64 + sim.x.len() * 24);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&setup_digest(sim));
    out.extend_from_slice(&frame.to_le_bytes());
    out.extend_from_slice(&sim.time.to_le_bytes());
    out.extend_from_slice(&(sim.x.len() as u64).to_le_bytes());
    out.extend_from_slice(bytemuck::cast_slice(&sim.x));
    out.extend_from_slice(bytemuck::cast_slice(&sim.v));
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    tress_formats::atomic::write(path, &out).map_err(|e| crate::error::output_error(path, e))
}

/// Whether the checkpoint at `path` was made by a simulation of the same inputs as `sim` (a
/// checkpoint of other inputs cannot be resumed).
pub fn matches(path: &Path, sim: &Simulation) -> bool {
    let Ok(data) = std::fs::read(path) else {
        return false;
    };
    data.len() >= 28 && &data[..8] == MAGIC && data[12..28] == setup_digest(sim)
}

/// Restores a state saved by [`save`] into `sim` (built from the same inputs); returns the
/// output frame it was saved after.
pub fn load(path: &Path, sim: &mut Simulation) -> Result<f64> {
    let bad = |m: &str| Error::Invalid(format!("{}: {m}", path.display()));
    let data = std::fs::read(path).map_err(|e| bad(&e.to_string()))?;
    if data.len() < 48 || &data[..8] != MAGIC {
        return Err(bad("not a tress simulation checkpoint"));
    }
    let (body, crc) = data.split_at(data.len() - 4);
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
        return Err(bad("the checkpoint is damaged (checksum mismatch)"));
    }
    let mut r = ByteReader::new(body);
    r.take(8, "magic").map_err(|e| bad(&e.to_string()))?;
    let version = r.u32("version").map_err(|e| bad(&e.to_string()))?;
    if version != VERSION {
        return Err(bad(&format!(
            "checkpoint version {version} (this tress writes {VERSION})"
        )));
    }
    let digest = r.array::<16>("digest").map_err(|e| bad(&e.to_string()))?;
    if digest != setup_digest(sim) {
        return Err(bad(
            "the checkpoint was made with other inputs (groom, material, options or motion)",
        ));
    }
    let frame = f64::from_le_bytes(r.array("frame").map_err(|e| bad(&e.to_string()))?);
    let time = f64::from_le_bytes(r.array("time").map_err(|e| bad(&e.to_string()))?);
    let n = r.u64("count").map_err(|e| bad(&e.to_string()))? as usize;
    if n != sim.x.len() {
        return Err(bad("the checkpoint holds another number of particles"));
    }
    let x = r.vec3_vec(n, "positions").map_err(|e| bad(&e.to_string()))?;
    let v = r.vec3_vec(n, "velocities").map_err(|e| bad(&e.to_string()))?;
    sim.x = bytemuck::allocation::cast_vec::<[f32; 3], Vec3>(x);
    sim.v = bytemuck::allocation::cast_vec::<[f32; 3], Vec3>(v);
    sim.time = time;
    Ok(frame)
}
