//! Reading and writing grooms in every format tress knows, chosen by extension (and by the
//! file's magic bytes when the extension says nothing).

use std::path::Path;

use tress_formats::{InFile, Strands, hair, mss, ply, tfx, tfxproj, usc_data};

use super::model::Groom;
use crate::error::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroomFormat {
    /// Cem Yuksel `.hair`.
    Hair,
    /// USC-HairSalon `.data`.
    UscData,
    /// PLY strands.
    Ply,
    /// AMD TressFX `.tfx` (3.x, 4.x; read only).
    Tfx,
    /// TressFX project: the groom is all its `.tfx` parts together (read only).
    TfxProject,
    /// Mass-spring scene of the student project 004 (read only).
    Mss,
}

impl GroomFormat {
    pub fn name(self) -> &'static str {
        match self {
            GroomFormat::Hair => "Cem Yuksel .hair",
            GroomFormat::UscData => "USC-HairSalon .data",
            GroomFormat::Ply => "PLY strands",
            GroomFormat::Tfx => "AMD TressFX .tfx",
            GroomFormat::TfxProject => "AMD TressFX project .tfxproj",
            GroomFormat::Mss => "mass-spring scene .mss",
        }
    }

    /// The format a path's extension names.
    pub fn from_extension(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "hair" => GroomFormat::Hair,
            "data" => GroomFormat::UscData,
            "ply" => GroomFormat::Ply,
            "tfx" => GroomFormat::Tfx,
            "tfxproj" => GroomFormat::TfxProject,
            "mss" => GroomFormat::Mss,
            _ => return None,
        })
    }

    /// The format the first bytes announce, if they announce one.
    pub fn sniff(head: &[u8]) -> Option<Self> {
        if head.starts_with(hair::MAGIC) {
            Some(GroomFormat::Hair)
        } else if head.starts_with(b"ply\n") || head.starts_with(b"ply\r\n") {
            Some(GroomFormat::Ply)
        } else {
            None
        }
    }
}

/// Options for reading grooms.
#[derive(Clone, Debug, Default)]
pub struct ReadOptions {
    /// Point clouds without strand layout (PLY): consecutive points per strand.
    pub points_per_strand: Option<usize>,
}

/// A groom read from a file, with what the file said about itself.
#[derive(Debug)]
pub struct LoadedGroom {
    pub groom: Groom,
    pub format: GroomFormat,
    /// Format-specific facts worth showing (`inspect`): header info, PLY layout, …
    pub details: Vec<(String, String)>,
}

fn unknown(path: &Path) -> Error {
    Error::Invalid(format!(
        "{}: unknown groom format (known: .hair, .data, .ply, .tfx, .tfxproj, .mss; writable: .hair, .data, .ply, .tfx)",
        path.display()
    ))
}

/// Reads a groom file in the file's own units and axes.
pub fn read_groom(path: &Path, opts: &ReadOptions) -> Result<LoadedGroom> {
    let data = std::fs::read(path).in_file(path)?;
    let format = GroomFormat::sniff(&data)
        .or_else(|| GroomFormat::from_extension(path))
        .ok_or_else(|| unknown(path))?;
    let mut details = Vec::new();
    let strands = match format {
        GroomFormat::Hair => {
            let f = hair::parse(&data).in_file(path)?;
            details.push(("info".into(), f.info.clone()));
            details.push(("arrays".into(), format!("0x{:x}", f.array_bits())));
            f.into_strands().in_file(path)?
        }
        GroomFormat::UscData => usc_data::parse(&data).in_file(path)?,
        GroomFormat::Ply => {
            let p = ply::parse(
                &data,
                &ply::ReadOptions {
                    points_per_strand: opts.points_per_strand,
                },
            )
            .in_file(path)?;
            details.push(("encoding".into(), p.encoding.name().into()));
            details.push(("layout".into(), p.layout.into()));
            p.strands
        }
        GroomFormat::Tfx => {
            let f = tfx::parse(&data).in_file(path)?;
            details.push(("version".into(), f.info.version.to_string()));
            if f.info.both_ends_immovable {
                details.push(("both ends immovable".into(), "yes".into()));
            }
            f.strands
        }
        GroomFormat::TfxProject => {
            let project = tfxproj::parse(&data).in_file(path)?;
            let dir = path.parent().unwrap_or(Path::new("."));
            let mut merged = Strands::default();
            for part in &project.parts {
                let part_path = dir.join(part);
                let f = tfx::read(&part_path)?;
                details.push((
                    format!("part {}", part.display()),
                    format!("{} strands", f.info.strands),
                ));
                merged.points.extend(f.strands.points);
                merged.counts.extend(f.strands.counts);
            }
            for (c, r) in &project.spheres {
                details.push(("collision sphere".into(), format!("centre {c:?} radius {r}")));
            }
            merged
        }
        GroomFormat::Mss => {
            let scene = mss::parse(&data).in_file(path)?;
            details.push(("springs".into(), scene.springs.len().to_string()));
            details.push(("pins".into(), scene.pins.len().to_string()));
            details.push(("head centre".into(), format!("{:?}", scene.head_center)));
            details.push(("head velocity".into(), format!("{:?}", scene.head_velocity)));
            scene.strands().in_file(path)?
        }
    };
    let groom = Groom::from_strands(strands)?;
    Ok(LoadedGroom {
        groom,
        format,
        details,
    })
}

/// Writes a groom; the format follows the extension. The file appears only when complete.
pub fn write_groom(path: &Path, groom: &Groom) -> Result<()> {
    let format = GroomFormat::from_extension(path).ok_or_else(|| unknown(path))?;
    let strands = groom.to_strands();
    let comment = format!("written by tress {}", env!("CARGO_PKG_VERSION"));
    let bytes = match format {
        GroomFormat::Hair => hair::to_bytes(&hair::HairFile::from_strands(&strands, &comment)?)?,
        GroomFormat::UscData => usc_data::to_bytes(&strands)?,
        GroomFormat::Ply => ply::to_bytes(&strands, &comment)?,
        GroomFormat::Tfx => tfx::to_bytes_v4(&strands)?,
        GroomFormat::Mss | GroomFormat::TfxProject => {
            return Err(Error::Invalid(format!(
                "{}: tress reads this format but does not write it",
                path.display()
            )));
        }
    };
    tress_formats::atomic::write(path, &bytes).map_err(|e| match e.kind {
        tress_formats::ErrorKind::Io(source) => Error::Write {
            path: path.to_path_buf(),
            source,
        },
        _ => Error::Runtime(e.to_string()),
    })
}
