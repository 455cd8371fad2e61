//! `tress bench sim`: simulation speed — particle-steps per second and seconds per 24 fps frame
//! with collisions and hair–hair interaction on — for 1 and 2 threads, on the real 10K-strand
//! `straight.hair` (when the shared data is there) and the procedural straight groom at the
//! paper anchors' size (000 Table 2: 16K strands × 25 particles).

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::groom::{Transform, UpAxis};
use crate::motion::RandomMotion;
use crate::scene::{SceneGroom, body_params, colliders, head_shape, load_groom, place_track};
use crate::sim::counters::Counters;
use crate::sim::{Material, SimOptions, Simulation};

#[derive(Debug, Serialize)]
pub struct SimBench {
    pub groom: String,
    pub strands: usize,
    pub particles: usize,
    pub threads: usize,
    pub frames: usize,
    pub seconds: f64,
    pub seconds_per_frame: f64,
    pub substeps: u64,
    pub particle_steps_per_s: f64,
    pub counters: Counters,
}

/// One case: `frames` frames of the gentle motion after a short pre-roll, timed without it.
fn case(scene: &SceneGroom, threads: usize, frames: usize) -> Result<SimBench> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Runtime(format!("thread pool: {e}")))?;
    pool.install(|| {
        let spec = if scene.procedural.is_some() {
            "procedural"
        } else {
            "sphere"
        };
        let (head, _) = head_shape(spec, scene, &Transform::default(), 0.2)?;
        let body = body_params(None, &head)?;
        let track = place_track(
            RandomMotion::preset("gentle")?.track()?,
            false,
            &Transform::default(),
            0.0,
        );
        let options = SimOptions {
            preroll_frames: 0,
            ..SimOptions::default()
        };
        let mut sim = Simulation::new(
            &scene.groom,
            Material::preset("straight")?,
            options,
            colliders(head, &body, track),
            0.0,
        );
        for _ in 0..6 {
            sim.step_frame(1.0 / 24.0, true);
        }
        sim.counters = Counters::default();
        let t = Instant::now();
        for _ in 0..frames {
            sim.step_frame(1.0 / 24.0, false);
        }
        let seconds = t.elapsed().as_secs_f64();
        Ok(SimBench {
            groom: scene.source.clone(),
            strands: sim.model.strand_count(),
            particles: sim.model.particle_count(),
            threads,
            frames,
            seconds,
            seconds_per_frame: seconds / frames as f64,
            substeps: sim.counters.steps,
            particle_steps_per_s: sim.counters.particle_steps as f64 / seconds,
            counters: sim.counters,
        })
    })
}

/// Runs the cases; `data` holds `grooms/straight.hair` (skipped when absent).
pub fn run(data: Option<&Path>, strands: usize, frames: usize) -> Result<Vec<SimBench>> {
    let mut scenes = Vec::new();
    if let Some(d) = data {
        let file = d.join("grooms/straight.hair");
        if file.exists() {
            // Cem Yuksel's model: Z up, about 0.37 cm per unit (a 16 cm wide scalp).
            let t = Transform {
                scale: 0.37,
                up: UpAxis::Z,
            };
            scenes.push(load_groom(&file.to_string_lossy(), &t, None)?);
        }
    }
    scenes.push(load_groom("straight", &Transform::default(), Some(strands))?);
    let mut rows = Vec::new();
    for scene in &scenes {
        for threads in [1, 2] {
            rows.push(case(scene, threads, frames)?);
        }
    }
    Ok(rows)
}
