//! Wavefront OBJ meshes (head and body colliders), read with the `tobj` crate and triangulated.
//! All objects of the file are merged into one mesh; materials and UVs are ignored.

use std::path::Path;

use crate::error::{Error, InFile, Result};
use crate::mesh::TriMesh;

fn load_options() -> tobj::LoadOptions {
    tobj::LoadOptions {
        triangulate: true,
        single_index: false,
        ignore_points: true,
        ignore_lines: true,
    }
}

fn merge(models: Vec<tobj::Model>) -> Result<TriMesh> {
    let mut mesh = TriMesh::default();
    for m in models {
        let base = mesh.positions.len() as u64;
        let pos = &m.mesh.positions;
        mesh.positions
            .extend(pos.chunks_exact(3).map(|c| [c[0], c[1], c[2]]));
        let nv = (pos.len() / 3) as u64;
        for tri in m.mesh.indices.chunks_exact(3) {
            let mut t = [0u32; 3];
            for (k, &i) in tri.iter().enumerate() {
                if i as u64 >= nv {
                    return Err(Error::corrupt(format!(
                        "object {:?}: a face references vertex {} but there are {nv}",
                        m.name,
                        i as u64 + 1
                    )));
                }
                t[k] = u32::try_from(base + i as u64)
                    .map_err(|_| Error::unsupported("more than 4 billion vertices"))?;
            }
            mesh.triangles.push(t);
        }
    }
    mesh.validate()?;
    Ok(mesh)
}

fn tobj_error(e: tobj::LoadError) -> Error {
    Error::corrupt(format!("not a readable OBJ mesh ({e})"))
}

/// Parses an OBJ from memory (material libraries are not loaded).
pub fn parse(data: &[u8]) -> Result<TriMesh> {
    if std::str::from_utf8(data).is_err() {
        return Err(Error::corrupt("not an OBJ file: the file is not text"));
    }
    let mut reader = std::io::BufReader::new(data);
    let (models, _) = tobj::load_obj_buf(&mut reader, &load_options(), |_| {
        Err(tobj::LoadError::OpenFileFailed)
    })
    .map_err(tobj_error)?;
    merge(models)
}

/// Reads an OBJ mesh from disk.
pub fn read(path: impl AsRef<Path>) -> Result<TriMesh> {
    let path = path.as_ref();
    let data = std::fs::read(path).in_file(path)?;
    parse(&data).in_file(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quads_are_triangulated_and_objects_merged() {
        let text =
            b"o a\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\no b\nv 0 0 1\nv 1 0 1\nv 1 1 1\nf 5 6 7\n";
        let m = parse(text).unwrap();
        assert_eq!(m.positions.len(), 7);
        assert_eq!(m.triangles.len(), 3);
        assert!(m.triangles.iter().all(|t| t.iter().all(|&i| i < 7)));
    }

    #[test]
    fn bad_indices_and_binary_are_errors() {
        assert!(parse(b"v 0 0 0\nf 1 2 3\n").is_err());
        assert!(parse(&[0xff, 0xfe, 0x00, 0x01]).is_err());
    }
}
