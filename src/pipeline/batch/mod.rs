//! Batches: the same job over several grooms × motions (or the student project's random
//! experiments), each item in its own subfolder; once every item is done, the batch summary
//! (`batch.md`), the trajectory baseline trained across the items ([`trajectory`]) and, with
//! `batch.groups`, the items' hair caches as the groom groups of one archive.

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

/// A USD/Alembic-safe group name from an item name: letters, digits and `_` (others become
/// `_`), not starting with a digit.
fn group_name(item: &str) -> String {
    let mut s: String = item
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    s
}

/// With `batch.groups`: every item's `hair.abc` as one groom group (id in item order, named
/// after the item) of the archive `batch.groups` in the batch's output folder.
pub fn groom_groups(job: &Job, items: &[Job]) -> Result<Option<std::path::PathBuf>> {
    let Some(name) = job.batch.as_ref().and_then(|b| b.groups.as_ref()) else {
        return Ok(None);
    };
    let mut groups: Vec<crate::cache::Group> = Vec::new();
    for item in items {
        let label = item
            .table
            .get("item")
            .and_then(|v| v.as_str())
            .unwrap_or(&item.name);
        let mut g = group_name(label);
        while groups.iter().any(|h| h.name == g) {
            g.push('_');
        }
        groups.push(crate::cache::Group {
            name: g,
            path: item.output.join(crate::pipeline::stages::write::HAIR_ABC.path),
        });
    }
    for g in &groups {
        if !g.path.exists() {
            return Err(crate::error::Error::Invalid(format!(
                "batch.groups: {} is missing; run the batch's items first",
                g.path.display()
            )));
        }
    }
    let out = job.output.join(name);
    let space = crate::cache::OutputSpace {
        units: job.outputs.units,
        up: job.outputs.up,
    };
    let opts = crate::cache::GroupsOptions {
        frames: None,
        fps: job.fps,
        sink: crate::cache::SinkOptions {
            space,
            date: Some(job.date()),
            ..Default::default()
        },
    };
    let (path, _) = crate::cache::write_groups(&groups, &out, &opts)?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    #[test]
    fn group_names_are_identifiers() {
        assert_eq!(super::group_name("sintel-walk"), "sintel_walk");
        assert_eq!(super::group_name("3brows"), "_3brows");
        assert_eq!(super::group_name("beard"), "beard");
    }
}
