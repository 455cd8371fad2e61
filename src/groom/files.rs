//! Reading and writing grooms in every format tress knows, chosen by extension (and by the
//! file's magic bytes when the extension says nothing).

use std::path::Path;

use tress_formats::alembic::cache::{AbcReader, AbcWriter, CurvesSpec};
use tress_formats::{InFile, Strands, hair, mss, ply, tfx, tfxproj, usc_data};

use super::model::Groom;
use crate::error::output_error;
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
    /// Alembic (Ogawa) curves.
    Alembic,
    /// tress strand cache: its rest pose (read only as a groom).
    Tcache,
    /// USD (`.usda`, `.usdc`, `.usd`, `.usdz`): every `BasisCurves` prim of the composed stage.
    Usd,
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
            GroomFormat::Alembic => "Alembic (Ogawa)",
            GroomFormat::Tcache => "tress .tcache (rest pose)",
            GroomFormat::Usd => "USD",
        }
    }

    /// The format a path's extension names.
    pub fn from_extension(path: &Path) -> Option<Self> {
        let ext = tress_formats::extension(path)?;
        Some(match ext.as_str() {
            "hair" => GroomFormat::Hair,
            "data" => GroomFormat::UscData,
            "ply" => GroomFormat::Ply,
            "tfx" => GroomFormat::Tfx,
            "tfxproj" => GroomFormat::TfxProject,
            "mss" => GroomFormat::Mss,
            "abc" => GroomFormat::Alembic,
            "tcache" => GroomFormat::Tcache,
            "usd" | "usda" | "usdc" | "usdz" => GroomFormat::Usd,
            _ => return None,
        })
    }

    /// The format the first bytes announce, if they announce one.
    pub fn sniff(head: &[u8]) -> Option<Self> {
        if head.starts_with(hair::MAGIC) {
            Some(GroomFormat::Hair)
        } else if head.starts_with(b"ply\n") || head.starts_with(b"ply\r\n") {
            Some(GroomFormat::Ply)
        } else if head.starts_with(b"Ogawa") || head.starts_with(b"\x89HDF") {
            Some(GroomFormat::Alembic)
        } else {
            None
        }
    }
}

/// Options for reading grooms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadOptions {
    /// Point clouds without strand layout (PLY): consecutive points per strand.
    pub points_per_strand: Option<usize>,
    /// Alembic, USD: the frame to read (default: the first sample; USD: the default value,
    /// else the first time sample).
    pub frame: Option<f64>,
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
        "{}: unknown groom format (known: .hair, .data, .ply, .tfx, .tfxproj, .mss, .abc, .usd/.usda/.usdc/.usdz; writable: .hair, .data, .ply, .tfx, .abc, .usda, .usdc)",
        path.display()
    ))
}

/// Reads a groom file in the file's own units and axes.
pub fn read_groom(path: &Path, opts: &ReadOptions) -> Result<LoadedGroom> {
    if GroomFormat::from_extension(path) == Some(GroomFormat::Alembic) {
        return read_abc(path, opts);
    }
    if GroomFormat::from_extension(path) == Some(GroomFormat::Usd) {
        return read_usd(path, opts);
    }
    // A strand cache's rest pose (e.g. a job's prepared `groom.tcache`).
    if GroomFormat::from_extension(path) == Some(GroomFormat::Tcache) {
        let r = tress_formats::tcache::TcacheReader::open(path)?;
        let groom = Groom::from_strands(r.header.rest.clone())?;
        return Ok(LoadedGroom {
            groom,
            format: GroomFormat::Tcache,
            details: Vec::new(),
        });
    }
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
        GroomFormat::Alembic => return read_abc(path, opts),
        // Handled above by extension; a .tcache or USD file is never sniffed.
        GroomFormat::Tcache | GroomFormat::Usd => return Err(unknown(path)),
    };
    let groom = Groom::from_strands(strands)?;
    Ok(LoadedGroom {
        groom,
        format,
        details,
    })
}

/// Reads the curves of an Alembic archive at one frame, in world space.
fn read_abc(path: &Path, opts: &ReadOptions) -> Result<LoadedGroom> {
    let r = AbcReader::open(path)?;
    let fps = r.fps().unwrap_or(24.0);
    let frame = match opts.frame {
        Some(f) => f,
        None => {
            // The first sample of the first curves object.
            let first = r.curves_objects()?.into_iter().next();
            let t = match first {
                Some(o) => {
                    let c = tress_formats::alembic::schema::curves::CurvesReader::open(&r.archive, &o)
                        .in_file(path)?;
                    r.archive.time_samplings[c.time_sampling() as usize].time(0)
                }
                None => 0.0,
            };
            (t * fps * 1e6).round() / 1e6
        }
    };
    let strands = r.read_curves_at_frame(frame, fps)?;
    let details = vec![
        (
            "application".to_string(),
            r.archive.application().unwrap_or("").to_string(),
        ),
        ("frame".to_string(), format!("{frame} at {fps} fps")),
    ];
    Ok(LoadedGroom {
        groom: Groom::from_strands(strands)?,
        format: GroomFormat::Alembic,
        details,
    })
}

/// The `BasisCurves` prims `prims` of an open stage at `frame`, as one set of strands (one
/// prim keeps its attributes; several keep positions and counts).
pub fn usd_strands(
    f: &tress_formats::usd::read::UsdFile,
    prims: &[String],
    frame: Option<f64>,
) -> Result<Strands> {
    let mut merged = Strands::default();
    for p in prims {
        let s = f.curves(p, frame)?;
        if prims.len() == 1 {
            return Ok(s);
        }
        merged.points.extend(s.points);
        merged.counts.extend(s.counts);
    }
    Ok(merged)
}

/// Reads every `BasisCurves` prim of a USD stage, in world space, at one frame (time code).
fn read_usd(path: &Path, opts: &ReadOptions) -> Result<LoadedGroom> {
    let f = tress_formats::usd::read::UsdFile::open(path)?;
    let info = f.info()?;
    let prims = f.prims_of("BasisCurves")?;
    if prims.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: no BasisCurves prim (the stage has no curves to read as a groom)",
            path.display()
        )));
    }
    let merged = usd_strands(&f, &prims, opts.frame)?;
    let mut details = vec![("prims".to_string(), prims.join(", "))];
    if let Some(m) = info.meters_per_unit {
        details.push(("metersPerUnit".into(), m.to_string()));
    }
    if let Some(u) = info.up_axis {
        details.push(("upAxis".into(), u.to_string()));
    }
    if let Some(t) = opts.frame {
        details.push(("time code".into(), t.to_string()));
    }
    Ok(LoadedGroom {
        groom: Groom::from_strands(merged)?,
        format: GroomFormat::Usd,
        details,
    })
}

/// Writes a groom; the format follows the extension. The file appears only when complete.
pub fn write_groom(path: &Path, groom: &Groom) -> Result<()> {
    let strands = groom.to_strands();
    let ext = tress_formats::extension(path);
    if let Some("usd" | "usda" | "usdc") = ext.as_deref() {
        // A one-frame USD layer (the rest pose at time code 1).
        let write = || -> tress_formats::Result<()> {
            let spec = tress_formats::usd::UsdSpec {
                root: "groom",
                name: "hair",
                doc: concat!("written by tress ", env!("CARGO_PKG_VERSION")),
                fps: 24.0,
                start_frame: 1.0,
                velocities: false,
                meters_per_unit: 0.01,
                up_axis: 'Y',
            };
            let mut w = tress_formats::usd::UsdWriter::create(path, &strands, &spec)?;
            w.write_frame(1.0, &strands.points)?;
            w.finish()?;
            Ok(())
        };
        return write().map_err(|e| output_error(path, e));
    }
    let format = GroomFormat::from_extension(path).ok_or_else(|| unknown(path))?;
    let comment = format!("written by tress {}", env!("CARGO_PKG_VERSION"));
    let bytes = match format {
        GroomFormat::Hair => hair::to_bytes(&hair::HairFile::from_strands(&strands, &comment)?)?,
        GroomFormat::UscData => usc_data::to_bytes(&strands)?,
        GroomFormat::Ply => ply::to_bytes(&strands, &comment)?,
        GroomFormat::Tfx => tfx::to_bytes_v4(&strands)?,
        GroomFormat::Alembic => {
            let write = || -> tress_formats::Result<()> {
                let mut w = AbcWriter::new(path, 24.0, 1.0)?;
                let mut spec = CurvesSpec::from_strands("groom", "hair", &strands);
                spec.velocities = false;
                w.add_curves(&spec)?;
                w.write_frame(&[&strands.points])?;
                w.finish()?;
                Ok(())
            };
            return write().map_err(|e| output_error(path, e));
        }
        GroomFormat::Mss | GroomFormat::TfxProject | GroomFormat::Tcache | GroomFormat::Usd => {
            return Err(Error::Invalid(format!(
                "{}: tress reads this format but does not write it (USD: .usda and .usd are written as text)",
                path.display()
            )));
        }
    };
    tress_formats::atomic::write(path, &bytes).map_err(|e| output_error(path, e))
}
