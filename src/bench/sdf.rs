//! `tress bench sdf`: signed distance grid build time for the real head meshes at 1 mm and 2 mm
//! cells, and grid queries per second next to the analytic ellipsoid head (the baseline).

use std::path::Path;
use std::time::Instant;

use glam::Vec3;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::best_of;
use crate::collide::head_mesh::{read_mesh, transform_mesh};
use crate::collide::mesh_sdf::{SdfParams, build};
use crate::collide::{Ellipsoid, Shape};
use crate::error::Result;
use crate::groom::{Transform, UpAxis};

#[derive(Debug, Serialize)]
pub struct SdfSpeed {
    pub mesh: String,
    pub triangles: usize,
    pub cell_cm: f32,
    pub nodes: usize,
    pub build_s: f64,
    pub queries_per_s: f64,
    /// Analytic ellipsoid queries per second, same points.
    pub ellipsoid_queries_per_s: f64,
}

pub fn run(data: &Path) -> Result<Vec<SdfSpeed>> {
    let mut out = Vec::new();
    for (file, scale) in [
        ("heads/usc_head_model.obj", 100.0),
        ("heads/sintel/sintel.obj", 1.0),
    ] {
        let mut mesh = read_mesh(&data.join(file))?;
        transform_mesh(&mut mesh, &Transform { scale, up: UpAxis::Y });
        for cell in [0.2f32, 0.1] {
            let t = Instant::now();
            let g = build(
                &mesh,
                &SdfParams {
                    cell,
                    band_cells: 4,
                    padding: 2.0,
                },
            )?;
            let build_s = t.elapsed().as_secs_f64();
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let (lo, hi) = (g.origin, g.max_corner());
            let pts: Vec<Vec3> = (0..1_000_000)
                .map(|_| {
                    Vec3::new(
                        rng.random_range(lo.x..hi.x),
                        rng.random_range(lo.y..hi.y),
                        rng.random_range(lo.z..hi.z),
                    )
                })
                .collect();
            let q = best_of(3, || pts.iter().map(|p| g.sample(*p).0).sum::<f32>());
            let e = Ellipsoid {
                center: (lo + hi) * 0.5,
                radii: (hi - lo) * 0.35,
            };
            let qe = best_of(3, || pts.iter().map(|p| e.sdf(*p).0).sum::<f32>());
            out.push(SdfSpeed {
                mesh: file.to_string(),
                triangles: mesh.triangles.len(),
                cell_cm: cell,
                nodes: g.values.len(),
                build_s,
                queries_per_s: pts.len() as f64 / q.as_secs_f64(),
                ellipsoid_queries_per_s: pts.len() as f64 / qe.as_secs_f64(),
            });
        }
    }
    Ok(out)
}
