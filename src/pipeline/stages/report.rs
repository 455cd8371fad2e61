//! `report`: `report.md` for people, `report.json` for scripts, `error.png` — after every
//! other stage, on every run.

use serde_json::json;

use super::eval::{METRICS, MetricsFile};
use super::preview::{FIGURES, PreviewReport};
use super::upsample::RowTimes;
use super::{drape, fit, guide_sim, guides, hairmesh, two_way, upsample};
use crate::error::Result;
use crate::metrics::table::markdown;
use crate::pipeline::engine::{Artefact, Chunk, Ctx, Info, Inputs, Stage};
use crate::pipeline::job::{Job, MethodRow, Selection};
use crate::render::plot::line_plot;
use crate::upsample::Method;

pub const NAME: &str = "report";
pub const REPORT_MD: Artefact = Artefact::new(NAME, "report.md");
pub const REPORT_JSON: Artefact = Artefact::new(NAME, "report.json");
/// RMSE per frame of every row.
pub const ERROR_PLOT: Artefact = Artefact::new(NAME, "error.png");

pub struct Report;

impl Stage for Report {
    fn info(&self) -> Info {
        Info::new(NAME, "report.md and report.json").summary()
    }

    fn upstream(&self, _: &Job) -> Vec<&'static str> {
        vec![]
    }

    fn inputs(&self, _: &Ctx, _: Option<Chunk>) -> Result<Inputs> {
        Ok(Inputs::new(&serde_json::json!({})))
    }

    fn run(&self, cx: &Ctx, _: Option<Chunk>) -> Result<Vec<String>> {
        report(cx)
    }
}

fn read_json<T: serde::de::DeserializeOwned>(cx: &Ctx, name: &str) -> Option<T> {
    let text = std::fs::read_to_string(cx.out.join(name)).ok()?;
    serde_json::from_str(&text).ok()
}

fn report(cx: &Ctx) -> Result<Vec<String>> {
    let job = cx.job;
    let metrics: Option<MetricsFile> = read_json(cx, METRICS.path);
    let preview: Option<PreviewReport> = read_json(cx, FIGURES.path);
    let mut out = Vec::new();
    let mut md = format!("# {} — tress report\n\n", job.name);
    md.push_str("## Inputs\n\n| | |\n| --- | --- |\n");
    md.push_str(&format!("| tress | {} |\n", crate::VERSION));
    for (k, v) in inputs(cx) {
        md.push_str(&format!("| {k} | {v} |\n"));
    }
    md.push_str(&stages_table(cx));
    if let Some(m) = &metrics {
        md.push_str(&against_truth(m, preview.as_ref()));
        md.push_str(&timings_section(cx));
        out.push(error_plot(cx, m)?);
    }
    if preview.is_some() {
        md.push_str(&format!(
            "\n## Previews\n\nThe result of `{}` (every {} frames):\n\n![result](preview.png)\n\nThe ground truth:\n\n![ground truth](preview_gt.png)\n\nGround truth | {} | error of `{}` (vertex distance, colour scale in the legend):\n\n![comparison](compare.png)\n\nThe same, animated over every previewed frame:\n\n![animated comparison](compare.apng)\n",
            job.rows[0].key,
            job.preview.every,
            job.rows.iter().take(3).map(|r| format!("`{}`", r.key)).collect::<Vec<_>>().join(" | "),
            job.rows[0].key
        ));
    }
    if let Some(p) = &preview {
        md.push_str(&preview_split(p));
    }
    md.push_str("\n## Files\n\n");
    for s in &cx.done {
        for o in &s.outputs {
            md.push_str(&format!("- `{o}`\n"));
        }
    }
    let doc = json!({
        "job": job.name,
        "job_file": job.file,
        "output": cx.out,
        "settings": job.table,
        "stages": cx.done,
        "metrics": metrics,
        "preview": preview,
        "tress": crate::VERSION,
        "tress_build": crate::build_id(),
    });
    for (name, bytes) in [
        (REPORT_MD.path, md.into_bytes()),
        (REPORT_JSON.path, serde_json::to_vec_pretty(&doc).expect("json")),
    ] {
        let path = cx.out.join(name);
        tress_formats::atomic::write(&path, &bytes).map_err(|e| crate::error::output_error(&path, e))?;
        out.push(name.to_string());
    }
    Ok(out)
}

/// The report's inputs table: what the job ran on.
fn inputs(cx: &Ctx) -> Vec<(&'static str, String)> {
    let job = cx.job;
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
    vec![
        (
            "job file",
            job.file
                .as_ref()
                .map(|f| f.display().to_string())
                .unwrap_or("–".into()),
        ),
        (
            "groom",
            format!(
                "{groom}; {} points per strand{}",
                job.groom.points,
                if job.groom.edits.is_empty() {
                    String::new()
                } else {
                    format!("; edits `{}`", job.groom.edits.join("`, `"))
                }
            ),
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
        ("guides", guides_line(cx)),
        (
            "training",
            match &job.training {
                Some(t) => format!(
                    "motion `{}`{}, frames {}–{}",
                    t.spec.motion,
                    t.spec.seed.map(|s| format!(" (seed {s})")).unwrap_or_default(),
                    t.first,
                    t.last
                ),
                None => "–".into(),
            },
        ),
        (
            "neural model",
            match &job.neural.model {
                Some(m) => format!("`{m}` (given, not trained here)"),
                None if job.neural_config.is_some() => "trained on the training simulation".into(),
                None => "–".into(),
            },
        ),
        ("props", props_line(cx)),
    ]
}

/// The guides row of the inputs table: how many, how chosen, the methods.
fn guides_line(cx: &Ctx) -> String {
    let job = cx.job;
    format!(
        "{} ({}); methods {}",
        guides::indices(cx).map(|g| g.len()).unwrap_or(job.guides.count),
        match (job.neural_config.is_some(), job.guides.selection) {
            (true, _) => "the neural interpolator's uv-grid guides, shared by every method",
            (false, Selection::Lattice) => "root-UV lattice",
            (false, Selection::Sparse) => "sparse coding of the training motion, 001 §6.3",
        },
        job.rows
            .iter()
            .map(|r| format!("`{}`", r.key))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The props row of the inputs table.
fn props_line(cx: &Ctx) -> String {
    let job = cx.job;
    if job.colliders.is_empty() {
        "–".into()
    } else {
        job.colliders
            .iter()
            .map(|c| format!("{} r {} cm, velocity {:?} cm/s", c.shape, c.radius, c.velocity))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The stages of this run, with their status, time and outputs.
fn stages_table(cx: &Ctx) -> String {
    let mut md = String::new();
    md.push_str("\n## Stages\n\n| stage | status | seconds | outputs |\n| --- | --- | --- | --- |\n");
    for s in &cx.done {
        let status = if s.status == "cached" {
            "cached".to_string()
        } else {
            "ran".to_string()
        };
        let chunk = s.chunk.map(|(i, n)| format!(" ({i}/{n})")).unwrap_or_default();
        md.push_str(&format!(
            "| {}{chunk} | {status} | {:.1} | {} |\n",
            s.stage,
            s.seconds,
            s.outputs.join(", ")
        ));
    }
    md.push_str("\n(`cached`: the stage's inputs had not changed since it ran; its time is that run's.)\n");
    md
}

/// Every row's summary against the ground truth, with its preview PSNR / SSIM.
fn against_truth(m: &MetricsFile, preview: Option<&PreviewReport>) -> String {
    let mut md = String::new();
    md.push_str(&format!(
        "\n## Against the ground truth\n\n{} strands, {} vertices, {} frames; lengths in cm.\n\n",
        m.strands,
        m.vertices,
        m.methods.first().map_or(0, |x| x.summary.frames)
    ));
    let rows: Vec<_> = m
        .methods
        .iter()
        .map(|x| {
            let img = preview.and_then(|p| {
                p.rows
                    .iter()
                    .find(|r| r.key == x.key && !x.oracle)
                    .map(|r| (r.mean_psnr, r.mean_ssim))
            });
            (x.name.clone(), x.summary, img)
        })
        .collect();
    md.push_str(&markdown(&rows));
    md.push_str("\nRMSE over every vertex of every frame; max: the worst vertex of any strand and frame; length error per strand against the ground truth's; tangent: mean angle between corresponding segments; penetrating: share of non-root vertices inside a solid (head, body, props); jitter: mean ‖x(t) − 2x(t−1) + x(t−2)‖ (the ground truth's in brackets); remote interactions (000 §5.7): of each sampled particle's 50 nearest particles of other strands, the share whose strand is rooted more than 16/128 away in root UV (the ground truth's in brackets), and the share of the ground truth's such pairs the method keeps; preview PSNR / SSIM: the method's rendered pictures (shaded, self-shadowed hair ribbons over the head) against the ground truth's, same camera, light and widths. Oracle rows feed the method the ground truth's own guide strands: their error is the interpolation's alone.\n\n![error per frame](error.png)\n");
    md
}

/// RMSE per frame of every row (`error.png`).
fn error_plot(cx: &Ctx, m: &MetricsFile) -> Result<String> {
    let colours = [
        [200, 40, 40],
        [40, 90, 200],
        [40, 150, 60],
        [150, 80, 190],
        [230, 140, 20],
        [20, 160, 170],
    ];
    let series: Vec<_> = m
        .methods
        .iter()
        .filter(|x| !x.oracle)
        .enumerate()
        .map(|(i, x)| {
            (
                x.key.clone(),
                x.frames.iter().map(|f| (f.frame, f.rmse)).collect(),
                colours[i % colours.len()],
            )
        })
        .collect();
    let img = line_plot(&series, "RMSE per frame", "frame", "RMSE (cm)", 720, 320)?;
    crate::render::save_png(&cx.path(ERROR_PLOT), &img)?;
    Ok(ERROR_PLOT.path.to_string())
}

/// Where each row's preview error falls: on the ground truth's hair (strands a little off, or
/// missing) or where it shows none (strands drawn where there are none). Preview PSNR is ruled
/// by the second part more than RMSE suggests: a stray strand over the background costs a
/// whole line of pixels, one off by a millimetre inside the hair little.
fn preview_split(p: &PreviewReport) -> String {
    let mut md = String::from(
        "\nWhere the preview error falls (the preview frames, same camera): of each row's squared picture error, the share on pixels where the ground truth shows no hair (strands drawn where there are none), averaged over the frames; the rest lies on the ground truth's hair.\n\n| method | preview PSNR (dB) | error off the ground truth's hair |\n| --- | --- | --- |\n",
    );
    for r in &p.rows {
        md.push_str(&format!(
            "| `{}` | {:.1} | {:.0} % |\n",
            r.key,
            r.mean_psnr,
            100.0 * r.mean_off_hair
        ));
    }
    md.push_str("\nEach compared row's picture against the ground truth's (white: equal; red: error where the ground truth shows no hair; blue: error on its hair):\n\n![where the preview error falls](where.png)\n");
    md
}

/// Where each method's time went, per frame (001 §7.3's parts: guide simulation, grouping and
/// assignment, interpolation, correction), and the skinning fit.
fn timings_section(cx: &Ctx) -> String {
    let job = cx.job;
    let mut md = String::new();
    let per_row = row_times(cx);
    if per_row.is_empty() {
        return md;
    }
    md.push_str("\n## Time per frame\n\n");
    md.push_str(&format!(
        "{} strands on this machine ({} threads); the guide simulation is shared by the rows without two-way correction.\n\n",
        cx.job.groom.strands.map(|n| n.to_string()).unwrap_or_else(|| "the groom's".into()),
        rayon::current_num_threads()
    ));
    md.push_str("| method | guide or mesh simulation, or drape (ms) | grouping + assignment (ms) | interpolation (ms) | correction (ms) |\n| --- | --- | --- | --- | --- |\n");
    let drape = DrapeSummary::of(cx);
    for row in &job.rows {
        if let Some(t) = per_row.get(&row.key) {
            md.push_str(&row_timing(cx, row, t, drape.as_ref()));
        }
    }
    md.push_str(&hairmesh_line(cx).unwrap_or_default());
    if let Some(d) = &drape {
        md.push_str(&drape_line(d));
    }
    md.push_str(&skinning_line(cx).unwrap_or_default());
    md
}

/// Upsampling frames and seconds (grouping, interpolation, projection, contact) of every chunk,
/// summed per row.
fn row_times(cx: &Ctx) -> std::collections::BTreeMap<String, RowTimes> {
    let mut per_row: std::collections::BTreeMap<String, RowTimes> = Default::default();
    if let Ok(parts) = upsample::parts(cx) {
        for p in parts.iter().filter(|p| p.path.starts_with("parts/times.")) {
            let text = std::fs::read_to_string(cx.out.join(&p.path)).unwrap_or_default();
            let rows: Vec<RowTimes> = serde_json::from_str(&text).unwrap_or_default();
            for r in rows {
                let e = per_row.entry(r.key).or_default();
                e.frames += r.frames;
                e.grouping += r.grouping;
                e.interpolation += r.interpolation;
                e.projection += r.projection;
                e.contact += r.contact;
            }
        }
    }
    per_row
}

/// One row of the time table, from its summed [`RowTimes`].
fn row_timing(cx: &Ctx, row: &MethodRow, t: &RowTimes, drape: Option<&DrapeSummary>) -> String {
    let job = cx.job;
    let frames = (job.last - job.first + 1).max(1) as f64;
    let stage_seconds = |stage: &str| cx.seconds(stage);
    let guide_sim = stage_seconds(guide_sim::NAME).map(|s| 1000.0 * s / frames);
    let n = t.frames.max(1) as f64;
    let (sim, correction) = if row.method == Method::Hairmesh {
        (stage_seconds(hairmesh::NAME).map(|s| 1000.0 * s / frames), None)
    } else if row.method == Method::Drape {
        (drape.as_ref().map(|d| 1000.0 * d.seconds / d.frames), None)
    } else if row.two_way {
        let st: Option<serde_json::Value> = std::fs::read_to_string(cx.out.join(two_way::stats(row)))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let secs = |k: &str| st.as_ref().and_then(|v| v[k].as_f64()).unwrap_or(0.0);
        let total = stage_seconds(two_way::NAME).map(|s| 1000.0 * s / frames);
        (
            total,
            Some(1000.0 * (secs("interpolation_seconds") + secs("correction_seconds")) / frames),
        )
    } else {
        (guide_sim, None)
    };
    let fmt = |x: Option<f64>| x.map(|v| format!("{v:.2}")).unwrap_or_else(|| "–".into());
    let ms = |secs: f64| 1000.0 * secs / n;
    let parts: Vec<String> = [
        correction.map(|c| format!("{c:.2} two-way")),
        row.projection
            .then(|| format!("{:.2} projection", ms(t.projection))),
        row.contact.then(|| format!("{:.2} contact", ms(t.contact))),
    ]
    .into_iter()
    .flatten()
    .collect();
    let corr = if parts.is_empty() {
        "–".into()
    } else {
        parts.join(" + ")
    };
    format!(
        "| `{}` | {}{} | {:.2} | {:.2} | {corr} |\n",
        row.key,
        fmt(sim),
        if row.two_way { " (with two-way)" } else { "" },
        ms(t.grouping),
        ms(t.interpolation),
    )
}

/// The hair mesh's figures (002), when the job simulated one.
fn hairmesh_line(cx: &Ctx) -> Option<String> {
    let text = std::fs::read_to_string(cx.path(hairmesh::REPORT)).ok()?;
    let v = serde_json::from_str::<serde_json::Value>(&text).ok()?;
    let r = &v["report"];
    let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
    Some(format!(
        "\nHair mesh (002): {} vertices, {} bundles ({}) in {} region{}, {} tets, {} implicit steps per frame; solver {:.1} ms per frame ({}); smallest tet volume {:.2} of its rest volume; deepest vertex {:.2} cm inside a solid; {:.2} cm from the rest shape at the last frame. The `hairmesh` row's first column is the whole stage (mesh build, simulation, writing) per frame.\n",
        r["vertices"],
        v["faces"],
        v["topology"].as_str().unwrap_or("bundles"),
        v["regions"].as_u64().unwrap_or(0),
        if v["regions"].as_u64() == Some(1) { "" } else { "s" },
        r["tets"],
        r["substeps"],
        f("ms_per_frame"),
        crate::hairmesh::solve_words(f("cg_iterations")),
        f("min_volume_ratio"),
        f("deepest_penetration"),
        f("rest_error"),
    ))
}

/// The drape's figures (003).
fn drape_line(d: &DrapeSummary) -> String {
    let pct = |x: f64| 100.0 * x;
    format!(
        "\nQuasi-static drape (003), solver `{}`: {} texture strands of {} vertices ({}² texture), {:.2} ms per frame for the drape itself (the `drape` row's first column). Mean over {} frames, rigidly posed groom → drape: vertices inside the body {:.3} % → {:.3} %, length error {:.3} % → {:.3} %, orientation {:.2}° → {:.2}°, gravity potential {:.1} → {:.1}.{}\n",
        d.solver,
        d.strands,
        d.points,
        d.texture,
        1000.0 * d.seconds / d.frames,
        d.frames,
        pct(d.posed.intersection_fraction),
        pct(d.draped.intersection_fraction),
        pct(d.posed.length_error_mean),
        pct(d.draped.length_error_mean),
        d.posed.orientation_error_deg,
        d.draped.orientation_error_deg,
        d.posed.gravity_potential,
        d.draped.gravity_potential,
        if d.outside > 0 {
            format!(
                " {} frames have the head turned beyond the poses the network was trained on.",
                d.outside
            )
        } else {
            String::new()
        }
    )
}

/// The skinning fit's figures (001 §6), when the job fitted one.
fn skinning_line(cx: &Ctx) -> Option<String> {
    let text = std::fs::read_to_string(cx.path(fit::SKINNING_REPORT)).ok()?;
    let v = serde_json::from_str::<serde_json::Value>(&text).ok()?;
    let r = &v["report"];
    Some(format!(
        "\nSkinning fit (001 §6): {} training frames, {:.1} eligible guides and {:.1} guide sets per strand, training RMSE {:.3} cm, {:.1} s; model {} bytes ({:.0} per strand).\n",
        r["frames"],
        r["eligible_mean"].as_f64().unwrap_or(0.0),
        r["sets_mean"].as_f64().unwrap_or(0.0),
        r["training_rmse"].as_f64().unwrap_or(0.0),
        r["seconds"].as_f64().unwrap_or(0.0),
        v["file_bytes"],
        v["bytes_per_strand"].as_f64().unwrap_or(0.0)
    ))
}

/// The drape stage's figures over all its chunks.
struct DrapeSummary {
    solver: String,
    texture: u64,
    points: u64,
    strands: u64,
    frames: f64,
    /// The drapes' own time, summed over frames.
    seconds: f64,
    posed: crate::neural::drape::DrapeMetrics,
    draped: crate::neural::drape::DrapeMetrics,
    /// Frames whose head rotation lies outside the network's training ranges.
    outside: usize,
}

impl DrapeSummary {
    fn of(cx: &Ctx) -> Option<DrapeSummary> {
        use crate::neural::drape::DrapeMetrics;
        let chunks = drape::chunks(cx).ok()?;
        let (mut before, mut after) = (Vec::new(), Vec::new());
        let mut s = DrapeSummary {
            solver: String::new(),
            texture: 0,
            points: 0,
            strands: 0,
            frames: 0.0,
            seconds: 0.0,
            posed: DrapeMetrics::default(),
            draped: DrapeMetrics::default(),
            outside: 0,
        };
        for c in chunks.iter().filter(|c| c.path.ends_with(".json")) {
            let text = std::fs::read_to_string(cx.out.join(&c.path)).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            s.solver = v["solver"].as_str().unwrap_or_default().to_string();
            s.texture = v["texture"].as_u64().unwrap_or(0);
            s.points = v["points"].as_u64().unwrap_or(0);
            s.strands = v["strands"].as_u64().unwrap_or(0);
            for f in v["per_frame"].as_array()? {
                s.frames += 1.0;
                s.seconds += f["seconds"].as_f64().unwrap_or(0.0);
                before.push(serde_json::from_value(f["posed"].clone()).ok()?);
                after.push(serde_json::from_value(f["draped"].clone()).ok()?);
                if f["trained_pose"] == false {
                    s.outside += 1;
                }
            }
        }
        (s.frames > 0.0).then(|| DrapeSummary {
            posed: DrapeMetrics::mean(&before),
            draped: DrapeMetrics::mean(&after),
            ..s
        })
    }
}
