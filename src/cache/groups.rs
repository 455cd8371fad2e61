//! Groom groups: the caches of one character's grooms (hair, beard, brows) as one Alembic
//! archive, as Unreal's groom importer reads them: one curves object per group under the
//! `/groom` transform, each with a constant `groom_group_id` (0, 1, … in the order given) and
//! `groom_group_name`. Frames stream from every source at once (one frame of each in memory);
//! the sources must hold the same frames.

use std::path::{Path, PathBuf};

use tress_formats::alembic::cache::{AbcWriter, CurvesSpec, WriteOptions};

use super::{SinkOptions, open_source};
use crate::error::{Error, Result, output_error};

/// One group: its name and the cache it comes from (`.tcache`, `.abc`, a PLY sequence).
#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub name: String,
    pub path: PathBuf,
}

impl Group {
    /// `NAME=CACHE`, or `CACHE` alone (named by the file's stem, up to its first dot).
    pub fn parse(arg: &str) -> Result<Group> {
        let (name, path) = match arg.split_once('=') {
            Some((n, p)) => (n.to_string(), PathBuf::from(p)),
            None => {
                let p = PathBuf::from(arg);
                let stem = p
                    .file_name()
                    .map(|f| f.to_string_lossy().to_string())
                    .unwrap_or_default();
                let name = stem.split('.').next().unwrap_or_default().to_string();
                (name, p)
            }
        };
        if !tress_formats::usd::identifier(&name) {
            return Err(Error::Invalid(format!(
                "groom group {arg:?}: the name {name:?} must be letters, digits and _ (not starting with a digit); write NAME=CACHE"
            )));
        }
        Ok(Group { name, path })
    }
}

/// Settings of a groups archive.
#[derive(Clone, Debug)]
pub struct GroupsOptions {
    /// Inclusive frame range to keep.
    pub frames: Option<(f64, f64)>,
    /// Frame rate of PLY sequences (which do not store one).
    pub fps: f64,
    /// The space written (each source is read in its own, [`super::FrameSource::space`]),
    /// velocities, date.
    pub sink: SinkOptions,
}

impl Default for GroupsOptions {
    fn default() -> Self {
        GroupsOptions {
            frames: None,
            fps: 24.0,
            sink: SinkOptions::default(),
        }
    }
}

/// Writes `groups` into the Alembic archive `output`; returns it and the number of frames.
pub fn write_groups(groups: &[Group], output: &Path, opts: &GroupsOptions) -> Result<(PathBuf, usize)> {
    if groups.is_empty() {
        return Err(Error::Invalid("no groom groups given".into()));
    }
    if tress_formats::extension(output).as_deref() != Some("abc") {
        return Err(Error::Invalid(format!(
            "{}: groom groups are written to Alembic (.abc), as Unreal's groom importer reads them",
            output.display()
        )));
    }
    for (i, g) in groups.iter().enumerate() {
        if groups[..i].iter().any(|h| h.name == g.name) {
            return Err(Error::Invalid(format!(
                "groom group {:?} is given twice ({} and {}); name each NAME=CACHE",
                g.name,
                groups[..i]
                    .iter()
                    .find(|h| h.name == g.name)
                    .expect("found")
                    .path
                    .display(),
                g.path.display()
            )));
        }
    }
    let mut sources = Vec::new();
    for g in groups {
        sources.push(open_source(&g.path, None, opts.fps)?);
    }
    let first = sources[0].info().clone();
    let chosen = super::convert::frames_in(&groups[0].path, &first.frames, opts.frames)?;
    // Every source holds the first one's frames (by frame number) at the same rate.
    let mut index: Vec<Vec<usize>> = Vec::new();
    for (g, s) in groups.iter().zip(&sources) {
        let info = s.info();
        if (info.fps - first.fps).abs() > 1e-9 * first.fps {
            return Err(Error::Invalid(format!(
                "{}: {} fps, but {} is at {} fps; groom groups share one time sampling",
                g.path.display(),
                info.fps,
                groups[0].path.display(),
                first.fps
            )));
        }
        let mut at = Vec::new();
        for &i in &chosen {
            let f = first.frames[i];
            let Some(j) = info.frames.iter().position(|&x| (x - f).abs() <= 1e-6) else {
                return Err(Error::Invalid(format!(
                    "{}: no frame {f} (it has {}-{}), which {} has; groom groups must cover the same frames",
                    g.path.display(),
                    info.frames.first().copied().unwrap_or(0.0),
                    info.frames.last().copied().unwrap_or(0.0),
                    groups[0].path.display()
                )));
            };
            at.push(j);
        }
        index.push(at);
    }
    let to = opts.sink.space;
    let mut w = WriteOptions::new(first.fps, first.frames[chosen[0]]);
    if let Some(d) = opts.sink.date {
        w.date = d;
    }
    w.meters_per_unit = to.units.meters_per_unit();
    w.up_axis = to.up_axis();
    let mut writer = AbcWriter::with_options(output, &w).map_err(|e| output_error(output, e))?;
    for (i, (g, s)) in groups.iter().zip(&sources).enumerate() {
        let topology = to.strands_from(s.space(), &s.info().topology);
        let mut spec = CurvesSpec::from_strands("groom", &g.name, &topology);
        spec.group_id = i as i32;
        spec.group_name = Some(g.name.clone());
        spec.velocities = opts.sink.velocities;
        writer.add_curves(&spec).map_err(|e| output_error(output, e))?;
    }
    for k in 0..chosen.len() {
        let mut frame = Vec::with_capacity(sources.len());
        for (s, at) in sources.iter_mut().zip(&index) {
            let from = s.space();
            frame.push(
                s.read(at[k])?
                    .into_iter()
                    .map(|p| to.from_space(from, p))
                    .collect(),
            );
        }
        let refs: Vec<&[[f32; 3]]> = frame.iter().map(Vec::as_slice).collect();
        writer.write_frame(&refs).map_err(|e| output_error(output, e))?;
    }
    let path = writer.finish().map_err(|e| output_error(output, e))?;
    Ok((path, chosen.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_arguments() {
        assert_eq!(
            Group::parse("beard=shots/b.tcache").unwrap(),
            Group {
                name: "beard".into(),
                path: "shots/b.tcache".into()
            }
        );
        assert_eq!(Group::parse("out/brows.hair.tcache").unwrap().name, "brows");
        let e = Group::parse("1x=a.tcache").unwrap_err().to_string();
        assert!(e.contains("NAME=CACHE"), "{e}");
    }
}
