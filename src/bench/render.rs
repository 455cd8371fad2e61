//! `tress bench render`: seconds per frame of the strand renderer on a full head of hair
//! (100,000 strands × 25 points on the procedural head, 1024² by default) for a given thread
//! count, split into its phases, beside the same frame without self-shadowing and without the
//! head (the baselines, same run).

use std::time::Instant;

use serde::Serialize;

use super::best_of;
use crate::collide::{BodyParams, HeadShape, body};
use crate::error::Result;
use crate::groom::{GroomParams, Style, generate};
use crate::motion::{HeadTrack, Pose};
use crate::render::camera::{Camera, View};
use crate::render::frame::background;
use crate::render::hair::{
    draw_segments, project, segments_in_view, shade, used_vertices, vertex_light, vertex_widths,
};
use crate::render::shade::Lighting;

#[derive(Debug, Serialize)]
pub struct RenderSpeed {
    pub strands: usize,
    pub points: usize,
    pub width: u32,
    pub height: u32,
    pub threads: usize,
    /// The whole frame: head traced, shadow map, shading, ribbons, resolve (best of runs).
    pub seconds_per_frame: f64,
    /// Phases of one frame (seconds).
    pub head_s: f64,
    pub shadow_map_s: f64,
    pub shading_s: f64,
    pub ribbons_s: f64,
    /// Baselines in the same run: the frame without self-shadowing, and hair alone.
    pub no_shadows_seconds_per_frame: f64,
    pub hair_only_seconds_per_frame: f64,
    /// Segments of the groom, and those drawn (in the picture and not behind the head).
    pub segments: usize,
    pub segments_in_view: usize,
}

pub fn run(strands: usize, points: usize, size: u32, threads: usize, runs: usize) -> Result<RenderSpeed> {
    let params = GroomParams {
        strands,
        points,
        ..GroomParams::for_style(Style::Straight)
    };
    let g = generate(&params)?;
    let (pts, counts) = (g.points(), g.counts());
    let head_only = BodyParams {
        neck_radius: 0.0,
        shoulder_radius: 0.0,
        ..BodyParams::default()
    };
    let colliders = body::colliders(
        HeadShape::Procedural(params.scalp),
        &head_only,
        HeadTrack::still(Pose::IDENTITY),
    );
    let at = colliders.at(0.0);
    let camera = Camera::fit(View::ThreeQuarter, pts, size, size);
    let lighting = Lighting::default();
    let widths = vertex_widths(pts.len(), g.vertex_widths().as_deref(), 1.0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| crate::error::Error::Runtime(format!("thread pool: {e}")))?;
    pool.install(|| {
        let frame = |lighting: &Lighting, head: bool| {
            let mut film = background(&camera, head.then_some(&at), pts, lighting);
            crate::render::hair::draw_hair(&mut film, pts, counts, &widths, None, &camera, lighting);
            film.resolve()
        };
        let whole = best_of(runs, || frame(&lighting, true)).as_secs_f64();
        let unshadowed = Lighting {
            shadows: false,
            ..lighting
        };
        let no_shadows = best_of(runs, || frame(&unshadowed, true)).as_secs_f64();
        let hair_only = best_of(runs, || frame(&lighting, false)).as_secs_f64();
        // Phases, timed once each.
        let t = Instant::now();
        let mut film = background(&camera, Some(&at), pts, &lighting);
        let head_s = t.elapsed().as_secs_f64();
        // The ribbons' phase: projection, culling, sorting and drawing (the film's shadowing
        // of the head is part of the shadow map's).
        let t = Instant::now();
        let mut verts = project(pts, &widths, &camera);
        let in_view = segments_in_view(&film, &verts, counts);
        let mut ribbons_s = t.elapsed().as_secs_f64();
        let used = used_vertices(&in_view, pts.len());
        let t = Instant::now();
        let (lit, map) = vertex_light(pts, counts, &widths, &lighting, Some(&used));
        if let Some(map) = &map {
            film.shadow_solids(|p| map.transmittance(p));
        }
        let shadow_map_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let colors = shade(pts, counts, &lit, &camera, &lighting, Some(&used));
        let shading_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for (v, c) in verts.iter_mut().zip(&colors) {
            v.color = *c;
        }
        draw_segments(&mut film, &verts, &in_view);
        ribbons_s += t.elapsed().as_secs_f64();
        let segments = counts.iter().map(|&n| (n as usize).saturating_sub(1)).sum();
        Ok(RenderSpeed {
            strands: counts.len(),
            points,
            width: size,
            height: size,
            threads,
            seconds_per_frame: whole,
            head_s,
            shadow_map_s,
            shading_s,
            ribbons_s,
            no_shadows_seconds_per_frame: no_shadows,
            hair_only_seconds_per_frame: hair_only,
            segments,
            segments_in_view: in_view.len(),
        })
    })
}
