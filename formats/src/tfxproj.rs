//! TressFX 3.x project files (`.tfxproj`): the list of `.tfx` parts making up one groom, and
//! the collision spheres / capsules of the character, in the same frame as the hair.
//!
//! Line based: `#` in column 0 starts a comment; the first token selects the meaning. A hair
//! part line is `<part>.tfx <follow hairs> <follow radius> <tip separation> <part>.tfxsim [name]`;
//! `collision_sphere cx cy cz r`; `collision_capsule x0 y0 z0 x1 y1 z1 r`. Other settings
//! (rendering, shape matching) are kept as raw key/value pairs.

use std::path::{Path, PathBuf};

use crate::error::{Error, InFile, Result};

#[derive(Clone, Debug, PartialEq)]
pub struct TfxProject {
    /// Hair part files, relative to the project's folder, in load order.
    pub parts: Vec<PathBuf>,
    pub spheres: Vec<([f32; 3], f32)>,
    pub capsules: Vec<([f32; 3], [f32; 3], f32)>,
    pub settings: Vec<(String, String)>,
}

fn floats<const N: usize>(tokens: &[&str], line: usize) -> Result<[f32; N]> {
    if tokens.len() < N {
        return Err(Error::corrupt(format!("line {line}: expected {N} numbers")));
    }
    let mut out = [0.0; N];
    for (o, t) in out.iter_mut().zip(tokens) {
        *o = t
            .parse()
            .map_err(|_| Error::corrupt(format!("line {line}: {t:?} is not a number")))?;
    }
    Ok(out)
}

pub fn parse(data: &[u8]) -> Result<TfxProject> {
    let text =
        std::str::from_utf8(data).map_err(|_| Error::corrupt("not a .tfxproj: the file is not text"))?;
    let mut p = TfxProject {
        parts: Vec::new(),
        spheres: Vec::new(),
        capsules: Vec::new(),
        settings: Vec::new(),
    };
    for (i, raw) in text.lines().enumerate() {
        if raw.starts_with('#') {
            continue;
        }
        let tokens: Vec<&str> = raw.split_ascii_whitespace().collect();
        let Some((&key, rest)) = tokens.split_first() else {
            continue;
        };
        let line = i + 1;
        if key.to_ascii_lowercase().ends_with(".tfx") {
            if key.contains("..") || Path::new(key).is_absolute() {
                return Err(Error::corrupt(format!(
                    "line {line}: part {key:?} must be a file beside the project"
                )));
            }
            p.parts.push(PathBuf::from(key));
        } else if key == "collision_sphere" {
            let [x, y, z, r] = floats::<4>(rest, line)?;
            p.spheres.push(([x, y, z], r));
        } else if key == "collision_capsule" {
            let [x0, y0, z0, x1, y1, z1, r] = floats::<7>(rest, line)?;
            p.capsules.push(([x0, y0, z0], [x1, y1, z1], r));
        } else {
            p.settings.push((key.to_string(), rest.join(" ")));
        }
    }
    if p.parts.is_empty() {
        return Err(Error::corrupt("the project lists no .tfx hair parts"));
    }
    Ok(p)
}

pub fn read(path: impl AsRef<Path>) -> Result<TfxProject> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_and_spheres() {
        let t = b"# comment\nversion 3.0\nfront.tfx 4 0.4 5.0 front.tfxsim front\nback.tfx 4 0.4 5.0 back.tfxsim\ncollision_sphere -0.095 92.0 9.899 26.5\n";
        let p = parse(t).unwrap();
        assert_eq!(
            p.parts,
            vec![PathBuf::from("front.tfx"), PathBuf::from("back.tfx")]
        );
        assert_eq!(p.spheres, vec![([-0.095, 92.0, 9.899], 26.5)]);
        assert!(parse(b"version 3.0\n").is_err());
        assert!(parse(b"../x.tfx 1 1 1 x\n").is_err());
    }
}
