//! The scored rows of a job: each `[guides] methods` entry (`ID` or `ID+CORRECTION`), the
//! hair-mesh and drape rows their sections add, and 000 Table 1's ablation rows (the neural
//! interpolator without its fine-scale displacement, and trained without some loss terms).

use serde::Serialize;

use super::methods::{GuideSpec, NeuralSpec};
use crate::error::{Error, Result};
use crate::neural::interp::InterpConfig;
use crate::upsample::Method;

/// One scored row: a method with the collision correction applied to it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct MethodRow {
    /// As the job wrote it (unique; names the row's files).
    pub key: String,
    pub method: Method,
    /// Guides simulated with two-way collision correction (001 §5).
    pub two_way: bool,
    /// Position-based correction of the upsampled strands.
    pub projection: bool,
    /// The upsampled strands pushed out of the props alone (`guides::project::push_out_of_props`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub contact: bool,
    /// The projection that spreads a push's length change along the strand
    /// (`guides::project::spread_out`), instead of `projection`'s.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub spread: bool,
    /// The neural interpolator without its fine-scale displacement (000 Table 1's ablation row,
    /// added when the model has a displacement generator).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_displacement: bool,
    /// The neural interpolator trained without some loss terms (000 Table 1's ablation rows,
    /// `[neural] ablations`): its own W_θ, without a displacement generator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss: Option<crate::neural::interp::loss::LossAblation>,
}

impl MethodRow {
    /// The corrections applied, each as (id, what reports call it): two-way, projection, contact,
    /// spread.
    fn corrections(&self) -> impl Iterator<Item = (&'static str, &'static str)> {
        [
            (self.two_way, "two_way", " + two-way correction"),
            (self.projection, "projection", " + collision projection"),
            (self.contact, "contact", " + prop contact"),
            (self.spread, "spread", " + spread projection"),
        ]
        .into_iter()
        .filter_map(|(on, id, what)| on.then_some((id, what)))
    }

    /// `two_way`, `projection`, `contact`, `spread`, those joined by `+` (`two_way+contact`), or
    /// `none`.
    pub fn correction(&self) -> String {
        let ids: Vec<&str> = self.corrections().map(|(id, _)| id).collect();
        if ids.is_empty() {
            "none".into()
        } else {
            ids.join("+")
        }
    }

    /// The row's files' stem (`parts/<stem>.A-B.tcache`).
    pub fn stem(&self) -> String {
        self.key.replace(['+', '~'], "_")
    }

    /// What reports call it.
    pub fn name(&self, guides: usize) -> String {
        let correction: String = self.corrections().map(|(_, what)| what).collect();
        let what = match self.method {
            Method::Idw => "IDW",
            Method::Nearest => "nearest guide",
            Method::Static => "static skinning",
            Method::Adaptive => "adaptive skinning",
            Method::Neural if self.loss.is_some() => {
                return format!(
                    "{guides} guides + neural interpolation, {} (w/o displacement){correction}",
                    self.loss.expect("some").describe()
                );
            }
            Method::Neural if self.no_displacement => "neural interpolation w/o fine-scale displacement",
            Method::Neural => "neural interpolation",
            Method::Hairmesh => return format!("hair-mesh simulation{correction}"),
            Method::Drape => return format!("quasi-static drape{correction}"),
        };
        format!("{guides} guides + {what}{correction}")
    }
}

/// The scored rows of `[guides] methods`.
pub fn parse_rows(g: &GuideSpec, origin: &str) -> Result<Vec<MethodRow>> {
    if g.methods.is_empty() {
        return Err(Error::Invalid(format!(
            "{origin}: guides.methods is empty: name at least one method"
        )));
    }
    let mut rows: Vec<MethodRow> = Vec::new();
    for entry in &g.methods {
        let (id, correction) = match entry.split_once('+') {
            Some((a, b)) => (a.trim(), Some(b.trim())),
            None => (entry.trim(), None),
        };
        if id == "trajectory" {
            return Err(Error::Invalid(format!(
                "{origin}: guides.methods: `trajectory` is trained across a batch's items, not run in one job: add [batch.trajectory] (with [batch.experiments] or batch.motions)"
            )));
        }
        let method: Method = id
            .parse()
            .map_err(|e| Error::Invalid(format!("{origin}: guides.methods: {e}")))?;
        let (mut two_way, mut projection, mut contact, mut spread) = (false, false, false, false);
        match correction {
            None => (two_way, projection) = (g.two_way && method == Method::Adaptive, g.resolve_collisions),
            Some("none") => {}
            Some(list) => {
                for part in list.split('+').map(str::trim) {
                    let flag = match part {
                        "two_way" => &mut two_way,
                        "projection" => &mut projection,
                        "contact" => &mut contact,
                        "spread" => &mut spread,
                        other => {
                            return Err(Error::Invalid(format!(
                                "{origin}: guides.methods {entry:?}: unknown correction {other:?} (two_way, projection, contact, spread, joined by `+`; or none)"
                            )));
                        }
                    };
                    if *flag {
                        return Err(Error::Invalid(format!(
                            "{origin}: guides.methods {entry:?}: {part:?} is named twice"
                        )));
                    }
                    *flag = true;
                }
            }
        }
        if projection && spread {
            return Err(Error::Invalid(format!(
                "{origin}: guides.methods {entry:?}: `projection` and `spread` are two ways of the same clean-up: name one"
            )));
        }
        if two_way && !method.needs_skinning() {
            return Err(Error::Invalid(format!(
                "{origin}: guides.methods {entry:?}: two-way correction works through fitted skinning (static, adaptive)"
            )));
        }
        if rows.iter().any(|r| r.key == *entry) {
            return Err(Error::Invalid(format!(
                "{origin}: guides.methods lists {entry:?} twice"
            )));
        }
        rows.push(MethodRow {
            key: entry.clone(),
            method,
            two_way,
            projection,
            contact,
            spread,
            no_displacement: false,
            loss: None,
        });
    }
    Ok(rows)
}

/// A row of `method` the job's section adds (`[hairmesh] enabled`, `[drape] enabled`) unless
/// `guides.methods` lists it, with the job's default correction.
pub fn add_section_row(rows: &mut Vec<MethodRow>, method: Method, guides: &GuideSpec) {
    if !rows.iter().any(|r| r.method == method) {
        rows.push(MethodRow {
            key: method.id().into(),
            method,
            two_way: false,
            projection: guides.resolve_collisions,
            contact: false,
            spread: false,
            no_displacement: false,
            loss: None,
        });
    }
}

/// 000 Table 1's ablation rows: "w/o fine-scale displacement" (the same model without its
/// generator) for every neural row when the config has a generator, and one row per loss
/// ablation after the first neural row.
pub fn add_ablation_rows(
    rows: &mut Vec<MethodRow>,
    neural: &NeuralSpec,
    config: Option<&InterpConfig>,
    origin: &str,
) -> Result<()> {
    if config.is_some_and(|c| c.displace.is_some()) {
        let ablations: Vec<MethodRow> = rows
            .iter()
            .filter(|r| r.method == Method::Neural && !r.no_displacement)
            .map(|r| MethodRow {
                key: format!("{}~no_displacement", r.key),
                no_displacement: true,
                ..r.clone()
            })
            .collect();
        rows.extend(ablations);
    }
    let Some(c) = config else {
        if !neural.ablations.is_empty() {
            return Err(Error::Invalid(format!(
                "{origin}: neural.ablations needs the neural method in guides.methods"
            )));
        }
        return Ok(());
    };
    let mut seen = Vec::new();
    for &a in &neural.ablations {
        if seen.contains(&a) {
            return Err(Error::Invalid(format!(
                "{origin}: neural.ablations lists {} twice",
                a.id()
            )));
        }
        seen.push(a);
        if a.apply(&c.loss).is_none() {
            return Err(Error::Invalid(format!(
                "{origin}: neural.ablations: {}: the config ({}) already trains without it",
                a.id(),
                neural.config
            )));
        }
    }
    if let Some(first) = rows
        .iter()
        .find(|r| r.method == Method::Neural && !r.no_displacement)
        .cloned()
    {
        rows.extend(neural.ablations.iter().map(|&a| MethodRow {
            key: format!("{}~{}", first.key, a.id()),
            no_displacement: false,
            loss: Some(a),
            ..first.clone()
        }));
    }
    Ok(())
}
