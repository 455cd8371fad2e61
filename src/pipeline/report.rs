//! The report stage: `report.md` for people, `report.json` for scripts, `error.png`.

use serde_json::json;

use super::evaluate::MetricsFile;
use super::preview::PreviewReport;
use super::run::{Ctx, RunReport};
use crate::error::Result;
use crate::metrics::table::markdown;
use crate::render::plot::line_plot;

fn read_json<T: serde::de::DeserializeOwned>(ctx: &Ctx, name: &str) -> Option<T> {
    let text = std::fs::read_to_string(ctx.out.join(name)).ok()?;
    serde_json::from_str(&text).ok()
}

pub fn report(ctx: &Ctx, run: &RunReport) -> Result<Vec<String>> {
    let job = ctx.job;
    let metrics: Option<MetricsFile> = read_json(ctx, "metrics.json");
    let preview: Option<PreviewReport> = read_json(ctx, "preview.json");
    let mut out = Vec::new();
    let mut md = format!("# {} — tress report\n\n", job.name);
    md.push_str("## Inputs\n\n| | |\n| --- | --- |\n");
    md.push_str(&format!("| tress | {} |\n", crate::VERSION));
    let groom = match (&job.groom.file, &job.groom.preset) {
        (Some(f), _) => f.clone(),
        (None, Some(p)) => format!(
            "procedural `{p}`, {} strands, seed {}",
            job.groom.strands.unwrap_or(0),
            job.seed
        ),
        _ => "–".into(),
    };
    let motion = job
        .motion
        .preset
        .clone()
        .or(job.motion.gltf.clone())
        .or(job.motion.abc.clone())
        .or(job.motion.track.clone())
        .unwrap_or("still head".into());
    for (k, v) in [
        (
            "job file",
            job.file
                .as_ref()
                .map(|f| f.display().to_string())
                .unwrap_or("–".into()),
        ),
        (
            "groom",
            format!("{groom}; {} points per strand", job.groom.points),
        ),
        ("head", job.head.collider.clone()),
        ("motion", motion),
        (
            "material",
            format!(
                "`{}` (stretch {}, bend {}, twist {}, altitude {}, friction {})",
                job.material_preset,
                job.material.stretch,
                job.material.bend,
                job.material.twist,
                job.material.altitude,
                job.material.friction
            ),
        ),
        ("frames", format!("{}–{} at {} fps", job.first, job.last, job.fps)),
        (
            "simulation",
            format!(
                "{:?}, {} substeps{}, hair–hair {}",
                job.simulate.integrator,
                job.simulate.substeps,
                if job.simulate.adaptive { " (adaptive)" } else { "" },
                if job.simulate.hair_hair { "on" } else { "off" }
            ),
        ),
        (
            "guides",
            format!(
                "{} on the root-UV lattice, upsampled by {} from {} neighbours",
                job.guides.count,
                job.guides.method.to_uppercase(),
                job.guides.neighbors
            ),
        ),
    ] {
        md.push_str(&format!("| {k} | {v} |\n"));
    }
    md.push_str("\n## Stages\n\n| stage | status | seconds | outputs |\n| --- | --- | --- | --- |\n");
    for s in &run.stages {
        let status = if s.status == "cached" {
            "cached".to_string()
        } else {
            "ran".to_string()
        };
        let chunk = s.chunk.map(|(i, n)| format!(" ({i}/{n})")).unwrap_or_default();
        md.push_str(&format!(
            "| {}{chunk} | {status} | {:.1} | {} |\n",
            s.stage.name(),
            s.seconds,
            s.outputs.join(", ")
        ));
    }
    md.push_str("\n(`cached`: the stage's inputs had not changed since it ran; its time is that run's.)\n");
    if let Some(m) = &metrics {
        md.push_str(&format!(
            "\n## Against the ground truth\n\n{} strands, {} vertices, {} frames; lengths in cm.\n\n",
            m.strands,
            m.vertices,
            m.methods.first().map_or(0, |x| x.summary.frames)
        ));
        let rows: Vec<_> = m
            .methods
            .iter()
            .enumerate()
            .map(|(i, x)| {
                (
                    x.name.clone(),
                    x.summary,
                    if i == 0 {
                        preview.as_ref().map(|p| (p.mean_psnr, p.mean_ssim))
                    } else {
                        None
                    },
                )
            })
            .collect();
        md.push_str(&markdown(&rows));
        md.push_str("\nRMSE over every vertex of every frame; length error per strand against the ground truth's; tangent: mean angle between corresponding segments; penetrating: share of non-root vertices inside the head or body; jitter: mean ‖x(t) − 2x(t−1) + x(t−2)‖ (the ground truth's in brackets); preview PSNR / SSIM: the method's preview pictures against the ground truth's, same camera.\n\n![error per frame](error.png)\n");
        let colours = [[200, 40, 40], [40, 90, 200], [40, 150, 60]];
        let series: Vec<_> = m
            .methods
            .iter()
            .enumerate()
            .map(|(i, x)| {
                (
                    x.name.to_uppercase(),
                    x.frames.iter().map(|f| (f.frame, f.rmse)).collect(),
                    colours[i % 3],
                )
            })
            .collect();
        let img = line_plot(&series, "RMSE PER FRAME", "FRAME", "CM", 720, 320);
        crate::render::save_png(&ctx.out.join("error.png"), &img)?;
        out.push("error.png".to_string());
    }
    if preview.is_some() {
        md.push_str(&format!(
            "\n## Previews\n\nThe method's result (every {} frames):\n\n![result](preview.png)\n\nThe ground truth:\n\n![ground truth](preview_gt.png)\n\nGround truth | {} | error (vertex distance, colour scale in the legend):\n\n![comparison](compare.png)\n",
            job.preview.every,
            job.guides.method.to_uppercase()
        ));
    }
    md.push_str("\n## Files\n\n");
    for s in &run.stages {
        for o in &s.outputs {
            md.push_str(&format!("- `{o}`\n"));
        }
    }
    let doc = json!({
        "job": job.name,
        "job_file": job.file,
        "output": ctx.out,
        "settings": job.table,
        "stages": run.stages,
        "metrics": metrics,
        "preview": preview,
        "tress": crate::VERSION,
        "tress_build": crate::build_id(),
    });
    for (name, bytes) in [
        ("report.md", md.into_bytes()),
        ("report.json", serde_json::to_vec_pretty(&doc).expect("json")),
    ] {
        let path = ctx.out.join(name);
        tress_formats::atomic::write(&path, &bytes)
            .map_err(|e| crate::groom::files::output_error(&path, e))?;
        out.push(name.to_string());
    }
    Ok(out)
}

/// `batch.md` in a batch's output folder: one row per item, its method against the ground truth.
pub fn batch_summary(job: &super::Job, runs: &[RunReport]) -> Result<std::path::PathBuf> {
    let mut md = format!("# {} — batch of {} items\n\n", job.name, runs.len());
    let mut rows = Vec::new();
    for r in runs {
        let text = std::fs::read_to_string(r.output.join("metrics.json")).ok();
        let m: Option<MetricsFile> = text.and_then(|t| serde_json::from_str(&t).ok());
        if let Some(m) = m
            && let Some(first) = m.methods.first()
        {
            let item = r
                .output
                .file_name()
                .map(|f| f.to_string_lossy().to_string())
                .unwrap_or_default();
            rows.push((
                format!("[{item}]({item}/report.md): {}", first.name),
                first.summary,
                None,
            ));
        }
    }
    md.push_str(&markdown(&rows));
    let path = job.output.join("batch.md");
    tress_formats::atomic::write(&path, md.as_bytes())
        .map_err(|e| crate::groom::files::output_error(&path, e))?;
    Ok(path)
}
