//! Reading USD (`.usda`, `.usdc`, `.usd`, `.usdz`) with the `openusd` crate: the composed stage
//! (references, payloads, sublayers and `over`s resolved), its `BasisCurves` prims as strands and
//! its `Mesh` prims as triangle meshes, in world space (every ancestor's `xformOpOrder`
//! applied, `!resetXformStack!` honoured), at the default value or a time code.
//!
//! Positions stay in the file's units and axes; [`StageInfo`] says which (`metersPerUnit`,
//! `upAxis`). Time codes are frame numbers, as tress writes them (`timeCodesPerSecond` is the
//! frame rate). A file the crate cannot parse is an error naming it, never a panic.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use openusd::gf;
use openusd::sdf as usdf;
use openusd::usd::{PrimPredicate, Stage, TimeCode};

use crate::error::{Error, InFile, Result};
use crate::mesh::TriMesh;
use crate::strands::{Attr, StrandAttrs, Strands};

/// A row-vector 4×4 matrix, as USD writes them (`p' = p · M`, translation in the last row).
pub type Matrix = [[f64; 4]; 4];

const IDENTITY: Matrix = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

fn mul(a: &Matrix, b: &Matrix) -> Matrix {
    let mut m = [[0.0; 4]; 4];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..4).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

fn apply(m: &Matrix, p: [f32; 3]) -> [f32; 3] {
    let [x, y, z] = p.map(f64::from);
    let w = x * m[0][3] + y * m[1][3] + z * m[2][3] + m[3][3];
    let w = if w == 0.0 { 1.0 } else { w };
    [0, 1, 2].map(|j| ((x * m[0][j] + y * m[1][j] + z * m[2][j] + m[3][j]) / w) as f32)
}

fn translate(t: [f64; 3]) -> Matrix {
    let mut m = IDENTITY;
    m[3][..3].copy_from_slice(&t);
    m
}

fn scale(s: [f64; 3]) -> Matrix {
    let mut m = IDENTITY;
    for k in 0..3 {
        m[k][k] = s[k];
    }
    m
}

/// Rotation about one axis by `deg` degrees, row-vector form (as `GfRotation`).
fn rotate(axis: usize, deg: f64) -> Matrix {
    let (s, c) = deg.to_radians().sin_cos();
    let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
    let mut m = IDENTITY;
    m[a][a] = c;
    m[a][b] = s;
    m[b][a] = -s;
    m[b][b] = c;
    m
}

/// A unit quaternion (real part `w`) as a row-vector rotation matrix.
fn quat(w: f64, x: f64, y: f64, z: f64) -> Matrix {
    let n = (w * w + x * x + y * y + z * z).sqrt().max(f64::MIN_POSITIVE);
    let (w, x, y, z) = (w / n, x / n, y / n, z / n);
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y + z * w),
            2.0 * (x * z - y * w),
            0.0,
        ],
        [
            2.0 * (x * y - z * w),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z + x * w),
            0.0,
        ],
        [
            2.0 * (x * z + y * w),
            2.0 * (y * z - x * w),
            1.0 - 2.0 * (x * x + y * y),
            0.0,
        ],
        [0.0, 0.0, 0.0, 1.0],
    ]
}

/// The 4×4 inverse (Gauss–Jordan with partial pivoting); `None` when singular.
fn invert(m: &Matrix) -> Option<Matrix> {
    let mut a = *m;
    let mut inv = IDENTITY;
    for col in 0..4 {
        let pivot = (col..4).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-300 {
            return None;
        }
        a.swap(col, pivot);
        inv.swap(col, pivot);
        let d = a[col][col];
        for k in 0..4 {
            a[col][k] /= d;
            inv[col][k] /= d;
        }
        for r in 0..4 {
            if r != col {
                let f = a[r][col];
                for k in 0..4 {
                    a[r][k] -= f * a[col][k];
                    inv[r][k] -= f * inv[col][k];
                }
            }
        }
    }
    Some(inv)
}

/// What the stage says about its space and time.
#[derive(Clone, Debug, PartialEq)]
pub struct StageInfo {
    pub default_prim: Option<String>,
    pub meters_per_unit: Option<f64>,
    pub up_axis: Option<char>,
    /// `timeCodesPerSecond` (24 when not authored, as USD defines it).
    pub time_codes_per_second: f64,
    pub start_time_code: Option<f64>,
    pub end_time_code: Option<f64>,
}

/// A prim: its path and schema type (`BasisCurves`, `Mesh`, `Xform`, …; empty when untyped).
#[derive(Clone, Debug, PartialEq)]
pub struct PrimInfo {
    pub path: String,
    pub type_name: String,
}

/// A prim's `points` time samples ([`UsdFile::point_samples`]).
pub struct PointSamples {
    prim: String,
    samples: usdf::TimeSampleMap,
}

impl PointSamples {
    /// The time codes, in order.
    pub fn times(&self) -> Vec<f64> {
        self.samples.iter().map(|(t, _)| *t).collect()
    }
}

/// An open USD stage.
pub struct UsdFile {
    stage: Stage,
    path: PathBuf,
}

/// Runs `f`, turning the crate's errors and panics into an error about `path` (its panic
/// message is not printed: the error says what failed).
fn guarded<T, E: std::fmt::Display>(
    path: &Path,
    what: &str,
    f: impl FnOnce() -> std::result::Result<T, E>,
) -> Result<T> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = catch_unwind(AssertUnwindSafe(f));
    std::panic::set_hook(hook);
    match r {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(Error::corrupt(format!("{what}: {e:#}")).in_file(path)),
        Err(_) => Err(Error::corrupt(format!("{what}: the USD reader could not decode it")).in_file(path)),
    }
}

fn vec3(v: &gf::Vec3f) -> [f32; 3] {
    [v.x, v.y, v.z]
}

/// A 3-vector value of any precision.
fn triple(v: &usdf::Value) -> Option<[f64; 3]> {
    use usdf::Value as V;
    Some(match v {
        V::Vec3d(v) => [v.x, v.y, v.z],
        V::Vec3f(v) => [v.x as f64, v.y as f64, v.z as f64],
        V::Vec3h(v) => [v.x.to_f64(), v.y.to_f64(), v.z.to_f64()],
        V::Vec3i(v) => [v.x as f64, v.y as f64, v.z as f64],
        _ => return None,
    })
}

fn scalar(v: &usdf::Value) -> Option<f64> {
    use usdf::Value as V;
    Some(match v {
        V::Double(d) => *d,
        V::Float(f) => *f as f64,
        V::Half(h) => h.to_f64(),
        V::Int(i) => *i as f64,
        _ => return None,
    })
}

/// The size of `path`, which must be a file.
fn checked_len(path: &Path) -> Result<u64> {
    let meta = std::fs::metadata(path).in_file(path)?;
    if !meta.is_file() {
        return Err(Error::invalid("not a file").in_file(path));
    }
    Ok(meta.len())
}

/// The positions of a `points` value.
fn decode_points(v: &usdf::Value) -> Option<Vec<[f32; 3]>> {
    match v {
        usdf::Value::Vec3fVec(v) => Some(v.iter().map(vec3).collect()),
        usdf::Value::Vec3dVec(v) => Some(v.iter().map(|p| [p.x as f32, p.y as f32, p.z as f32]).collect()),
        _ => None,
    }
}

/// The program that reads binary layers in full, in a child process under a memory limit,
/// before they are opened here ([`set_probe`]).
static PROBE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

/// The argument that runs [`probe_main`] in a program that called [`set_probe`].
pub const PROBE_ARG: &str = "__usd-probe";

/// Makes [`UsdFile::open`] read every binary layer (`.usdc` and `.usdz`, which carry counts the
/// reader trusts) first in `exe PROBE_ARG FILE`, a child process under a memory limit: a damaged
/// count that would make the reader allocate far more than the file holds ends the child, and
/// the file is refused instead of the program aborting. Text layers need no probe (every value
/// is in the text).
pub fn set_probe(exe: PathBuf) {
    let _ = PROBE.set(exe);
}

/// Whether `path` is a binary layer or a package.
fn is_binary(path: &Path) -> bool {
    let mut magic = [0u8; 8];
    let head = std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic));
    head.is_ok() && (&magic == b"PXR-USDC" || magic.starts_with(b"PK\x03\x04"))
}

/// Files the probe has read in this process (path, size, modification time).
static PROBED: std::sync::Mutex<Vec<(PathBuf, u64, Option<std::time::SystemTime>)>> =
    std::sync::Mutex::new(Vec::new());

fn probe(path: &Path, len: u64) -> Result<()> {
    let Some(exe) = PROBE.get() else {
        return Ok(());
    };
    if !is_binary(path) {
        return Ok(());
    }
    let key = (
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
        len,
        std::fs::metadata(path).and_then(|m| m.modified()).ok(),
    );
    if PROBED.lock().map(|p| p.contains(&key)).unwrap_or(false) {
        return Ok(());
    }
    let out = std::process::Command::new(exe)
        .arg(PROBE_ARG)
        .arg(path)
        .stdin(std::process::Stdio::null())
        .output()
        .in_file(path)?;
    match out.status.code() {
        Some(0) => {
            if let Ok(mut p) = PROBED.lock() {
                p.push(key);
            }
            Ok(())
        }
        Some(_) => {
            let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
            // The child names the file too.
            let own = format!("{}: ", path.display());
            let msg = msg.strip_prefix(&own).map(str::to_string).unwrap_or(msg);
            Err(Error::corrupt(if msg.is_empty() {
                "not a readable USD layer".into()
            } else {
                msg
            })
            .in_file(path))
        }
        None => Err(Error::corrupt(format!(
            "damaged: reading it needs far more memory than a {len}-byte file can hold"
        ))
        .in_file(path)),
    }
}

/// The child's side of [`set_probe`]: limits its address space to 4 GiB + 64 × the file's size,
/// reads every attribute of every prim (defaults and time samples) and exits 0, or prints why
/// not and exits 2.
pub fn probe_main(path: &Path) -> i32 {
    let len = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    #[cfg(unix)]
    {
        let limit = (4u64 << 30).saturating_add(len.saturating_mul(64));
        let r = libc::rlimit {
            rlim_cur: limit as libc::rlim_t,
            rlim_max: limit as libc::rlim_t,
        };
        // SAFETY: setrlimit reads the struct it is given; a failure only leaves no limit.
        unsafe {
            libc::setrlimit(libc::RLIMIT_AS, &r);
        }
    }
    let read = || -> Result<()> {
        let f = UsdFile::open_unprobed(path)?;
        f.info()?;
        for p in f.prims()? {
            let sp = usdf::path(&p.path).map_err(|e| Error::corrupt(format!("{e}")))?;
            let prim = f.stage.prim(sp);
            let attrs = guarded(path, &format!("{}: attributes", p.path), || prim.attributes())?;
            for a in attrs {
                guarded(path, &format!("{}: a value", p.path), || a.get::<usdf::Value>())?;
                guarded(path, &format!("{}: time samples", p.path), || a.time_samples())?;
            }
        }
        Ok(())
    };
    match read() {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            2
        }
    }
}

impl UsdFile {
    /// Opens and composes the stage of `path` (a binary layer first read in full by the probe,
    /// where one is set: [`set_probe`]).
    pub fn open(path: impl AsRef<Path>) -> Result<UsdFile> {
        let path = path.as_ref();
        let len = checked_len(path)?;
        probe(path, len)?;
        UsdFile::open_unprobed(path)
    }

    fn open_unprobed(path: &Path) -> Result<UsdFile> {
        checked_len(path)?;
        let path = path.to_path_buf();
        let name = path.to_string_lossy().to_string();
        let stage = guarded(&path, "not a readable USD layer", || Stage::open(&name))?;
        Ok(UsdFile { stage, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stage's metadata.
    pub fn info(&self) -> Result<StageInfo> {
        let meta = |k: &str| -> Result<Option<usdf::Value>> {
            guarded(&self.path, &format!("stage metadata {k}"), || {
                self.stage.stage_metadata(k)
            })
        };
        let up_axis = meta("upAxis")?.and_then(|v| match &v {
            usdf::Value::Token(t) => t.as_str().chars().next(),
            usdf::Value::String(s) => s.chars().next(),
            _ => None,
        });
        Ok(StageInfo {
            default_prim: self.stage.default_prim().map(|t| t.as_str().to_string()),
            meters_per_unit: meta("metersPerUnit")?.as_ref().and_then(scalar),
            up_axis,
            time_codes_per_second: meta("timeCodesPerSecond")?
                .as_ref()
                .and_then(scalar)
                .unwrap_or(24.0),
            start_time_code: meta("startTimeCode")?.as_ref().and_then(scalar),
            end_time_code: meta("endTimeCode")?.as_ref().and_then(scalar),
        })
    }

    /// Every defined, active prim, depth first.
    pub fn prims(&self) -> Result<Vec<PrimInfo>> {
        let mut paths = Vec::new();
        guarded(&self.path, "traversing the stage", || {
            self.stage
                .traverse(PrimPredicate::DEFAULT, |p| paths.push(p.clone()))
        })?;
        let mut out = Vec::with_capacity(paths.len());
        for p in paths {
            let prim = self.stage.prim(p.clone());
            let t = guarded(&self.path, &format!("{p}: its type"), || prim.type_name())?;
            out.push(PrimInfo {
                path: p.to_string(),
                type_name: t.map(|t| t.as_str().to_string()).unwrap_or_default(),
            });
        }
        Ok(out)
    }

    /// The prims of one schema type.
    pub fn prims_of(&self, type_name: &str) -> Result<Vec<String>> {
        Ok(self
            .prims()?
            .into_iter()
            .filter(|p| p.type_name == type_name)
            .map(|p| p.path)
            .collect())
    }

    pub(crate) fn value(&self, prim: &str, attr: &str, time: Option<f64>) -> Result<Option<usdf::Value>> {
        let p = usdf::path(prim).map_err(|e| Error::invalid(format!("prim path {prim:?}: {e}")))?;
        let a = self.stage.prim(p).attribute(attr);
        guarded(&self.path, &format!("{prim}.{attr}"), || match time {
            None => a.get::<usdf::Value>(),
            Some(t) => a.get_at::<usdf::Value>(TimeCode::new(t)),
        })
        .map(|v| v.filter(|v| !matches!(v, usdf::Value::ValueBlock)))
    }

    fn metadata(&self, prim: &str, attr: &str, key: &str) -> Result<Option<String>> {
        let p = usdf::path(prim).map_err(|e| Error::invalid(format!("prim path {prim:?}: {e}")))?;
        let a = self.stage.prim(p).attribute(attr);
        let v = guarded(&self.path, &format!("{prim}.{attr} {key}"), || {
            a.get_metadata::<usdf::Value>(key)
        })?;
        Ok(v.and_then(|v| match v {
            usdf::Value::Token(t) => Some(t.as_str().to_string()),
            usdf::Value::String(s) => Some(s),
            _ => None,
        }))
    }

    /// The time codes `prim.attr` is sampled at (empty: only a default value, or none).
    pub fn sample_times(&self, prim: &str, attr: &str) -> Result<Vec<f64>> {
        let p = usdf::path(prim).map_err(|e| Error::invalid(format!("prim path {prim:?}: {e}")))?;
        let a = self.stage.prim(p).attribute(attr);
        guarded(&self.path, &format!("{prim}.{attr} time samples"), || {
            a.time_sample_times()
        })
    }

    /// `prim`'s local transform at `time` from its `xformOpOrder`; the flag says whether the
    /// order starts with `!resetXformStack!` (ignore the ancestors).
    fn local(&self, prim: &str, time: Option<f64>) -> Result<(Matrix, bool)> {
        let order = match self.value(prim, "xformOpOrder", None)? {
            Some(usdf::Value::TokenVec(v)) => v.iter().map(|t| t.as_str().to_string()).collect::<Vec<_>>(),
            _ => return Ok((IDENTITY, false)),
        };
        let mut m = IDENTITY;
        let mut reset = false;
        // Ops apply first-listed outermost: M = op_n · … · op_1 (row vectors).
        for op in order.iter().rev() {
            if op == "!resetXformStack!" {
                reset = true;
                continue;
            }
            let (inverse, name) = match op.strip_prefix("!invert!") {
                Some(n) => (true, n),
                None => (false, op.as_str()),
            };
            let bad = |why: &str| Error::corrupt(format!("{prim}: {name}: {why}")).in_file(&self.path);
            let mut v = self.value(prim, name, time)?;
            if v.is_none() && time.is_some() {
                v = self.value(prim, name, None)?;
            }
            if v.is_none() && time.is_none() {
                // Only time samples: the first one stands for the default.
                if let Some(&t0) = self.sample_times(prim, name)?.first() {
                    v = self.value(prim, name, Some(t0))?;
                }
            }
            let v = v.ok_or_else(|| bad("named in xformOpOrder but has no value"))?;
            let kind = name
                .strip_prefix("xformOp:")
                .ok_or_else(|| bad("not an xformOp"))?;
            let kind = kind.split(':').next().unwrap_or(kind);
            let t = match kind {
                "transform" => match &v {
                    usdf::Value::Matrix4d(x) => {
                        let a = &x.0;
                        [0, 1, 2, 3].map(|r| [a[4 * r], a[4 * r + 1], a[4 * r + 2], a[4 * r + 3]])
                    }
                    _ => return Err(bad("not a matrix4d")),
                },
                "translate" => translate(triple(&v).ok_or_else(|| bad("not a 3-vector"))?),
                "scale" => match triple(&v) {
                    Some(s) => scale(s),
                    None => {
                        let s = scalar(&v).ok_or_else(|| bad("not a 3-vector"))?;
                        scale([s; 3])
                    }
                },
                "rotateX" | "rotateY" | "rotateZ" => {
                    let axis = (kind.as_bytes()[6] - b'X') as usize;
                    rotate(axis, scalar(&v).ok_or_else(|| bad("not an angle"))?)
                }
                "orient" => match &v {
                    usdf::Value::Quatf(q) => quat(q.w as f64, q.x as f64, q.y as f64, q.z as f64),
                    usdf::Value::Quatd(q) => quat(q.w, q.x, q.y, q.z),
                    _ => return Err(bad("not a quaternion")),
                },
                k if k.len() == 9 && k.starts_with("rotate") => {
                    // rotateXYZ etc.: angles per axis, the first letter applied first.
                    let angles = triple(&v).ok_or_else(|| bad("not three angles"))?;
                    let mut r = IDENTITY;
                    for c in k[6..].bytes() {
                        let axis = (c.wrapping_sub(b'X')) as usize;
                        if axis > 2 {
                            return Err(bad("unknown rotation order"));
                        }
                        r = mul(&r, &rotate(axis, angles[axis]));
                    }
                    r
                }
                _ => return Err(bad("this transform operation is not read by tress")),
            };
            let t = if inverse {
                invert(&t).ok_or_else(|| bad("a singular transform cannot be inverted"))?
            } else {
                t
            };
            m = mul(&m, &t);
        }
        Ok((m, reset))
    }

    /// `prim`'s local-to-world transform at `time`.
    pub fn world(&self, prim: &str, time: Option<f64>) -> Result<Matrix> {
        let mut m = IDENTITY;
        let mut at = Some(prim.to_string());
        while let Some(p) = at.take() {
            if p == "/" || p.is_empty() {
                break;
            }
            let (local, reset) = self.local(&p, time)?;
            m = mul(&m, &local);
            if reset {
                break;
            }
            at = p.rfind('/').map(|i| {
                if i == 0 {
                    "/".to_string()
                } else {
                    p[..i].to_string()
                }
            });
        }
        Ok(m)
    }

    fn points(&self, prim: &str, time: Option<f64>) -> Result<Vec<[f32; 3]>> {
        match self.value(prim, "points", time)? {
            Some(v) => decode_points(&v).ok_or_else(|| {
                Error::corrupt(format!("{prim}.points is not a point3f[]")).in_file(&self.path)
            }),
            None => Err(Error::invalid(format!(
                "{prim}: no points{}",
                time.map(|t| format!(" at time code {t}")).unwrap_or_default()
            ))
            .in_file(&self.path)),
        }
    }

    fn ints(&self, prim: &str, attr: &str) -> Result<Option<Vec<i32>>> {
        match self.value(prim, attr, None)? {
            Some(usdf::Value::IntVec(v)) => Ok(Some(v)),
            Some(_) => Err(Error::corrupt(format!("{prim}.{attr} is not an int[]")).in_file(&self.path)),
            None => Ok(None),
        }
    }

    /// World-space positions of `prim` at `time` (`None`: the default value, else the first
    /// time sample).
    pub fn world_points(&self, prim: &str, time: Option<f64>) -> Result<Vec<[f32; 3]>> {
        let time = match time {
            Some(t) => Some(t),
            None => match self.value(prim, "points", None)? {
                Some(_) => None,
                None => self.sample_times(prim, "points")?.first().copied(),
            },
        };
        let p = self.points(prim, time)?;
        self.to_world(prim, time, p)
    }

    /// Positions of `prim`'s local space in world space at `time`.
    fn to_world(&self, prim: &str, time: Option<f64>, p: Vec<[f32; 3]>) -> Result<Vec<[f32; 3]>> {
        let w = self.world(prim, time)?;
        if w == IDENTITY {
            return Ok(p);
        }
        Ok(p.into_iter().map(|q| apply(&w, q)).collect())
    }

    /// Every time sample of `prim.points`, decoded once (a binary layer decodes all of an
    /// attribute's samples together, so reading them one time code at a time would decode them
    /// all again for each frame). Holds every frame in memory, as a text layer does anyway.
    pub fn point_samples(&self, prim: &str) -> Result<PointSamples> {
        let p = usdf::path(prim).map_err(|e| Error::invalid(format!("prim path {prim:?}: {e}")))?;
        let a = self.stage.prim(p).attribute("points");
        let samples = guarded(&self.path, &format!("{prim}.points time samples"), || {
            a.time_samples()
        })?
        .unwrap_or_default();
        Ok(PointSamples {
            prim: prim.to_string(),
            samples,
        })
    }

    /// Sample `index` of `samples` in world space (the transforms at its time code).
    pub fn sample_points(&self, samples: &PointSamples, index: usize) -> Result<Vec<[f32; 3]>> {
        let prim = &samples.prim;
        let (t, v) = samples
            .samples
            .get(index)
            .ok_or_else(|| Error::invalid(format!("{prim}: no time sample {index}")).in_file(&self.path))?;
        let p = decode_points(v).ok_or_else(|| {
            Error::corrupt(format!("{prim}.points at time code {t} is not a point3f[]")).in_file(&self.path)
        })?;
        self.to_world(prim, Some(*t), p)
    }

    /// A `BasisCurves` prim as strands, in world space at `time`: vertex counts, widths
    /// (constant, uniform or vertex), `primvars:displayColor`, root UVs (`primvars:st`, uniform)
    /// and ids (`primvars:groom_id`) where authored.
    pub fn curves(&self, prim: &str, time: Option<f64>) -> Result<Strands> {
        let points = self.world_points(prim, time)?;
        self.curves_at(prim, points)
    }

    /// A `BasisCurves` prim's strands around world-space `points` already read (a time
    /// sample of [`UsdFile::point_samples`], say): topology and attributes as [`UsdFile::curves`].
    pub fn curves_at(&self, prim: &str, points: Vec<[f32; 3]>) -> Result<Strands> {
        let counts = self
            .ints(prim, "curveVertexCounts")?
            .ok_or_else(|| Error::invalid(format!("{prim}: no curveVertexCounts")).in_file(&self.path))?;
        if counts.iter().any(|&c| c < 1) {
            return Err(Error::corrupt(format!("{prim}: a curve with no vertices")).in_file(&self.path));
        }
        let counts: Vec<u32> = counts.into_iter().map(|c| c as u32).collect();
        let total: u64 = counts.iter().map(|&c| c as u64).sum();
        if total != points.len() as u64 {
            return Err(Error::corrupt(format!(
                "{prim}: curveVertexCounts add up to {total} vertices, points has {}",
                points.len()
            ))
            .in_file(&self.path));
        }
        let (n, v) = (counts.len(), points.len());
        let attr = |values: Vec<f32>, interp: Option<String>| -> Option<Attr<f32>> {
            match (values.len(), interp.as_deref()) {
                (1, _) => Some(Attr::Constant(values[0])),
                (k, Some("uniform")) if k == n => Some(Attr::PerStrand(values)),
                (k, _) if k == v => Some(Attr::PerVertex(values)),
                (k, _) if k == n => Some(Attr::PerStrand(values)),
                _ => None,
            }
        };
        let mut attrs = StrandAttrs::default();
        if let Some(usdf::Value::FloatVec(w)) = self.value(prim, "widths", None)? {
            attrs.width = attr(w, self.metadata(prim, "widths", "interpolation")?);
        }
        if let Some(usdf::Value::Vec3fVec(c)) = self.value(prim, "primvars:displayColor", None)? {
            let c: Vec<[f32; 3]> = c.iter().map(vec3).collect();
            attrs.color = match c.len() {
                1 => Some(Attr::Constant(c[0])),
                k if k == n => Some(Attr::PerStrand(c)),
                k if k == v => Some(Attr::PerVertex(c)),
                _ => None,
            };
        }
        if let Some(usdf::Value::Vec2fVec(st)) = self.value(prim, "primvars:st", None)?
            && st.len() == n
        {
            attrs.root_uv = Some(st.iter().map(|s| [s.x, s.y]).collect());
        }
        if let Some(ids) = self.ints(prim, "primvars:groom_id")?
            && ids.len() == n
        {
            attrs.id = Some(ids.into_iter().map(|i| i as u32).collect());
        }
        Strands::new(points, counts, attrs).in_file(&self.path)
    }

    /// A `Mesh` prim's faces as triangles (fans), in world space at `time`.
    pub fn mesh(&self, prim: &str, time: Option<f64>) -> Result<TriMesh> {
        let positions = self.world_points(prim, time)?;
        let counts = self.ints(prim, "faceVertexCounts")?.unwrap_or_default();
        let indices = self.ints(prim, "faceVertexIndices")?.unwrap_or_default();
        let mut triangles = Vec::new();
        let mut at = 0usize;
        for &c in &counts {
            let c = usize::try_from(c)
                .map_err(|_| Error::corrupt(format!("{prim}: a negative face size")).in_file(&self.path))?;
            let face = indices.get(at..at + c).ok_or_else(|| {
                Error::corrupt(format!(
                    "{prim}: faceVertexCounts need more indices than faceVertexIndices holds"
                ))
                .in_file(&self.path)
            })?;
            for k in 2..c {
                triangles.push([face[0] as u32, face[k - 1] as u32, face[k] as u32]);
            }
            at += c;
        }
        // Meshes authored left-handed wind the other way.
        if self.value(prim, "orientation", None)?.is_some_and(|v| match v {
            usdf::Value::Token(t) => t.as_str() == "leftHanded",
            _ => false,
        }) {
            for t in &mut triangles {
                t.swap(1, 2);
            }
        }
        let m = TriMesh { positions, triangles };
        m.validate().in_file(&self.path)?;
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A layer written by hand, its world-space values worked out by hand: the parent scales by
    /// 2 then moves by (1, 2, 3) (`xformOpOrder` lists the outermost op first), a child with
    /// `!resetXformStack!` ignores it, a pentagon is three triangles.
    #[test]
    fn hand_written_layer() {
        let dir = std::env::temp_dir().join(format!("tress-usd-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("hand.usda");
        std::fs::write(
            &path,
            r#"#usda 1.0
(
    metersPerUnit = 1
    upAxis = "Z"
    timeCodesPerSecond = 30
)

def Xform "a"
{
    double3 xformOp:translate = (1, 2, 3)
    float3 xformOp:scale = (2, 2, 2)
    uniform token[] xformOpOrder = ["xformOp:translate", "xformOp:scale"]

    def BasisCurves "c"
    {
        int[] curveVertexCounts = [2]
        point3f[] points = [(1, 0, 0), (1, 1, 0)]
        float[] widths = [0.5] (interpolation = "constant")
    }

    def Mesh "m"
    {
        uniform token[] xformOpOrder = ["!resetXformStack!"]
        int[] faceVertexCounts = [5]
        int[] faceVertexIndices = [0, 1, 2, 3, 4]
        point3f[] points = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0.5, 1.5, 0), (0, 1, 0)]
    }
}
"#,
        )
        .unwrap();
        let f = UsdFile::open(&path).unwrap();
        let info = f.info().unwrap();
        assert_eq!(info.meters_per_unit, Some(1.0));
        assert_eq!(info.up_axis, Some('Z'));
        assert_eq!(info.time_codes_per_second, 30.0);
        let types: Vec<(String, String)> = f
            .prims()
            .unwrap()
            .into_iter()
            .map(|p| (p.path, p.type_name))
            .collect();
        assert_eq!(
            types,
            [
                ("/a".to_string(), "Xform".to_string()),
                ("/a/c".into(), "BasisCurves".into()),
                ("/a/m".into(), "Mesh".into())
            ]
        );
        let s = f.curves("/a/c", None).unwrap();
        assert_eq!(s.points, [[3.0, 2.0, 3.0], [3.0, 4.0, 3.0]]);
        assert_eq!(s.counts, [2]);
        assert_eq!(s.attrs.width, Some(Attr::Constant(0.5)));
        let m = f.mesh("/a/m", None).unwrap();
        assert_eq!(
            m.positions[1],
            [1.0, 0.0, 0.0],
            "reset: the parent's transform is not applied"
        );
        assert_eq!(m.triangles, [[0, 1, 2], [0, 2, 3], [0, 3, 4]]);
        // Not USD at all: an error naming the file.
        let bad = dir.join("bad.usda");
        std::fs::write(&bad, "#usda 1.0\ndef Xform \"a\" {{{").unwrap();
        let e = UsdFile::open(&bad).err().expect("refused").to_string();
        assert!(e.contains("bad.usda"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// Rotations follow USD's convention: rotateZ by 90° takes +X to +Y (row vectors).
    #[test]
    fn rotations_and_quaternions_agree() {
        let r = rotate(2, 90.0);
        let p = apply(&r, [1.0, 0.0, 0.0]);
        assert!((p[0]).abs() < 1e-6 && (p[1] - 1.0).abs() < 1e-6, "{p:?}");
        let s = std::f64::consts::FRAC_1_SQRT_2;
        let q = quat(s, 0.0, 0.0, s);
        let p = apply(&q, [1.0, 0.0, 0.0]);
        assert!((p[0]).abs() < 1e-6 && (p[1] - 1.0).abs() < 1e-6, "{p:?}");
        let m = mul(&translate([1.0, 2.0, 3.0]), &rotate(0, 30.0));
        let back = mul(&m, &invert(&m).unwrap());
        for (i, row) in back.iter().enumerate() {
            for (j, v) in row.iter().enumerate() {
                assert!((v - if i == j { 1.0 } else { 0.0 }).abs() < 1e-12);
            }
        }
    }
}
