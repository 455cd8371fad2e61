//! Batches: the same job over several grooms × motions (or the student project's random
//! experiments), each item in its own subfolder; once every item is done, the batch summary
//! (`batch.md`) and the trajectory baseline trained across the items ([`trajectory`]).

pub mod trajectory;

use crate::error::Result;
use crate::metrics::table::markdown;
use crate::pipeline::job::Job;
use crate::pipeline::stages::eval::{METRICS, MetricsFile};

/// `batch.md` in a batch's output folder: one row per item, its method against the ground truth.
/// With `trajectory`, the trajectory baseline's section follows.
pub fn batch_summary(
    job: &Job,
    outputs: &[std::path::PathBuf],
    trajectory: Option<&trajectory::TrajectoryMetrics>,
) -> Result<std::path::PathBuf> {
    let mut md = format!("# {} — batch of {} items\n\n", job.name, outputs.len());
    let mut rows = Vec::new();
    for out in outputs {
        let text = std::fs::read_to_string(out.join(METRICS.path)).ok();
        let m: Option<MetricsFile> = text.and_then(|t| serde_json::from_str(&t).ok());
        if let Some(m) = m
            && let Some(first) = m.methods.first()
        {
            let item = out
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
    if let Some(t) = trajectory {
        md.push_str(&trajectory::markdown(t));
    }
    let path = job.output.join("batch.md");
    tress_formats::atomic::write(&path, md.as_bytes()).map_err(|e| crate::error::output_error(&path, e))?;
    Ok(path)
}
