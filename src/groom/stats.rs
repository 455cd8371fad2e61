//! Summary statistics of a groom, as `tress inspect` prints them.

use serde::Serialize;

use super::model::Groom;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MinMeanMax {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
}

impl MinMeanMax {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Self> {
        let (mut min, mut max, mut sum, mut n) = (f64::INFINITY, f64::NEG_INFINITY, 0.0, 0usize);
        for v in values {
            min = min.min(v);
            max = max.max(v);
            sum += v;
            n += 1;
        }
        (n > 0).then(|| MinMeanMax {
            min,
            mean: sum / n as f64,
            max,
        })
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct GroomStats {
    pub strand_count: usize,
    pub point_count: usize,
    pub points_per_strand: Option<MinMeanMax>,
    pub length: Option<MinMeanMax>,
    pub bounds: Option<[[f32; 3]; 2]>,
    pub attributes: Vec<String>,
}

impl GroomStats {
    pub fn of(groom: &Groom) -> Self {
        let b = groom.bounds();
        let attributes = groom
            .attrs
            .present()
            .into_iter()
            .map(|(name, scope)| format!("{name} ({scope})"))
            .collect();
        GroomStats {
            strand_count: groom.strand_count(),
            point_count: groom.point_count(),
            points_per_strand: MinMeanMax::of(groom.counts().iter().map(|&c| c as f64)),
            length: MinMeanMax::of(groom.lengths().into_iter().map(|l| l as f64)),
            bounds: (!b.is_empty()).then(|| [b.min.to_array(), b.max.to_array()]),
            attributes,
        }
    }
}
