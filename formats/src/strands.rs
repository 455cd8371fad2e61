//! The strand set every groom reader returns and every groom writer takes.
//!
//! It mirrors what the files hold (Alembic `nVertices`, the `.hair` segment array): flat points
//! plus a vertex count per strand, with optional attributes. Units and axes are the file's own;
//! conversion to tress's centimetres / Y-up happens above this crate.

use crate::error::{Error, Result};

/// An attribute that may be stored once, once per strand, or once per vertex.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr<T> {
    Constant(T),
    PerStrand(Vec<T>),
    PerVertex(Vec<T>),
}

impl<T: Copy> Attr<T> {
    /// The same attribute at the same scope with `f` applied to every value.
    pub fn map<U>(&self, f: impl Fn(T) -> U) -> Attr<U> {
        match self {
            Attr::Constant(c) => Attr::Constant(f(*c)),
            Attr::PerStrand(v) => Attr::PerStrand(v.iter().map(|x| f(*x)).collect()),
            Attr::PerVertex(v) => Attr::PerVertex(v.iter().map(|x| f(*x)).collect()),
        }
    }

    /// The stored values: one (constant), one per strand or one per vertex.
    pub fn values(&self) -> &[T] {
        match self {
            Attr::Constant(c) => std::slice::from_ref(c),
            Attr::PerStrand(v) | Attr::PerVertex(v) => v,
        }
    }

    /// The value at vertex `v` of strand `s`.
    pub fn at(&self, strand: usize, vertex: usize) -> T {
        match self {
            Attr::Constant(c) => *c,
            Attr::PerStrand(v) => v[strand],
            Attr::PerVertex(v) => v[vertex],
        }
    }

    /// Expands to one value per vertex.
    pub fn per_vertex(&self, counts: &[u32]) -> Vec<T> {
        match self {
            Attr::PerVertex(v) => v.clone(),
            _ => {
                let mut out = Vec::with_capacity(counts.iter().map(|&c| c as usize).sum());
                for (s, &c) in counts.iter().enumerate() {
                    let value = self.at(s, 0);
                    out.extend(std::iter::repeat_n(value, c as usize));
                }
                out
            }
        }
    }

    /// "constant", "per strand" or "per vertex".
    pub fn scope(&self) -> &'static str {
        match self {
            Attr::Constant(_) => "constant",
            Attr::PerStrand(_) => "per strand",
            Attr::PerVertex(_) => "per vertex",
        }
    }

    /// Number of stored values (1 for a constant).
    pub fn len(&self) -> usize {
        match self {
            Attr::Constant(_) => 1,
            Attr::PerStrand(v) | Attr::PerVertex(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Checks the stored length against the strand and vertex counts.
    pub fn check(&self, name: &str, strands: usize, vertices: usize) -> Result<()> {
        let (want, scope) = match self {
            Attr::Constant(_) => return Ok(()),
            Attr::PerStrand(v) => (strands, v.len()),
            Attr::PerVertex(v) => (vertices, v.len()),
        };
        if want != scope {
            return Err(Error::invalid(format!(
                "attribute {name} has {scope} values but {want} are needed"
            )));
        }
        Ok(())
    }
}

/// Optional strand attributes, named as tress uses them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StrandAttrs {
    /// Strand diameter in scene units (`.hair` thickness, Alembic `width`, PLY `thickness`).
    pub width: Option<Attr<f32>>,
    /// 0 = opaque, 1 = invisible (the `.hair` convention).
    pub transparency: Option<Attr<f32>>,
    /// Linear RGB in 0..1.
    pub color: Option<Attr<[f32; 3]>>,
    /// Root coordinates on the scalp (000 App. A), one per strand.
    pub root_uv: Option<Vec<[f32; 2]>>,
    /// Stable strand ids (Unreal `groom_id`), one per strand.
    pub id: Option<Vec<u32>>,
    /// Guide flag (Unreal `groom_guide`), one per strand.
    pub guide: Option<Vec<bool>>,
}

impl StrandAttrs {
    /// Checks every attribute's length against `strands` strands holding `vertices` points.
    pub fn check(&self, strands: usize, vertices: usize) -> Result<()> {
        if let Some(w) = &self.width {
            w.check("width", strands, vertices)?;
        }
        if let Some(t) = &self.transparency {
            t.check("transparency", strands, vertices)?;
        }
        if let Some(c) = &self.color {
            c.check("color", strands, vertices)?;
        }
        for (name, len) in [
            ("root_uv", self.root_uv.as_ref().map(Vec::len)),
            ("id", self.id.as_ref().map(Vec::len)),
            ("guide", self.guide.as_ref().map(Vec::len)),
        ] {
            if let Some(len) = len
                && len != strands
            {
                return Err(Error::invalid(format!(
                    "attribute {name} has {len} values but there are {strands} strands"
                )));
            }
        }
        Ok(())
    }

    /// The attributes of the strands listed in `chosen` (in that order); `offsets` are the
    /// source groom's strand offsets (`n + 1` entries).
    pub fn subset(&self, chosen: &[usize], offsets: &[usize]) -> StrandAttrs {
        fn attr<T: Copy>(a: &Attr<T>, chosen: &[usize], offsets: &[usize]) -> Attr<T> {
            match a {
                Attr::Constant(c) => Attr::Constant(*c),
                Attr::PerStrand(v) => Attr::PerStrand(chosen.iter().map(|&i| v[i]).collect()),
                Attr::PerVertex(v) => Attr::PerVertex(
                    chosen
                        .iter()
                        .flat_map(|&i| v[offsets[i]..offsets[i + 1]].iter().copied())
                        .collect(),
                ),
            }
        }
        fn each<T: Copy>(v: &[T], chosen: &[usize]) -> Vec<T> {
            chosen.iter().map(|&i| v[i]).collect()
        }
        StrandAttrs {
            width: self.width.as_ref().map(|a| attr(a, chosen, offsets)),
            transparency: self.transparency.as_ref().map(|a| attr(a, chosen, offsets)),
            color: self.color.as_ref().map(|a| attr(a, chosen, offsets)),
            root_uv: self.root_uv.as_deref().map(|v| each(v, chosen)),
            id: self.id.as_deref().map(|v| each(v, chosen)),
            guide: self.guide.as_deref().map(|v| each(v, chosen)),
        }
    }

    /// The attributes present and their scope ("constant", "per strand", "per vertex").
    pub fn present(&self) -> Vec<(&'static str, &'static str)> {
        let mut out = Vec::new();
        if let Some(a) = &self.width {
            out.push(("width", a.scope()));
        }
        if let Some(a) = &self.transparency {
            out.push(("transparency", a.scope()));
        }
        if let Some(a) = &self.color {
            out.push(("color", a.scope()));
        }
        for (name, present) in [
            ("root_uv", self.root_uv.is_some()),
            ("id", self.id.is_some()),
            ("guide", self.guide.is_some()),
        ] {
            if present {
                out.push((name, "per strand"));
            }
        }
        out
    }
}

/// Offset of the first point of each strand of `counts` points, plus the total at the end
/// (`n + 1` entries).
pub fn offsets_of(counts: &[u32]) -> Vec<usize> {
    let mut out = Vec::with_capacity(counts.len() + 1);
    let mut acc = 0usize;
    out.push(0);
    for &c in counts {
        acc += c as usize;
        out.push(acc);
    }
    out
}

/// Curves as stored in a file: flat points, vertex count per strand, optional attributes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Strands {
    pub points: Vec<[f32; 3]>,
    pub counts: Vec<u32>,
    pub attrs: StrandAttrs,
}

impl Strands {
    /// Builds a strand set and checks that counts and attributes agree with the points.
    pub fn new(points: Vec<[f32; 3]>, counts: Vec<u32>, attrs: StrandAttrs) -> Result<Self> {
        let s = Strands {
            points,
            counts,
            attrs,
        };
        s.validate()?;
        Ok(s)
    }

    pub fn strand_count(&self) -> usize {
        self.counts.len()
    }

    pub fn point_count(&self) -> usize {
        self.points.len()
    }

    /// Checks vertex counts and attribute lengths.
    pub fn validate(&self) -> Result<()> {
        let total: u64 = self.counts.iter().map(|&c| c as u64).sum();
        if total != self.points.len() as u64 {
            return Err(Error::invalid(format!(
                "strand vertex counts add up to {total} but there are {} points",
                self.points.len()
            )));
        }
        self.attrs.check(self.counts.len(), self.points.len())
    }

    /// Offset of each strand's first point, plus the total at the end (`n + 1` entries).
    pub fn offsets(&self) -> Vec<usize> {
        offsets_of(&self.counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_must_cover_points() {
        let e = Strands::new(vec![[0.0; 3]; 5], vec![2, 2], StrandAttrs::default()).unwrap_err();
        assert!(e.to_string().contains("add up to 4 but there are 5"));
    }

    #[test]
    fn attribute_scope_is_checked() {
        let attrs = StrandAttrs {
            width: Some(Attr::PerVertex(vec![1.0; 3])),
            ..Default::default()
        };
        assert!(Strands::new(vec![[0.0; 3]; 4], vec![2, 2], attrs).is_err());
    }

    #[test]
    fn per_vertex_expansion() {
        let a = Attr::PerStrand(vec![1.0f32, 2.0]);
        assert_eq!(a.per_vertex(&[2, 3]), vec![1.0, 1.0, 2.0, 2.0, 2.0]);
        assert_eq!(Attr::Constant(7u8).per_vertex(&[1, 1]), vec![7, 7]);
    }
}
